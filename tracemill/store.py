"""The store: one DuckDB file (or a DuckLake), its schema kept by numbered migrations.

Each component owns its tables: its migrations are ``<component>/sql/migrations/NNN_name.sql``
files, applied in order and recorded in ``tracemill_migrations``. Only one process may
open a DuckDB file for writing; :func:`open_store` turns DuckDB's lock error into a
:class:`~tracemill.errors.StoreLockedError` naming the process that holds the file.
Inside one process, opening a file that is already open shares its database (DuckDB
attaches a file once per process), with the settings of the first open: the file closes
when the last of its stores closes. A read-only open of a file open for writing is
read-only by convention only (nothing here writes through a read-only store), and the
collector's spool stays single-writer (:class:`collector.spool.SpoolInUse`).

A lake file (a text file holding ``ducklake:postgres:<conninfo> data_path=...``) or that
URL itself opens a DuckLake instead (:mod:`tracemill.lake`): many processes write it at
once, and every cursor works in it with the same SQL.
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

from tracemill import lake as _lake
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

    def __init__(self, connection: duckdb.DuckDBPyConnection, path: Path, read_only: bool,
                 *, lake: _lake.LakeConnection | None = None, session: Sequence[str] = (),
                 shared: _SharedFile | None = None):
        self._connection = connection
        self._shared = shared  # a file open in this process: closed with its last store
        self._closed = False
        self._lock = threading.Lock()
        self._lake = lake
        self._session = tuple(session)  # a file attached by name: each cursor's USE
        self.path = path
        """Where the file lives; for a lake, its anchor: the lake file, or ``<local>/lake``
        for a URL (the spool and other local state go beside it, as beside a file)."""
        self.read_only = read_only
        """Whether this process opened it read-only."""
        self.name = lake.url.display() if lake else str(path)
        """What to call it in messages: the file, or the lake URL without its password."""

    @property
    def is_lake(self) -> bool:
        """Whether this store is a DuckLake (:mod:`tracemill.lake`)."""
        return self._lake is not None

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new cursor (a DuckDB connection sharing this database) for one thread."""
        return self._cursor(schema=False)

    def _cursor(self, *, schema: bool) -> duckdb.DuckDBPyConnection:
        with self._lock:
            cursor = self._connection.cursor()
        # a cursor is a new DuckDB connection: USE and search_path are its own
        if self._lake is not None:
            statements = self._lake.schema_session if schema else self._lake.session
        else:
            statements = self._session
        for statement in statements:
            cursor.execute(statement)
        return cursor

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one parameterised statement and return all its rows."""
        cursor = self.cursor()
        try:
            return cursor.execute(sql, list(params)).fetchall()
        finally:
            cursor.close()

    @contextmanager
    def transaction(self, *, schema: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor inside one transaction: committed on success, rolled back on error.

        ``schema``: the cursor creates tables (in a lake: in the shared schema).
        """
        cursor = self._cursor(schema=schema)
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
        """Apply the migrations not yet recorded; return the ones applied.

        On a lake, migrations run without the keys and indexes DuckLake refuses
        (:func:`tracemill.lake.lake_migration_sql`), and a process that lost a race to
        apply one (a commit conflict) reads the versions again and goes on.
        """
        applied: list[Migration] = []
        if self._lake is None:
            self._migrate(applied)
            return applied
        try:
            _lake.retrying(lambda: self._migrate(applied), also=_lake.is_race)
        except duckdb.Error as exc:
            raise SchemaError(f"migrating {self.name} failed: {exc} (other processes kept "
                              "applying the same migrations; run `tracemill migrate` alone "
                              "once)") from None
        def views() -> None:
            with self.transaction(schema=True) as cursor:
                _lake.apply_lake_views(cursor)

        _lake.retrying(views, also=_lake.is_race)
        schema = _lake.local_schema_name(self._lake.session)
        if schema is not None:
            with self.transaction(schema=True) as cursor:
                _lake.prepare_local_schema(cursor, schema)
        return applied

    def _migrate(self, applied: list[Migration]) -> None:
        dialect = _lake.lake_migration_sql if self._lake is not None else str
        with self.transaction(schema=True) as cursor:
            cursor.execute(dialect(_MIGRATIONS_TABLE))
        current = self.schema_versions()
        for component in COMPONENTS:
            known = migrations(component)
            newest_known = known[-1].version if known else 0
            if current.get(component, 0) > newest_known:
                raise SchemaError(
                    f"the store {self.name} has {component} schema version "
                    f"{current[component]}, newer than this tracemill knows "
                    f"({newest_known}); upgrade tracemill to use this file"
                )
            for migration in known:
                if migration.version <= current.get(component, 0):
                    continue
                try:
                    with self.transaction(schema=True) as cursor:
                        cursor.execute(dialect(migration.sql))
                        cursor.execute(
                            "INSERT INTO tracemill_migrations (component, version, name) "
                            "VALUES (?, ?, ?)",
                            [component, migration.version, migration.name],
                        )
                except duckdb.Error as exc:
                    if self._lake is not None and (_lake.is_conflict(exc)
                                                   or _lake.is_race(exc)):
                        raise  # another process applies it now: migrate() reads again
                    raise SchemaError(
                        f"migration {component} {migration.version:03d}_{migration.name} "
                        f"failed on {self.name}: {exc}"
                    ) from None
                applied.append(migration)
                current[component] = migration.version

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the main file.

        A lake has no log to fold (each commit is durable in its catalog and files):
        nothing to do; :meth:`maintain` compacts it.
        """
        if self._lake is not None:
            return
        cursor = self.cursor()
        try:
            cursor.execute("CHECKPOINT")
        finally:
            cursor.close()

    def maintain(self) -> _lake.LakeMaintenance | None:
        """Merge a lake's small files and expire its old snapshots (None: a DuckDB file,
        which needs none). Meant for a schedule; see :func:`tracemill.lake.maintain_lake`."""
        if self._lake is None or self.read_only:
            return None
        cursor = self.cursor()
        try:
            return _lake.maintain_lake(cursor)
        finally:
            cursor.close()

    def close(self) -> None:
        """Close the database; cursors made from it stop working. A file that other
        stores of this process share stays open until the last of them closes."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._lake is not None:
                self._lake.close()
            elif self._shared is not None:
                self._shared.release()
            else:
                self._connection.close()


class _SharedFile:
    """A DuckDB file open in this process, and how many stores use it."""

    def __init__(self, key: Path, connection: duckdb.DuckDBPyConnection, read_only: bool,
                 session: tuple[str, ...]) -> None:
        self.key = key
        self.connection = connection
        self.read_only = read_only
        self.session = session
        self.users = 0

    def release(self) -> None:
        with _OPEN_LOCK:
            self.users -= 1
            if self.users:
                return
            del _OPEN_FILES[self.key]
            self.connection.close()


_OPEN_FILES: dict[Path, _SharedFile] = {}
"""The DuckDB files this process has open, by resolved path."""
_OPEN_LOCK = threading.Lock()


def open_store(path: Path | str, *, read_only: bool = False, migrate: bool = True,
               memory_limit: str | None = None,
               checkpoint_threshold: str | None = None,
               compression: str = "auto", row_group_size: int = 0) -> Store:
    """Open (creating if needed) the DuckDB file at ``path`` and bring its schema up to date.

    A ``ducklake:postgres:...`` URL, or a lake file holding one, opens a lake instead
    (:mod:`tracemill.lake`). ``compression`` other than ``auto`` is DuckDB's
    ``force_compression`` for what this process checkpoints (``zstd``: see the setting
    ``db_compression``); columns it does not fit keep DuckDB's choice. ``row_group_size``
    (the setting ``db_row_group_size``; 0: DuckDB's 122,880) attaches the file with that
    many rows per row group for the tables this process writes: a transaction that fills
    whole row groups is written compressed straight to the file, not to the log, so the
    collector's commits leave nothing for a checkpoint to fold (:mod:`collector.materializer`).
    Raises StoreLockedError when another process holds the file, StoreError when the file
    cannot be used (not a DuckDB file, no permission, missing with ``read_only``).
    """
    if _lake.is_lake(path):
        return _open_lake(str(path), read_only=read_only, migrate=migrate,
                          memory_limit=memory_limit)
    path = Path(path)
    if read_only and not path.exists():
        raise StoreError(
            f"the store {path} does not exist; start `tracemill serve` or run "
            "`tracemill ingest` first, or point --db at an existing file"
        )
    if not read_only and path.parent and not path.parent.exists():
        raise StoreError(f"the folder {path.parent} for the store {path} does not exist")
    key = path.resolve()
    # one open at a time: a file already open in this process is shared (DuckDB attaches
    # a file once per process), with the settings it was first opened with
    with _OPEN_LOCK:
        shared = _OPEN_FILES.get(key)
        if shared is None:
            connection, session = _connect_file(
                path, read_only=read_only, memory_limit=memory_limit,
                checkpoint_threshold=checkpoint_threshold, compression=compression,
                row_group_size=row_group_size)
            shared = _OPEN_FILES[key] = _SharedFile(key, connection, read_only, session)
        elif shared.read_only and not read_only:
            raise StoreError(
                f"this process already has the store {path} open read-only; close that "
                "store before opening the file for writing")
        shared.users += 1
    store = Store(shared.connection, path, read_only, session=shared.session, shared=shared)
    if migrate and not read_only:
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
    return store


def _connect_file(path: Path, *, read_only: bool, memory_limit: str | None,
                  checkpoint_threshold: str | None, compression: str, row_group_size: int,
                  ) -> tuple[duckdb.DuckDBPyConnection, tuple[str, ...]]:
    """A new DuckDB connection to the file, and the statements each cursor runs first
    (see :func:`open_store`)."""
    try:
        config: dict[str, str | bool | int | float | list[str]] = {}
        if memory_limit:
            config["memory_limit"] = memory_limit
        if checkpoint_threshold and not read_only:
            config["checkpoint_threshold"] = checkpoint_threshold
        if compression != "auto" and not read_only:
            config["force_compression"] = compression
        session: tuple[str, ...] = ()
        if row_group_size:
            # DuckDB takes a row group size only as an ATTACH option: an in-memory
            # instance attaches the file by name, and every cursor USEs it
            config["temp_directory"] = f"{path}.tmp"  # where a file's own spills go
            connection = duckdb.connect(":memory:", config=config)
            session = (f"USE {_FILE_ALIAS}",)
            try:
                connection.execute(_attach_sql(path, read_only, row_group_size))
                connection.execute(session[0])
            except BaseException:
                connection.close()
                raise
        else:
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
    return connection, session


_FILE_ALIAS = "tracemill_store"
"""The name a DuckDB file is attached under when it is opened with a row group size."""


def _attach_sql(path: Path, read_only: bool, row_group_size: int) -> str:
    """``ATTACH`` for a file (DuckDB binds no parameters in ATTACH: the path is quoted)."""
    options = [f"ROW_GROUP_SIZE {int(row_group_size)}"] + (["READ_ONLY"] if read_only else [])
    quoted = str(path).replace("'", "''")
    return f"ATTACH '{quoted}' AS {_FILE_ALIAS} ({', '.join(options)})"


def _open_lake(url: str, *, read_only: bool, migrate: bool,
               memory_limit: str | None) -> Store:
    lake = _lake.connect_lake(_lake.lake_of(url), read_only=read_only,
                              memory_limit=memory_limit)
    store = Store(lake.connection, lake.url.anchor, read_only, lake=lake)
    try:
        if migrate and not read_only:
            store.migrate()
        elif not read_only and "tracemill_migrations" in _lake_tables(store):
            # unmigrated opens still need this process's own spool cursor
            schema = _lake.local_schema_name(lake.session)
            if schema is not None:
                with store.transaction(schema=True) as cursor:
                    _lake.prepare_local_schema(cursor, schema)
    except BaseException:
        store.close()
        raise
    return store


def _lake_tables(store: Store) -> set[str]:
    rows = store.query("SELECT table_name FROM duckdb_tables() WHERE database_name = ? "
                       "AND schema_name = 'main'", [_lake.ALIAS])
    return {name for (name,) in rows}


def is_lake(path: Path | str) -> bool:
    """Whether a ``--db`` value names a DuckLake rather than a DuckDB file."""
    return _lake.is_lake(path)


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
                          compression=settings.db_compression,
                          row_group_size=settings.db_row_group_size,
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
