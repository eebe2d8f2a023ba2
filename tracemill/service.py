"""``tracemill serve``: one long-running service over one store.

It composes the components, so it lives in the core rather than in one of them: the
collector's receivers (:class:`collector.server.Collector`), the admin API on its own
port (:mod:`tracemill.api`), and the scheduler of map refreshes and generation runs
(:class:`generator.schedule.ServiceJobs`). Once listening it writes the service file
beside the store (:mod:`tracemill.service_info`) through which commands find it, and
removes it on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracemill.config import Settings
from tracemill.preflight import require_port_free
from tracemill.service_info import (
    ServiceInfo,
    info_path,
    remove_service_info,
    write_service_info,
)

__all__ = ["add_commands"]

Options = Callable[[argparse.ArgumentParser], None]

_STORED_FIRST_S = 30.0
"""Longest a processing pass waits for acknowledged requests to be stored as rows."""


def add_commands(commands: Any, common: Options) -> None:
    """Add ``serve`` to the subcommand parsers."""
    serve = commands.add_parser(
        "serve", help="Run the OTLP collector (gRPC :4317, HTTP :4318), the admin API "
                      "(:4319) and scheduled jobs until SIGTERM.",
        description="Receive OTLP traces and logs over gRPC and HTTP and store them. "
                    "Set TRACEMILL_AUTH_TOKEN (or auth_token in the config file) to require "
                    "a bearer token. Also serves the admin API (/api/v1, its own token "
                    "TRACEMILL_ADMIN_TOKEN) and runs scheduled generation (--generate-cron) "
                    "and map refreshes (--process-every). While it runs, other tracemill "
                    "commands on the same --db go through its admin API (found through "
                    "STORE.serve.json beside the store). Every setting of `tracemill.toml` "
                    "and its TRACEMILL_* variable is listed in the README. Exit codes: 0 "
                    "stopped cleanly, 2 bad settings, 3 a port is taken or the store is "
                    "locked.")
    common(serve)
    add = serve.add_argument
    add("--grpc-address", metavar="HOST:PORT",
        help="OTLP/gRPC listen address (default 127.0.0.1:4317; port 0 = any free; env "
             "TRACEMILL_GRPC_ADDRESS).")
    add("--http-address", metavar="HOST:PORT",
        help="OTLP/HTTP, /healthz, /readyz, /metrics and /stats listen address (default "
             "127.0.0.1:4318; port 0 = any free; env TRACEMILL_HTTP_ADDRESS).")
    add("--tls-cert", type=Path, metavar="PEM",
        help="Certificate chain for TLS on both OTLP ports (with --tls-key).")
    add("--tls-key", type=Path, metavar="PEM", help="Private key for --tls-cert.")
    add("--insecure-listen", action="store_const", const=True,
        help="Listen beyond loopback without a token or TLS (refused otherwise; env "
             "TRACEMILL_INSECURE_LISTEN).")
    add("--max-message-bytes", type=int, metavar="N",
        help="Largest export request accepted, after decompression (default 67108864 = "
             "64 MiB).")
    add("--max-queue-bytes", type=int, metavar="N",
        help="Request bytes that may wait for commit before clients are told to retry "
             "(default 268435456 = 256 MiB).")
    add("--decode-workers", type=int, metavar="N",
        help="Processes decoding spooled requests in parallel (default 0: a thread of the "
             "collector process; raise it on machines with more than 2 cores).")
    add("--process-every", dest="process_every_seconds", type=float, metavar="SECONDS",
        help="Also rebuild conversations and the failure map this often (default 0: only "
             "when a command or the API asks).")
    add("--api-address", metavar="HOST:PORT",
        help="Admin HTTP API (/api/v1, OpenAPI at /api/v1/openapi.json) listen address "
             "(default: 127.0.0.1 and the port after --http-address's; beyond loopback it "
             "needs TRACEMILL_ADMIN_TOKEN).")
    add("--generate-cron", metavar="CRON",
        help="Run generation on this cron schedule in UTC, e.g. '0 2 * * *' (needs --agent "
             "or agent in the config; env TRACEMILL_GENERATE_CRON; default off).")
    add("--generate-budget", metavar="BUDGET",
        help="Budget of each scheduled run (default: the budget setting).")
    add("--agent", metavar="SPEC",
        help="Agent under test for scheduled and API-started runs (as `generate --agent`).")
    add("--ready-file", type=Path, metavar="PATH",
        help="Once listening, write {pid, grpc, http, api} as JSON to this file.")
    serve.set_defaults(handler=serve_command)


def serve_command(args: argparse.Namespace, settings: Settings) -> int:
    """Run the service until SIGTERM or SIGINT; returns the exit code."""
    from collector.server import Collector, check_exposure, run_forever
    from generator.schedule import ServiceJobs
    from tracemill.api import ApiServer, build_app, check_api_exposure
    from tracemill.page import PAGE_PATH
    from tracemill.store import open_configured

    check_exposure(settings)
    check_api_exposure(settings)
    if settings.generate_cron:
        from generator.commands import run_config

        run_config(settings)  # a schedule that could never run is refused now, not at 2 am
    require_port_free(settings.grpc_address, "OTLP/gRPC", "--grpc-address")
    require_port_free(settings.http_address, "OTLP/HTTP", "--http-address")
    require_port_free(settings.api_address, "the admin API", "--api-address")
    store = open_configured(settings, store_spool=False)  # the collector stores its spool
    jobs = ServiceJobs(settings, store, args.environ)
    try:
        api = ApiServer(settings, build_app(settings, store, jobs))
        # the map is read through the admin API (token, redaction); the ingestion port
        # answers only OTLP, health, metrics and /stats
        collector = Collector(settings, store)
    except BaseException:
        store.close()
        raise
    jobs.stored_first = lambda: _stored_first(collector)
    # the collector writes {pid, grpc, http} once bound; the user's ready file and the
    # service file beside the store get the API address too
    bound = info_path(settings.db).with_name(info_path(settings.db).name + ".collector")
    bound.unlink(missing_ok=True)  # left by a service that was killed
    threading.Thread(target=_announce, args=(bound, args.ready_file, settings, api.address),
                     name="tracemill-ready", daemon=True).start()
    api.start()
    jobs.start()
    print(f"tracemill admin API: http://{api.address}/api/v1 (OpenAPI document at "
          "/api/v1/openapi.json)", flush=True)
    print(f"tracemill page: open http://{api.address}{PAGE_PATH} in a browser (the failure "
          "map, versions, runs, reports)", flush=True)
    try:
        asyncio.run(run_forever(collector, bound))
    finally:
        jobs.shutdown()
        api.stop()
        remove_service_info(settings.db, os.getpid())
        bound.unlink(missing_ok=True)
        store.close()
    return 0


def _stored_first(collector: Any) -> bool:
    """Wait until what was acknowledged is stored; at once False when the store writer is
    failing or dead (processing then reads what is stored, and says so)."""
    materializer = collector.pipeline.materializer
    if materializer.failing is not None or materializer.dead:
        return False
    return bool(collector.pipeline.flush(timeout=_STORED_FIRST_S))


def _announce(source: Path, ready_file: Path | None, settings: Settings,
              api_address: str) -> None:
    while not source.exists():
        time.sleep(0.02)
    info = json.loads(source.read_text())
    source.unlink(missing_ok=True)
    write_service_info(settings.db, ServiceInfo(
        pid=int(info["pid"]), grpc=info["grpc"], http=info["http"], api=api_address,
        tls=settings.tls_cert is not None))
    if ready_file is not None:
        temporary = ready_file.with_name(ready_file.name + ".tmp")
        temporary.write_text(json.dumps({**info, "api": api_address}))
        temporary.replace(ready_file)
