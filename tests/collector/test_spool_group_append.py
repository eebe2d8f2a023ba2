"""One spool append of many requests (what the spool writer does under load).

The requests are written from their own buffers (``os.writev``, in calls of at most a
few hundred buffers), not joined first: every record must still land whole and in order,
readable after a reopen.
"""

from __future__ import annotations

import time
from pathlib import Path

from collector.spool import Spool, SpooledRequest


def _requests(count: int) -> list[SpooledRequest]:
    # payloads of different lengths (an empty one too), so a record cut or shifted at a
    # buffer boundary would not read back
    return [SpooledRequest("traces" if n % 3 else "logs", bytes([n % 251]) * (n * 37 % 1000),
                           n, time.time_ns()) for n in range(count)]


def test_a_group_of_more_requests_than_one_writev_takes_is_appended_whole(
        tmp_path: Path) -> None:
    requests = _requests(700)  # 1,400 buffers: more than one writev call
    spool = Spool(tmp_path / "group.spool")
    end = spool.append(requests)
    remembered = spool.read(0, 10**9, 10**12)  # what this process appended: not re-read
    some = spool.read(remembered[3].end, 50, 10**12)
    spool.close()
    reopened = Spool(tmp_path / "group.spool")
    try:
        assert reopened.end == end
        entries = reopened.read(0, 10**9, 10**12)  # read back and checked from the file
        assert [(e.signal, e.items, e.read_payload()) for e in entries] == [
            (r.signal, r.items, r.payload) for r in requests]
        assert reopened.corrupt_records == 0
        assert remembered == entries
        # request n holds n items: 4 + ... + 10 = 49, so the 50-item limit ends after 11
        assert some == reopened.read(entries[3].end, 50, 10**12) == entries[4:12]
    finally:
        reopened.close()


def test_groups_follow_each_other_across_a_segment_rotation(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "rotating.spool", segment_bytes=50_000)
    first, second = _requests(120), _requests(90)
    spool.append(first)
    spool.append(second)
    try:
        entries = spool.read(0, 10**9, 10**12)
        assert [e.read_payload() for e in entries] == [r.payload for r in first + second]
        assert len({e.path for e in entries}) == 2
    finally:
        spool.close()
