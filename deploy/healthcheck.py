#!/usr/bin/env python3
"""Ask the tracemill collector next to this process whether it is up or ready.

For Docker's HEALTHCHECK, the compose healthcheck and Kubernetes exec probes: they run
inside the collector's container, so they reach a collector that listens on loopback only
(a sidecar), where an httpGet or tcpSocket probe, sent by the kubelet to the pod's IP,
cannot. The image installs it as ``tracemill-healthcheck``.

    tracemill-healthcheck            # GET /readyz: accepting and storing
    tracemill-healthcheck healthz    # GET /healthz: up, worker threads alive

It reads the settings the collector reads from its environment: ``TRACEMILL_HTTP_ADDRESS``
(default 127.0.0.1:4318; a wildcard host such as 0.0.0.0 is asked on loopback) and, when
``TRACEMILL_TLS_CERT`` is set, speaks HTTPS. The certificate is not verified: the probe
dials loopback while the certificate names the service, it sends no token (neither path
needs one) and reads only a status code. A collector configured by a tracemill.toml
instead of the environment needs ``--address`` and ``--tls``.

Exit 0 when the answer is 200; 1 with the collector's reason (or the connection error) on
stderr otherwise; 2 for a bad address. Standard library only, so it starts in tens of
milliseconds and needs nothing beyond the image's Python.
"""

from __future__ import annotations

import argparse
import http.client
import os
import ssl
import sys

DEFAULT_ADDRESS = "127.0.0.1:4318"
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracemill-healthcheck",
        description="GET /readyz or /healthz from the tracemill collector on this host; "
                    "exit 0 when it answers 200.")
    parser.add_argument("check", nargs="?", choices=["readyz", "healthz"], default="readyz",
                        help="readyz (default): accepting and storing; healthz: up.")
    parser.add_argument("--address", metavar="HOST:PORT",
                        help="The collector's OTLP/HTTP address (default: "
                             "TRACEMILL_HTTP_ADDRESS, else 127.0.0.1:4318).")
    parser.add_argument("--tls", action=argparse.BooleanOptionalAction, default=None,
                        help="Speak HTTPS (default: when TRACEMILL_TLS_CERT is set).")
    parser.add_argument("--timeout", type=float, default=3.0, metavar="SECONDS",
                        help="Give up after this long (default 3).")
    return parser


def _target(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{address!r} is not host:port (for example 127.0.0.1:4318); set "
                         "TRACEMILL_HTTP_ADDRESS or --address")
    host = host.strip("[]")
    return _WILDCARDS.get(host, host), int(port)


def check(path: str, address: str, tls: bool, timeout: float) -> tuple[bool, str]:
    """GET ``path`` from the collector at ``address``: (answered 200, what it said)."""
    host, port = _target(address)
    connection: http.client.HTTPConnection
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # loopback; see the module docstring
        connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
    scheme = "https" if tls else "http"
    url = f"{scheme}://{host}:{port}/{path}"
    try:
        connection.request("GET", f"/{path}")
        response = connection.getresponse()
        body = response.read(2048).decode("utf-8", "replace").strip()
    except (OSError, http.client.HTTPException) as exc:
        hint = (" (is the collector serving TLS? then set TRACEMILL_TLS_CERT or --tls)"
                if not tls and isinstance(exc, http.client.RemoteDisconnected) else "")
        return False, f"{url}: {exc or type(exc).__name__}{hint}"
    finally:
        connection.close()
    if response.status == 200:
        return True, f"{url}: {body or 'ok'}"
    return False, f"{url}: HTTP {response.status}: {body}"


def main(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Run one check; returns the exit code."""
    env = os.environ if environ is None else environ
    args = _parser().parse_args(argv)
    address = args.address or env.get("TRACEMILL_HTTP_ADDRESS") or DEFAULT_ADDRESS
    tls = args.tls if args.tls is not None else bool(env.get("TRACEMILL_TLS_CERT"))
    try:
        healthy, said = check(args.check, address, tls, args.timeout)
    except ValueError as exc:
        print(f"tracemill-healthcheck: error: {exc}", file=sys.stderr)
        return 2
    print(said, file=sys.stdout if healthy else sys.stderr)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
