"""How the command line finds the running service that holds a store.

``tracemill serve --db STORE`` writes ``STORE.serve.json`` beside the store once it
listens (its pid and the addresses it is bound to, never a token) and removes it when it
exits. A command that finds the store locked reads that file to learn where the admin
API and the OTLP/HTTP endpoint are, so a service on non-default or free ports (port 0) is
found without ``--api-address``. A file whose pid is not alive (a service killed with
SIGKILL) or is not the process holding the lock is ignored, and the configured addresses
are used instead.

The command line sends the admin and ingestion tokens to the addresses the file names, so
it is written only as a private file of its own (created exclusively, mode 0600, then
renamed into place) and a file owned by another user, or a symbolic link, is not
believed: the command says so on stderr and uses the configured addresses.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["ServiceInfo", "info_path", "read_service_info", "remove_service_info",
           "write_service_info"]

SUFFIX = ".serve.json"
_log = logging.getLogger("tracemill.service_info")


@dataclass(frozen=True)
class ServiceInfo:
    """Where a running ``tracemill serve`` listens."""

    pid: int
    """Its process id."""
    grpc: str
    """host:port of OTLP/gRPC."""
    http: str
    """host:port of OTLP/HTTP, /healthz, /metrics, /stats."""
    api: str
    """host:port of the admin API (/api/v1)."""
    tls: bool
    """Whether the OTLP ports speak TLS."""


def info_path(store: Path) -> Path:
    """The service file of the store at ``store`` (``STORE.serve.json``)."""
    return store.with_name(store.name + SUFFIX)


def write_service_info(store: Path, info: ServiceInfo) -> Path:
    """Write the service file atomically through a temporary file of our own (created
    exclusively, mode 0600, so nobody else can have placed or opened it); returns its
    path."""
    path = info_path(store)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                        suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(json.dumps(asdict(info)))
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return path


def remove_service_info(store: Path, pid: int) -> None:
    """Remove the service file if it is the one process ``pid`` wrote."""
    found = _read(info_path(store))
    if found is not None and found.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            info_path(store).unlink()


def read_service_info(store: Path, holder: int | None = None) -> ServiceInfo | None:
    """The running service of ``store``: None when there is no file, it is unreadable,
    its process is gone, or it is not ``holder`` (the pid holding the lock, when known)."""
    found = _read(info_path(store))
    if found is None or (holder is not None and found.pid != holder):
        return None
    return found if _alive(found.pid) else None


def _read(path: Path) -> ServiceInfo | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        if path.is_symlink():
            _distrust(path, "it is a symbolic link")
        elif not isinstance(exc, FileNotFoundError):
            _log.debug("service file unreadable", extra={"fields": {"error": str(exc)}})
        return None
    try:
        with os.fdopen(descriptor, encoding="utf-8") as file:
            owner = os.fstat(file.fileno()).st_uid
            if owner != os.getuid():
                _distrust(path, f"it belongs to user id {owner}, not to you ({os.getuid()})")
                return None
            data = json.loads(file.read())
        return ServiceInfo(pid=int(data["pid"]), grpc=str(data["grpc"]),
                           http=str(data["http"]), api=str(data["api"]),
                           tls=bool(data.get("tls", False)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _distrust(path: Path, why: str) -> None:
    _log.warning(f"ignoring the service file {path}: {why}, and the tokens would go to "
                 "whatever address it names; using the configured addresses instead "
                 "(remove the file, or run the service as this user)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return True
