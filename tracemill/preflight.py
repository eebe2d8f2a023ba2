"""Checks a command makes before it touches anything: the store exists, the ports are free.

A reading command pointed at a mistyped ``--db`` must not create an empty store and
report on it (``report --fail-on new`` would pass a CI gate); a second ``serve`` must not
share a port with the first (exports would be split silently between two stores).
"""

from __future__ import annotations

import difflib
import errno
import socket
from pathlib import Path

from tracemill.config import split_address
from tracemill.errors import InputMissingError, PortInUseError, StoreMissingError

__all__ = ["require_files", "require_port_free", "require_store"]


def require_store(path: Path) -> None:
    """Raise :class:`StoreMissingError` when no store exists at ``path``, suggesting the
    closest ``*.duckdb`` file in the same folder."""
    if path.exists():
        return
    folder = path.parent
    candidates = sorted(p.name for p in folder.glob("*.duckdb")) if folder.is_dir() else []
    close = difflib.get_close_matches(path.name, candidates, n=1, cutoff=0.6)
    hint = (f"did you mean {folder / close[0] if str(folder) != '.' else close[0]}?"
            if close else "create one with `tracemill serve`, `tracemill ingest FILE` or "
                          "`tracemill migrate`, or point --db (TRACEMILL_DB) at an existing one")
    raise StoreMissingError(f"no store at {path}; {hint}")


def require_files(paths: list[Path]) -> None:
    """Raise :class:`InputMissingError` naming every path that is not a readable file."""
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise InputMissingError(f"{', '.join(missing)} does not exist; nothing was stored "
                                "(check the path)")


def require_port_free(address: str, what: str, flag: str) -> None:
    """Raise :class:`PortInUseError` when something already listens on ``address``.

    Binds without ``SO_REUSEPORT`` and closes again: a listener that shares ports (gRPC's
    default) is found as well. Port 0 always passes (the server picks a free one), and so
    does an address that cannot be bound for another reason (the server reports it)."""
    host, port = split_address(address)
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        probe = socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                f"cannot listen for {what} on {address}: another process already listens "
                f"there (a second `tracemill serve`?); stop it or choose another {flag} "
                "(port 0 picks a free one)") from None
        return  # an address that cannot be bound at all: the server itself says why
    probe.close()
