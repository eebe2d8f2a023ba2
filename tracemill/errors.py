"""Errors of the shared core.

Every error a user can cause derives from :class:`TracemillError`, whose message says
what went wrong and what to do. The command line prints that message and exits non-zero;
it never shows a traceback for one of these::

    TracemillError
    ├── ConfigError           a setting is missing, unknown or invalid
    ├── InputMissingError     a file named on the command line does not exist
    ├── PortInUseError        `serve`: another process listens on a configured port
    └── StoreError            the DuckDB store cannot be used
        ├── StoreMissingError a reading command was pointed at a store that does not exist
        ├── StoreLockedError  another process holds the file's write lock
        └── SchemaError       the file's schema is newer than this tracemill, or a migration failed

Exit codes of every ``tracemill`` command (the one place they are defined; the README
repeats this table):

====  ================================================================================
code  meaning
====  ================================================================================
0     done
1     a gate failed: ``report --fail-on`` found what it was asked to fail on, ``ingest``
      rejected input, ``generate`` stored nothing gradeable
2     usage or bad input: an unknown option or id, an invalid setting, a missing file or
      store (:data:`EXIT_USAGE`, the default of :class:`TracemillError`)
3     locked or unavailable: the store is held by another process and no running service
      answered, or a port ``serve`` needs is taken (:data:`EXIT_UNAVAILABLE`)
130   interrupted (Ctrl-C)
141   the reader of stdout went away (``tracemill map | head``): quiet, like SIGPIPE
====  ================================================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141


class TracemillError(Exception):
    """Base of every error that carries a user-facing message."""

    exit_code: int = EXIT_USAGE


class InputMissingError(TracemillError):
    """A file named on the command line does not exist (names it)."""


class PortInUseError(TracemillError):
    """``serve`` cannot listen: another process holds the address (names it and the flag)."""

    exit_code = EXIT_UNAVAILABLE


class ConfigError(TracemillError):
    """A setting is missing, unknown or invalid (names the key and where it came from)."""


class StoreError(TracemillError):
    """The DuckDB store cannot be opened or used."""


class StoreMissingError(StoreError):
    """A command that reads the store was given a path where no store exists; nothing is
    created (a mistyped ``--db`` must not pass a CI gate on an empty store)."""


class StoreLockedError(StoreError):
    """Another process holds the write lock on the DuckDB file."""

    exit_code = EXIT_UNAVAILABLE

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
