"""The DuckLake backend: ``--db team.lake``, a *lake file* holding
``ducklake:postgres:<libpq conninfo> data_path=DIR``.

Past one machine the store is a DuckLake: its catalog in PostgreSQL, its rows in Parquet
files under a shared data path. Every process (collectors, ``process``, ``generate``)
opens it with :func:`connect_lake`, which ATTACHes the lake as ``lake`` and makes each
cursor ``USE`` it, so the same SQL runs as on a DuckDB file.

The command line takes the lake only through a lake file: a small text file holding
DuckLake's own attach string (password included, so it can be private), for example::

    ducklake:postgres:dbname=tm host=db.internal user=tm data_path=/srv/lake

``data_path``, a key of tracemill's taken out of the conninfo before it reaches
PostgreSQL, is needed only when the lake is created (DuckLake remembers it): where the
Parquet files go, a shared folder or an object store URL. A URL given straight as
``--db`` is refused (:class:`~tracemill.config.Settings` asks for a lake file), so every
process names the same lake and keeps its local state in a known place.

Each process that writes keeps local state, as it would beside a DuckDB file: the
collector's spool, a lock (one writing process per local state, as one per DuckDB file)
and its identity in the lake. It lives beside the store's *anchor*, the path
``Store.path`` reports. A lake file is its own anchor, and its spool is ``FILE.spool``
beside it, exactly as for a DuckDB file; two processes on one machine use two lake files
with the same URL. (Code that opens a URL itself, :func:`~tracemill.store.open_store`
in the tests, anchors it at ``<local>/lake``, ``local=`` being tracemill's other key,
default ``./tracemill-lake``; a lake file refuses ``local=``.)

What DuckLake does not take, and what stands in for it:

- PRIMARY KEY, UNIQUE and indexes: :func:`lake_migration_sql` drops them from the
  migrations; duplicates are kept out by the writers' own bookkeeping (the collector's
  anti-join and spool cursor, the migration record written in the same transaction as
  the migration, whose concurrent twin then conflicts).
- Sequences: none of the migrations use one.
- One writer's bookkeeping row shared by all: each process gets a schema of its own,
  ``tm_local_<id>``, holding its ``collector_spool_cursor``; cursors resolve that name
  there first (``search_path``), so every collector's spool position is committed in the
  same transaction as its rows, and two collectors never update the same row.

- A watermark that only grows: the processor reads new rows as those whose ``ingest_seq``
  is above the largest it saw. Each collector numbers its own commits, so with two the
  numbers interleave and a lagging collector's rows would fall below the mark. On a lake
  the ``spans`` and ``log_records`` views give DuckLake's ``snapshot_id`` of each row as
  ``ingest_seq`` instead (:func:`apply_lake_views`): snapshots are numbered in commit
  order across all writers, so a row committed later always has a larger one.

Two writers that touch the same data conflict at commit; :func:`retrying` repeats such a
unit of work. :func:`maintain_lake` merges small files and expires old snapshots.
"""

from __future__ import annotations

import fcntl
import os
import random
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import IO, TypeVar

import duckdb

from tracemill.errors import StoreError, StoreLockedError

__all__ = [
    "ALIAS",
    "LakeConnection",
    "LakeError",
    "LakeMaintenance",
    "LakeUrl",
    "LocalFolderLockedError",
    "apply_lake_views",
    "connect_lake",
    "is_conflict",
    "is_lake",
    "is_race",
    "lake_migration_sql",
    "lake_of",
    "load_extensions",
    "local_schema_name",
    "maintain_lake",
    "parse_lake_url",
    "prepare_local_schema",
    "retrying",
]

PREFIX = "ducklake:"
ALIAS = "lake"
"""The name the lake is attached under."""
DEFAULT_LOCAL = Path("tracemill-lake")

_EXTENSIONS = (("duckdb_extension_postgres_scanner", "postgres_scanner"),
               ("duckdb_extension_ducklake", "ducklake"))
_PAIR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']+)\s*")
_OURS = ("data_path", "local")
_LAKE_FILE_MAX = 64 * 1024
_SECRET_VALUE = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")
_RETRY_COUNT = 30
"""DuckLake's own commit retries (its default, 10, ran out with four writers)."""

_COMMENT = re.compile(r"('(?:[^']|'')*')|--[^\n]*")
_DROPPED = (
    # a table constraint line: ", PRIMARY KEY (a, b)" / ", UNIQUE (a)"
    re.compile(r",\s*(?:PRIMARY\s+KEY|UNIQUE)\s*\([^)]*\)", re.IGNORECASE),
    # a column constraint: "x VARCHAR NOT NULL PRIMARY KEY"
    re.compile(r"\s+(?:PRIMARY\s+KEY|UNIQUE)\b", re.IGNORECASE),
    # an index, whole statement
    re.compile(r"CREATE\s+(?:UNIQUE\s+)?INDEX\b[^;]*;", re.IGNORECASE),
)


class LakeError(StoreError):
    """The lake cannot be opened: bad URL, extensions missing, catalog unreachable."""


class LocalFolderLockedError(StoreLockedError):
    """Another process uses this process's local folder (its spool and identity)."""

    def __init__(self, anchor: Path, pid: int | None, holder: str | None) -> None:
        who = f"process {pid}" if pid is not None else "another process"
        if holder:
            who += f" ({holder})"
        StoreError.__init__(
            self,
            f"the local state {anchor} of this lake store is used by {who}. Each process "
            "that writes to a lake needs its own (it holds that process's spool): give "
            "this one another lake file with the same URL, or local=ANOTHER_FOLDER in the "
            "ducklake: URL, or stop that process.")
        self.path = str(anchor)
        self.pid = pid
        self.holder = holder


@dataclass(frozen=True)
class LakeUrl:
    """A parsed ``ducklake:`` store URL."""

    attach: str
    """What ATTACH is given: ``ducklake:postgres:<conninfo>`` without tracemill's keys."""
    data_path: str | None
    """Where new Parquet files go (needed when the lake is created)."""
    anchor: Path
    """What ``Store.path`` reports; the spool (``.spool``), lock (``.lock``) and identity
    (``.lake-id``) of this process go beside it."""

    def display(self) -> str:
        """The URL for messages, with any password hidden."""
        return _SECRET_VALUE.sub(r"\1***", self.attach)


@dataclass
class LakeConnection:
    """An attached lake and what each cursor must run to work in it."""

    connection: duckdb.DuckDBPyConnection
    """The DuckDB instance with the lake attached as :data:`ALIAS`."""
    url: LakeUrl
    """Where it came from."""
    session: tuple[str, ...]
    """Statements each new cursor runs (USE, search_path to this process's schema)."""
    schema_session: tuple[str, ...]
    """Statements a cursor that changes the schema runs (USE the shared schema only)."""
    lock: IO[str] | None
    """The local state's lock, held while the store is open (None: read-only)."""

    def close(self) -> None:
        """Detach and release the local state."""
        self.connection.close()
        if self.lock is not None:
            self.lock.close()
            self.lock = None


@dataclass(frozen=True)
class LakeMaintenance:
    """What one :func:`maintain_lake` did."""

    expired_snapshots: int
    """Snapshots expired."""
    files_removed: int
    """Files no snapshot needs any more that were deleted."""
    seconds: float
    """Wall time."""


def is_lake(path: object) -> bool:
    """Whether a ``--db`` value names a lake (a URL or a lake file), not a DuckDB file."""
    return str(path).startswith(PREFIX) or _lake_file_text(Path(str(path))) is not None


def _lake_file_text(path: Path) -> str | None:
    """The URL in a lake file (None: not one; a DuckDB file never starts with the prefix)."""
    try:
        if not path.is_file() or path.stat().st_size > _LAKE_FILE_MAX:
            return None
        with path.open("rb") as handle:
            if handle.read(len(PREFIX)) != PREFIX.encode():
                return None
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def lake_of(path: object) -> LakeUrl:
    """The lake a ``--db`` value names: the URL itself, or the URL in a lake file."""
    text = str(path)
    if text.startswith(PREFIX):
        return parse_lake_url(text)
    content = _lake_file_text(Path(text))
    if content is None:
        raise LakeError(f"{text} is neither a ducklake: URL nor a file holding one")
    url = parse_lake_url(" ".join(content.split()), anchor=Path(text))
    return url


def parse_lake_url(text: str, *, anchor: Path | None = None) -> LakeUrl:
    """Parse ``ducklake:postgres:<conninfo>``; raises :class:`LakeError` naming the fix.

    ``anchor``: the lake file it was read from (then ``local=`` is refused: the file's
    own folder holds the local state).
    """
    if not text.startswith(PREFIX + "postgres:"):
        raise LakeError(
            f"unsupported store URL {text!r}: tracemill's lake backend takes a PostgreSQL "
            "catalog, written as 'ducklake:postgres:dbname=NAME host=HOST port=PORT "
            "data_path=DIR' (libpq key=value pairs)")
    conninfo = text[len(PREFIX + "postgres:"):]
    pairs: list[tuple[str, str]] = []
    position = 0
    while position < len(conninfo):
        match = _PAIR.match(conninfo, position)
        if match is None:
            raise LakeError(
                f"cannot read the connection string of {PREFIX}postgres: at "
                f"{conninfo[position:position + 30]!r}: write it as key=value pairs "
                "separated by spaces (quote values with spaces: password='a b'); "
                "postgresql:// URIs are not accepted here")
        pairs.append((match[1], match[2]))
        position = match.end()
    ours = {key: _unquote(value) for key, value in pairs if key in _OURS}
    theirs = " ".join(f"{key}={value}" for key, value in pairs if key not in _OURS)
    if not theirs:
        raise LakeError(f"the store URL {text!r} names no PostgreSQL database: add "
                        "dbname=NAME (and host=, port=, user= as needed)")
    data_path = ours.get("data_path")
    if data_path:
        # --db passes through a Path, which folds "s3://bucket" into "s3:/bucket"
        data_path = re.sub(r"^([a-z][a-z0-9+.-]*):/(?!/)", r"\1://", data_path)
    if anchor is not None and "local" in ours:
        raise LakeError(f"the lake file {anchor} sets local=; a lake file keeps its local "
                        "state beside itself: remove local= (use one lake file per process)")
    if anchor is None:
        anchor = Path(ours.get("local", str(DEFAULT_LOCAL))) / "lake"
    return LakeUrl(attach=f"{PREFIX}postgres:{theirs}", data_path=data_path, anchor=anchor)


def _unquote(value: str) -> str:
    if value.startswith("'"):
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def _literal(text: str) -> str:
    """A SQL string literal: ATTACH and LOAD take no bound parameters."""
    return "'" + text.replace("'", "''") + "'"


def load_extensions(connection: duckdb.DuckDBPyConnection) -> None:
    """LOAD DuckLake and the PostgreSQL scanner from their PyPI wheels (never downloads)."""
    for package, name in _EXTENSIONS:
        try:
            folder = resources.files(package)
        except ModuleNotFoundError:
            raise LakeError(
                f"the lake backend needs the {name} DuckDB extension, which is not installed: "
                "pip install 'tracemill[lake]' (it pins duckdb==1.5.5, the only DuckDB the "
                f"extension wheels exist for; this process has duckdb {duckdb.__version__})"
            ) from None
        binary = folder / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
        if not binary.is_file():
            raise LakeError(
                f"the installed {package.replace('_', '-')} wheel has no build for duckdb "
                f"{duckdb.__version__}: install the pins of tracemill[lake] "
                "(duckdb==1.5.5 with the 1.5.5 extension wheels), in a venv of its own")
        connection.execute(f"LOAD {_literal(str(binary))}")


def connect_lake(url: LakeUrl, *, read_only: bool,
                 memory_limit: str | None = None) -> LakeConnection:
    """Attach the lake at ``url`` (creating it when its catalog is empty).

    A writer takes its local state's lock and gets its own schema (``tm_local_<id>``,
    the id kept in ``<anchor>.lake-id``) for its bookkeeping rows.
    """
    lock = None if read_only else _lock_local(url.anchor)
    try:
        config: dict[str, str | bool | int | float | list[str]] = {
            "autoinstall_known_extensions": False, "autoload_known_extensions": False}
        if memory_limit:
            config["memory_limit"] = memory_limit
        connection = duckdb.connect(":memory:", config=config)
        try:
            load_extensions(connection)
            connection.execute(f"SET GLOBAL ducklake_max_retry_count = {_RETRY_COUNT}")
            options = ["READ_ONLY"] if read_only else []
            if url.data_path and not read_only:
                options.append(f"DATA_PATH {_literal(url.data_path)}")
            suffix = f" ({', '.join(options)})" if options else ""
            # two processes creating the same new catalog race in PostgreSQL; the loser
            # finds it made when it tries again
            retrying(lambda: connection.execute(
                f"ATTACH {_literal(url.attach)} AS {ALIAS}{suffix}"), also=is_race)
            schema = _local_schema(connection, url.anchor, create=not read_only)
        except BaseException:
            connection.close()
            raise
    except duckdb.Error as exc:
        if lock is not None:
            lock.close()
        raise LakeError(_explain_attach(url, exc)) from None
    except BaseException:
        if lock is not None:
            lock.close()
        raise
    search = f"{ALIAS}.{schema},{ALIAS}.main" if schema else f"{ALIAS}.main"
    return LakeConnection(
        connection=connection, url=url, lock=lock,
        session=(f"USE {ALIAS}.main", f"SET search_path = {_literal(search)}"),
        schema_session=(f"USE {ALIAS}.main", f"SET search_path = {_literal(ALIAS + '.main')}"))


def _explain_attach(url: LakeUrl, exc: duckdb.Error) -> str:
    text = str(exc)
    if "creating a new DuckLake is explicitly disabled" in text:
        hint = ("no lake was made in that database yet: create it with `tracemill migrate` "
                "or `tracemill serve` on a lake file whose URL has data_path=")
    elif "DATA_PATH" in text and "does not match" in text:
        hint = ("the lake already keeps its files elsewhere: drop data_path= from the URL or "
                "give the one the lake was created with")
    elif "data path" in text.lower() or "DATA_PATH" in text:
        hint = "a new lake needs data_path=DIR (or an object store URL) in the store URL"
    elif "connection" in text.lower() or "could not" in text.lower():
        hint = ("is PostgreSQL running there, and do dbname, host, port and user name a "
                "database this user may create tables in?")
    else:
        hint = "check the store URL"
    return f"cannot open the lake {url.display()}: {text.strip()} ({hint})"


def _beside(anchor: Path, suffix: str) -> Path:
    return anchor.with_name(anchor.name + suffix)


def _lock_local(anchor: Path) -> IO[str]:
    try:
        anchor.parent.mkdir(parents=True, exist_ok=True)
        handle = _beside(anchor, ".lock").open("a+", encoding="utf-8")
    except OSError as exc:
        raise LakeError(f"cannot keep the local state of the lake store beside {anchor}: "
                        f"{exc} (put the lake file, or local=DIR of the URL, in a writable "
                        "folder)") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        text = handle.read().strip()
        handle.close()
        pid = int(text) if text.isdigit() else None
        raise LocalFolderLockedError(anchor, pid, _command_of(pid)) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def _command_of(pid: int | None) -> str | None:
    if pid is None:
        return None
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200] or None


def _local_schema(connection: duckdb.DuckDBPyConnection, anchor: Path,
                  *, create: bool) -> str | None:
    """This process's schema in the lake, made on first use (None: read-only, none yet)."""
    id_file = _beside(anchor, ".lake-id")
    if id_file.is_file():
        ident = id_file.read_text(encoding="utf-8").strip()
    elif create:
        ident = uuid.uuid4().hex[:16]
        temporary = _beside(id_file, ".tmp")
        temporary.write_text(ident, encoding="utf-8")
        temporary.replace(id_file)
    else:
        return None
    if not re.fullmatch(r"[0-9a-f]{16}", ident):
        raise LakeError(f"{id_file} does not hold a lake identity; delete it (a new one is "
                        "made) only if this folder's spool is empty")
    schema = f"tm_local_{ident}"
    exists = connection.execute(
        "SELECT count(*) FROM duckdb_schemas() WHERE database_name = ? AND schema_name = ?",
        [ALIAS, schema]).fetchone()
    if exists and exists[0]:
        return schema
    if not create:
        return None
    retrying(lambda: connection.execute(f"CREATE SCHEMA IF NOT EXISTS {ALIAS}.{schema}"))
    return schema


def prepare_local_schema(cursor: duckdb.DuckDBPyConnection, schema: str) -> None:
    """Create this process's bookkeeping tables once the shared schema has them."""
    table = cursor.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "
        "AND table_name = 'collector_spool_cursor'", [ALIAS, schema]).fetchone()
    if table and table[0]:
        return
    # a new spool starts at 0; its commit numbers continue after the newest stored, so
    # a new collector's rows do not fall behind the processor's watermark at once
    cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {ALIAS}.{schema}")
    cursor.execute(f"CREATE TABLE {ALIAS}.{schema}.collector_spool_cursor "
                   "(position UBIGINT NOT NULL, commits UBIGINT NOT NULL)")
    # schema is tm_local_<16 hex digits>, checked when read
    cursor.execute(
        f"INSERT INTO {ALIAS}.{schema}.collector_spool_cursor SELECT 0, greatest("  # noqa: S608
        f"(SELECT coalesce(max(ingest_seq), 0) FROM {ALIAS}.main.otlp_spans), "
        f"(SELECT coalesce(max(ingest_seq), 0) FROM {ALIAS}.main.otlp_log_records))")


# The collector's views (collector/sql/migrations/001_otlp.sql) with the lake's commit
# order as ingest_seq; tests/lake checks they keep the file store's columns.
_LAKE_VIEWS = {
    "spans": "CREATE OR REPLACE VIEW spans AS SELECT * EXCLUDE (tid_hi, tid_lo, sid) "
             "REPLACE (CAST(snapshot_id AS UBIGINT) AS ingest_seq) FROM otlp_spans",
    "log_records": "CREATE OR REPLACE VIEW log_records AS SELECT * EXCLUDE (key_hi, key_lo) "
                   "REPLACE (CAST(snapshot_id AS UBIGINT) AS ingest_seq) FROM otlp_log_records",
}


def apply_lake_views(cursor: duckdb.DuckDBPyConnection) -> None:
    """Give ``spans`` and ``log_records`` the lake's snapshot id as ``ingest_seq`` (see the
    module docstring); a no-op when they already do."""
    for name, sql in _LAKE_VIEWS.items():
        found = cursor.execute(
            "SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = 'main' "
            "AND view_name = ?", [ALIAS, name]).fetchone()
        if found is not None and "snapshot_id" not in str(found[0]):
            cursor.execute(sql)


def local_schema_name(session: tuple[str, ...]) -> str | None:
    """The process's own schema named in a session's search_path (None: read-only)."""
    for statement in session:
        match = re.search(rf"'{ALIAS}\.(tm_local_[0-9a-f]{{16}}),", statement)
        if match:
            return match[1]
    return None


def lake_migration_sql(sql: str) -> str:
    """A migration as DuckLake takes it: comments, keys, unique constraints and indexes out.

    DuckLake enforces none of them (it refuses them); what they guarded is kept by the
    writers (see the module docstring).
    """
    text = _COMMENT.sub(lambda m: m[1] or "", sql)
    for pattern in _DROPPED:
        text = pattern.sub("", text)
    return text


T = TypeVar("T")


def is_conflict(exc: BaseException) -> bool:
    """Whether a DuckDB error is a lake commit conflict that a retry can get past."""
    if not isinstance(exc, duckdb.Error):
        return False
    text = str(exc).lower()
    # the last: PostgreSQL's serialization failure, met when maintenance flushes inlined
    # rows while a collector commits
    return ("conflict" in text or "ducklake_max_retry_count" in text
            or "could not serialize access" in text)


def is_race(exc: duckdb.Error) -> bool:
    """Whether an error says another process made the same object first."""
    text = str(exc)
    return "duplicate key" in text or "already exists" in text


def retrying(work: Callable[[], T], *, attempts: int = 8, first_wait: float = 0.05,
             also: Callable[[duckdb.Error], bool] | None = None) -> T:
    """Run ``work``; when it fails on a commit conflict, run it again (with jittered backoff).

    ``work`` must be a whole unit: its own transaction, begun and committed inside.
    ``also`` says which other errors are worth another attempt.
    """
    wait = first_wait
    for attempt in range(attempts):
        try:
            return work()
        except duckdb.Error as exc:
            worth = is_conflict(exc) or (also is not None and also(exc))
            if not worth or attempt == attempts - 1:
                raise
        time.sleep(wait * (1 + random.random()))  # noqa: S311 - jitter, not secrecy
        wait = min(wait * 2, 2.0)
    raise AssertionError("unreachable")  # pragma: no cover


def maintain_lake(cursor: duckdb.DuckDBPyConnection, *,
                  keep_snapshots: timedelta = timedelta(hours=1)) -> LakeMaintenance:
    """Merge adjacent small files, expire snapshots older than ``keep_snapshots`` and
    delete the files no snapshot needs. Safe beside running writers (conflicts retry)."""
    started = time.perf_counter()
    older_than = f"now() - INTERVAL '{int(keep_snapshots.total_seconds())} seconds'"

    def run(sql: str) -> list[tuple[object, ...]]:
        return retrying(lambda: cursor.execute(sql).fetchall())

    run(f"CALL ducklake_flush_inlined_data({_literal(ALIAS)})")
    run(f"CALL ducklake_merge_adjacent_files({_literal(ALIAS)})")
    expired = run(f"CALL ducklake_expire_snapshots({_literal(ALIAS)}, "
                  f"older_than => {older_than})")
    removed = run(f"CALL ducklake_cleanup_old_files({_literal(ALIAS)}, "
                  f"older_than => {older_than})")
    return LakeMaintenance(expired_snapshots=len(expired),
                           files_removed=len(removed),
                           seconds=time.perf_counter() - started)
