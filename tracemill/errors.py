"""Errors of the shared core.

Every error a user can cause derives from :class:`TracemillError`, whose message says
what went wrong and what to do. The command line prints that message and exits non-zero;
it never shows a traceback for one of these::

    TracemillError
    ├── ConfigError          a setting is missing, unknown or invalid
    └── StoreError           the DuckDB store cannot be used
        ├── StoreLockedError another process holds the file's write lock
        └── SchemaError      the file's schema is newer than this tracemill, or a migration failed
"""

from __future__ import annotations


class TracemillError(Exception):
    """Base of every error that carries a user-facing message."""

    exit_code: int = 2


class ConfigError(TracemillError):
    """A setting is missing, unknown or invalid (names the key and where it came from)."""


class StoreError(TracemillError):
    """The DuckDB store cannot be opened or used."""


class StoreLockedError(StoreError):
    """Another process holds the write lock on the DuckDB file."""

    exit_code = 3

    def __init__(self, path: str, pid: int | None, holder: str | None) -> None:
        who = f"process {pid}" if pid is not None else "another process"
        if holder:
            who += f" ({holder})"
        super().__init__(
            f"the store {path} is locked by {who}. DuckDB lets one process write a file at "
            "a time: stop that process, or point this command at another file with --db "
            "(or TRACEMILL_DB)."
        )
        self.path = path
        self.pid = pid


class SchemaError(StoreError):
    """The store's schema cannot be brought to this version of tracemill."""
