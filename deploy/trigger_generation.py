#!/usr/bin/env python3
"""Start a generation run in a running ``tracemill serve`` and wait for its outcome.

What a Kubernetes CronJob (or a systemd timer, or cron) runs when the store is a DuckDB
file: the service holds the file (DuckDB lets one process write it), so a separate
``tracemill generate`` would meet the lock. This asks the service's admin API instead
(``POST /api/v1/runs``, then ``GET /api/v1/jobs/{id}`` until the run ends), so the run
happens in the service, against the store it holds, with the model keys it was given.
The image installs it as ``tracemill-trigger-generation``.

    TRACEMILL_API_ADDRESS=tracemill:4319 TRACEMILL_ADMIN_TOKEN=... \\
        tracemill-trigger-generation --budget 200

Settings as the CLI reads them: ``TRACEMILL_API_ADDRESS`` (default 127.0.0.1:4319) and
``TRACEMILL_ADMIN_TOKEN``. The admin API speaks plain HTTP: keep it on a network you
control (the Kubernetes files add a NetworkPolicy that admits only the CronJob's pods).

Exit codes:

==  =====================================================================================
0   the run finished (or, with ``--no-wait``, the service accepted it)
1   it failed or was stopped (its error on stderr), or the service lost track of it
    (restarted: the unfinished run resumes with the next one)
2   bad arguments
3   nothing was started: the service did not answer, refused the token, or already runs
    a generation (so two runs never overlap; the Job shows it). Safe to retry.
4   the run was started (a job id was given) but the service stopped answering while it
    was followed (:data:`MISSED_POLLS` polls in a row: asking again is safe, starting
    again is not). The run may well go on in the service: NOT safe to retry, a second
    ``POST /runs`` would start a second run and spend the budget twice. Look at
    ``GET /api/v1/jobs/{id}`` (the job id is on stdout) or the service's log.
==  =====================================================================================

The Kubernetes CronJob retries only 3 (its ``podFailurePolicy`` fails the Job at once on
1, 2 and 4).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
from typing import Any

DEFAULT_API = "127.0.0.1:4319"
EXIT_FAILED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_LOST_CONTACT = 1, 2, 3, 4
_ENDED = {"finished": 0, "failed": EXIT_FAILED, "stopped": EXIT_FAILED}
MISSED_POLLS = 5
"""Polls in a row the service may leave unanswered before the follower gives up."""


class Unavailable(Exception):
    """The service did not answer as an admin API should."""


class Api:
    """The service's admin API at ``address`` (host:port), with the admin token."""

    def __init__(self, address: str, token: str | None, timeout: float) -> None:
        host, sep, port = address.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{address!r} is not host:port (for example tracemill:4319); "
                             "set TRACEMILL_API_ADDRESS or --api-address")
        self.host, self.port = host.strip("[]"), int(port)
        self.address = address
        self.headers = {"content-type": "application/json"}
        if token:
            self.headers["authorization"] = f"Bearer {token}"
        self.timeout = timeout

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(status, decoded JSON answer) of ``method /api/v1{path}``."""
        url = f"http://{self.address}/api/v1{path}"
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            payload = None if body is None else json.dumps(body)
            connection.request(method, f"/api/v1{path}", body=payload, headers=self.headers)
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise Unavailable(f"{url} did not answer: {exc or type(exc).__name__}; is the "
                              "service running, with --api-address (TRACEMILL_API_ADDRESS) "
                              "reachable from here?") from None
        finally:
            connection.close()
        if response.status == 401:
            raise Unavailable(f"{url} refused the admin token: set TRACEMILL_ADMIN_TOKEN to "
                              "the service's")
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            raise Unavailable(f"{url} answered HTTP {response.status} with something other "
                              f"than JSON ({raw[:200]!r}): is this tracemill's admin API?"
                              ) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracemill-trigger-generation",
        description="Start a generation run in the running tracemill service and wait "
                    "until it ends; the exit code says how it ended.")
    parser.add_argument("--budget", metavar="BUDGET",
                        help="200 (rollouts), '50k tokens' or '$5' (default: the service's "
                             "generate_budget, else its budget).")
    parser.add_argument("--api-address", metavar="HOST:PORT",
                        help="The service's admin API (default: TRACEMILL_API_ADDRESS, else "
                             f"{DEFAULT_API}).")
    parser.add_argument("--poll", type=float, default=10.0, metavar="SECONDS",
                        help="How often to ask for progress (default 10).")
    parser.add_argument("--no-wait", dest="wait", action="store_false",
                        help="Return once the service accepted the run.")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="Timeout of one request to the API (default 30).")
    return parser


def _detail(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("error") or body.get("detail") or body)
    return str(body)


def run(args: argparse.Namespace, api: Api) -> int:
    """Start the run and follow it; returns the exit code."""
    status, job = api.call("POST", "/runs", {"budget": args.budget})
    if status == 409:
        print(f"tracemill-trigger-generation: not started: {_detail(job)}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if status != 202 or not isinstance(job, dict) or "job_id" not in job:
        print(f"tracemill-trigger-generation: error: the service refused the run (HTTP "
              f"{status}): {_detail(job)}", file=sys.stderr)
        return EXIT_USAGE if status in (400, 422) else EXIT_UNAVAILABLE
    job_id = job["job_id"]
    print(f"started job {job_id} (budget {job.get('budget')})", flush=True)
    if not args.wait:
        return 0
    try:
        return _follow(args, api, job_id, job)
    except Unavailable as exc:  # the run exists: a retry would start a second one
        print(f"tracemill-trigger-generation: error: lost contact with the service while "
              f"following job {job_id}, which it had started: {exc}. Not retrying (that "
              f"would start a second run); check GET /api/v1/jobs/{job_id}",
              file=sys.stderr)
        return EXIT_LOST_CONTACT


def _follow(args: argparse.Namespace, api: Api, job_id: str, job: dict[str, Any]) -> int:
    """Follow a started job until it ends; returns the exit code."""
    last = None
    missed = 0
    while job.get("state") not in _ENDED:
        time.sleep(args.poll)
        try:
            status, answer = api.call("GET", f"/jobs/{job_id}")
            if status != 404 and (status != 200 or not isinstance(answer, dict)):
                raise Unavailable(f"GET /api/v1/jobs/{job_id} answered HTTP {status}: "
                                  f"{_detail(answer)}")
        except Unavailable as exc:
            missed += 1
            if missed >= MISSED_POLLS:
                raise
            print(f"job {job_id}: no answer ({missed} of {MISSED_POLLS}): {exc}",
                  file=sys.stderr, flush=True)
            continue
        missed = 0
        job = answer
        if status == 404:
            print(f"tracemill-trigger-generation: error: the service no longer knows job "
                  f"{job_id} (it restarted?); the unfinished run is resumed by the next "
                  "trigger or `tracemill generate`", file=sys.stderr)
            return EXIT_FAILED
        progress = (job.get("state"), job.get("run_id"), job.get("rollouts"),
                    job.get("finished"))
        if progress != last:
            print(f"job {job_id}: {progress[0]}, run {progress[1]}, {progress[2]} rollouts "
                  f"stored, {progress[3]} finished", flush=True)
            last = progress
    code = _ENDED[job["state"]]
    if code:
        print(f"tracemill-trigger-generation: error: run {job.get('run_id')} "
              f"{job['state']}: {job.get('error')}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Parse, start, follow; returns the exit code."""
    env = os.environ if environ is None else environ
    args = _parser().parse_args(argv)
    address = args.api_address or env.get("TRACEMILL_API_ADDRESS") or DEFAULT_API
    try:
        api = Api(address, env.get("TRACEMILL_ADMIN_TOKEN"), args.timeout)
    except ValueError as exc:
        print(f"tracemill-trigger-generation: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run(args, api)
    except Unavailable as exc:
        print(f"tracemill-trigger-generation: error: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE


if __name__ == "__main__":
    sys.exit(main())
