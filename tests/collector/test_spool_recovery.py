"""What a restart makes of the spool: a torn tail, released segments, the store's cursor.

A crash can leave part of a record after the last fsync'd one (never acknowledged); the
next open cuts it, the store's cursor stays inside the spool, and every complete record
is stored exactly once. Segments the store has passed are deleted, and what is appended
after a restart is stored, nothing twice. The real spool, materializer and DuckDB file.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from collector.backlog import store_spooled
from collector.pipeline import spool_folder
from collector.spool import Spool, SpooledRequest, record_header
from tests.support.otlp import genai_span, trace_request
from tracemill.config import Settings
from tracemill.store import load_sql, open_store

_SPANS = 16


def _request() -> tuple[SpooledRequest, set[str]]:
    spans = [genai_span() for _ in range(_SPANS)]
    payload = trace_request(spans).SerializeToString()
    return (SpooledRequest("traces", payload, _SPANS, time.time_ns()),
            {span.span_id.hex() for span in spans})


def _append(spool: Spool, count: int) -> set[str]:
    """Append ``count`` requests, one at a time (as acknowledged); their span ids."""
    appended: set[str] = set()
    for _ in range(count):
        request, ids = _request()
        spool.append([request])
        appended |= ids
    return appended


def _store(db: Path, max_commit_items: int = 20_000) -> tuple[int, list[str]]:
    """Store the spool as a restarted collector would; the cursor and the stored span ids."""
    store = open_store(db)
    try:
        store_spooled(store, Settings(db=db, max_commit_items=max_commit_items))
        position = int(store.query(load_sql("collector", "spool_cursor.sql"))[0][0])
    finally:
        store.close()
    with duckdb.connect(str(db), read_only=True) as connection:
        ids = [row[0] for row in connection.execute("SELECT span_id FROM spans").fetchall()]
    return position, ids


def test_a_torn_tail_is_cut_and_every_complete_record_is_stored_once(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    spool = Spool(spool_folder(db))
    acknowledged = _append(spool, 3)
    durable_end = spool.end
    spool.close()
    (segment,) = spool_folder(db).glob("*.seg")  # the one file the crash tore
    torn, torn_ids = _request()
    record = record_header(torn) + torn.payload
    with segment.open("ab") as handle:  # a crash in the middle of the next append
        handle.write(record[: len(record) // 2])

    position, stored = _store(db)
    assert position == durable_end  # inside the cut spool: nothing read twice or skipped
    assert set(stored) == acknowledged and len(stored) == len(acknowledged)
    assert segment.stat().st_size == durable_end

    spool = Spool(spool_folder(db))  # the next start appends right after the cut
    later, later_ids = _request()
    spool.append([later])
    spool.close()
    position, stored = _store(db)
    assert set(stored) == acknowledged | later_ids and len(stored) == len(set(stored))
    assert not torn_ids & set(stored)


def test_released_segments_and_a_restart_store_everything_once(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    folder = spool_folder(db)
    spool = Spool(folder, segment_bytes=8 * 1024)  # a new segment every request or two
    acknowledged = _append(spool, 12)
    end = spool.end
    spool.close()
    segments = len(list(folder.glob("*.seg")))
    assert segments > 4

    # commits of three requests each: segments behind each commit are deleted as it goes
    position, stored = _store(db, max_commit_items=3 * _SPANS)
    assert position == end
    assert sorted(stored) == sorted(acknowledged)
    left = sorted(folder.glob("*.seg"))
    assert len(left) == 1 and int(left[0].stem) <= end  # only the segment still written

    spool = Spool(folder, segment_bytes=8 * 1024)  # restart: the cursor lies in this spool
    assert spool.start <= position <= spool.end
    acknowledged |= _append(spool, 5)
    end = spool.end
    spool.close()
    position, stored = _store(db, max_commit_items=3 * _SPANS)
    assert position == end
    assert sorted(stored) == sorted(acknowledged)  # each once
