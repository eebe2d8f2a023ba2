"""The store: one DuckDB file, its schema kept by numbered migrations.

Each component owns its tables: its migrations are ``<component>/sql/migrations/NNN_name.sql``
files, applied in order and recorded in ``tracemill_migrations``. Only one process may
open a DuckDB file for writing; :func:`open_store` turns DuckDB's lock error into a
:class:`~tracemill.errors.StoreLockedError` naming the process that holds the file.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import psutil

from tracemill.errors import SchemaError, StoreError, StoreLockedError

if TYPE_CHECKING:
    from tracemill.config import Settings

#: Components whose migrations make up the schema, in the order they are applied.
COMPONENTS: tuple[str, ...] = ("collector", "processor", "generator")

_MIGRATION_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
_LOCK_PID = re.compile(r"PID (\d+)")

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS tracemill_migrations (
    component VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (component, version)
)
"""


@dataclass(frozen=True)
class Migration:
    """One schema change of one component."""

    component: str
    """The package that owns the tables it touches."""
    version: int
    """Its number, from the file name; applied in increasing order."""
    name: str
    """The rest of the file name, for the record."""
    sql: str
    """The statements, run in one transaction."""


def load_sql(package: str, name: str) -> str:
    """Read ``<package>/sql/<name>`` shipped with the code."""
    return (resources.files(package) / "sql" / name).read_text(encoding="utf-8")


def migrations(component: str) -> list[Migration]:
    """The migrations a component ships, in order."""
    folder = resources.files(component) / "sql" / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(
                Migration(component, int(match[1]), match[2], entry.read_text(encoding="utf-8"))
            )
    return sorted(found, key=lambda m: m.version)


class Store:
    """An open DuckDB store. Thread-safe: each thread works through its own cursor."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self._connection = connection
        self._lock = threading.Lock()
        self.path = path
        """Where the file lives."""
        self.read_only = read_only
        """Whether this process opened it read-only."""

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new cursor (a DuckDB connection sharing this database) for one thread."""
        with self._lock:
            return self._connection.cursor()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one parameterised statement and return all its rows."""
        cursor = self.cursor()
        try:
            return cursor.execute(sql, list(params)).fetchall()
        finally:
            cursor.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor inside one transaction: committed on success, rolled back on error."""
        cursor = self.cursor()
        cursor.begin()
        try:
            yield cursor
        except BaseException:
            cursor.rollback()
            cursor.close()
            raise
        cursor.commit()
        cursor.close()

    def schema_versions(self) -> dict[str, int]:
        """The newest applied migration of each component."""
        rows = self.query(
            "SELECT component, max(version) FROM tracemill_migrations GROUP BY component"
        )
        return {component: version for component, version in rows}

    def migrate(self) -> list[Migration]:
        """Apply the migrations not yet recorded; return the ones applied."""
        applied: list[Migration] = []
        with self.transaction() as cursor:
            cursor.execute(_MIGRATIONS_TABLE)
        current = self.schema_versions()
        for component in COMPONENTS:
            known = migrations(component)
            newest_known = known[-1].version if known else 0
            if current.get(component, 0) > newest_known:
                raise SchemaError(
                    f"the store {self.path} has {component} schema version "
                    f"{current[component]}, newer than this tracemill knows "
                    f"({newest_known}); upgrade tracemill to use this file"
                )
            for migration in known:
                if migration.version <= current.get(component, 0):
                    continue
                try:
                    with self.transaction() as cursor:
                        cursor.execute(migration.sql)
                        cursor.execute(
                            "INSERT INTO tracemill_migrations (component, version, name) "
                            "VALUES (?, ?, ?)",
                            [component, migration.version, migration.name],
                        )
                except duckdb.Error as exc:
                    raise SchemaError(
                        f"migration {component} {migration.version:03d}_{migration.name} "
                        f"failed on {self.path}: {exc}"
                    ) from None
                applied.append(migration)
        return applied

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the main file."""
        cursor = self.cursor()
        try:
            cursor.execute("CHECKPOINT")
        finally:
            cursor.close()

    def close(self) -> None:
        """Close the database; cursors made from it stop working."""
        with self._lock:
            self._connection.close()


def open_store(path: Path, *, read_only: bool = False, migrate: bool = True,
               memory_limit: str | None = None,
               checkpoint_threshold: str | None = None) -> Store:
    """Open (creating if needed) the DuckDB file at ``path`` and bring its schema up to date.

    Raises StoreLockedError when another process holds the file, StoreError when the file
    cannot be used (not a DuckDB file, no permission, missing with ``read_only``).
    """
    path = Path(path)
    if read_only and not path.exists():
        raise StoreError(
            f"the store {path} does not exist; start `tracemill serve` or run "
            "`tracemill ingest` first, or point --db at an existing file"
        )
    if not read_only and path.parent and not path.parent.exists():
        raise StoreError(f"the folder {path.parent} for the store {path} does not exist")
    try:
        config: dict[str, str | bool | int | float | list[str]] = {}
        if memory_limit:
            config["memory_limit"] = memory_limit
        if checkpoint_threshold and not read_only:
            config["checkpoint_threshold"] = checkpoint_threshold
        connection = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.IOException as exc:
        text = str(exc)
        if "lock" in text.lower():
            pid = _holder_pid(text)
            raise StoreLockedError(str(path), pid, _describe_process(pid)) from None
        raise StoreError(f"cannot open the store {path}: {text}") from None
    except duckdb.Error as exc:
        raise StoreError(
            f"cannot open the store {path}: {exc}. Is it a DuckDB file written by a "
            "compatible DuckDB version?"
        ) from None
    store = Store(connection, path, read_only)
    if migrate and not read_only:
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
    return store


def _holder_pid(message: str) -> int | None:
    match = _LOCK_PID.search(message)
    return int(match[1]) if match else None


def _describe_process(pid: int | None) -> str | None:
    if pid is None:
        return None
    try:
        command = " ".join(psutil.Process(pid).cmdline())
    except (psutil.Error, OSError):
        return None
    return command[:200] or None


def open_configured(settings: Settings, *, store_spool: bool = True, **options: Any) -> Store:
    """Open the store a command's settings name, with their DuckDB limits.

    With ``store_spool`` (the default, for commands that read the store), requests a
    collector acknowledged but did not store yet are stored first, or a notice on stderr
    says how many the store lacks (:func:`collector.backlog.settle_spool`).
    """
    def reopen(read_only: bool) -> Store:
        return open_store(settings.db, memory_limit=settings.db_memory_limit,
                          checkpoint_threshold=settings.db_checkpoint_threshold,
                          **{**options, "read_only": read_only})

    store = reopen(bool(options.get("read_only", False)))
    if not store_spool:
        return store
    # imported here: the collector owns the spool and itself imports this module
    from collector.backlog import settle_spool

    try:
        return settle_spool(store, settings, reopen)
    except BaseException:
        store.close()
        raise
