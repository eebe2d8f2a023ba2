"""``tracemill dead-letters``: list, replay and discard spooled requests that could not be
decoded, with a real spool, a real store and the real command line.

Dead letters are made as the collector makes them: requests in the spool before a
collector starts (as an older collector acknowledged them), which its materializer moves
aside; a request an older decoder failed on, which today's decoder reads, is moved aside
through the same :class:`~collector.dead_letters.DeadLetters` the materializer uses.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.dead_letters import INDEX, RECORDS, DeadLetters, read_dead_letters
from collector.pipeline import spool_folder
from collector.spool import Spool, SpooledRequest
from tests.collector.serving import ServeProcess
from tests.support.otlp import genai_span, log_request, trace_request
from tracemill.cli import build_parser, main
from tracemill.store import open_store

pytestmark = pytest.mark.integration

GARBAGE = b"\x0a\xff\xff\xff\xff\x0fSECRET-PAYLOAD"
"""Not an ExportTraceServiceRequest (a field runs past the end), and never to be printed."""


@pytest.fixture(autouse=True)
def _keep_logging() -> Iterator[None]:
    """main() points tracemill's logs at the captured stderr; put them back afterwards."""
    logger = logging.getLogger("tracemill")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["dead-letters", *argv], environ={})
    out, err = capsys.readouterr()
    assert "SECRET" not in out + err and "where is order" not in out + err
    return code, out, err


def _spool(db: Path, requests: list[tuple[str, bytes]]) -> None:
    """Requests in the spool as an older collector acknowledged them."""
    spool = Spool(spool_folder(db))
    spool.append([SpooledRequest("traces" if signal == "traces" else "logs", payload, 1,
                                 time.time_ns()) for signal, payload in requests])
    spool.close()


def _store_spool(db: Path) -> None:
    """What `serve` does at start: store the spool; undecodable requests are moved aside."""
    assert main(["migrate", "--db", str(db)], environ={}) == 0
    assert main(["stats", "--db", str(db)], environ={}) == 0


def _count(db: Path, sql: str) -> int:
    store = open_store(db, read_only=True)
    try:
        return int(store.query(sql)[0][0])
    finally:
        store.close()


def _older_decoder_failed_on(db: Path, requests: list[tuple[str, bytes]]) -> None:
    """Spooled requests an older decoder could not read, moved aside as the materializer
    does; the store's cursor then moves past them (their spool segment is kept)."""
    folder = spool_folder(db)
    spool = Spool(folder)
    start = spool.end
    spool.append([SpooledRequest("traces" if signal == "traces" else "logs", payload, 2,
                                 1_700_000_000_000_000_000) for signal, payload in requests])
    letters = DeadLetters(folder)
    for entry in spool.read(start, 10**9, 2**40):
        letters.add(entry, entry.read_payload(), "ValueError: an older decoder failed")
    spool.close()
    store = open_store(db)
    try:
        store.query("UPDATE collector_spool_cursor SET position = ?", [spool.end])
    finally:
        store.close()


def test_an_undecodable_request_is_listed_still_fails_on_replay_and_is_discarded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.duckdb"
    good = trace_request([genai_span("good")]).SerializeToString()
    _spool(db, [("traces", good), ("traces", GARBAGE)])
    _store_spool(db)
    capsys.readouterr()
    assert _count(db, "SELECT count(*) FROM spans") == 1

    code, out, _ = _run(capsys, "list", "--db", str(db))
    assert code == 0
    assert out.startswith(f"1 dead letter in {spool_folder(db)}")
    assert f"traces  1 items  {len(GARBAGE)} bytes" in out
    assert "not a valid protobuf ExportTraceServiceRequest" in out
    code, out, _ = _run(capsys, "list", "--db", str(db), "--json")
    listed = json.loads(out)
    assert listed["count"] == 1 and listed["damaged_lines"] == 0
    (letter,) = listed["dead_letters"]
    assert (letter["signal"], letter["items"], letter["payload_bytes"]) == (
        "traces", 1, len(GARBAGE))
    assert letter["received"].endswith("Z") and letter["moved_aside"].endswith("Z")

    # still undecodable: it stays, with the error of this attempt; nothing is stored
    code, out, _ = _run(capsys, "replay", "--db", str(db))
    assert code == 1
    assert "replayed 0 of 1 dead letter" in out and "still failing: traces request" in out
    assert "InvalidRequest: the body is not a valid protobuf" in out
    assert "dead-letters discard --yes" in out
    after = read_dead_letters(spool_folder(db))
    assert len(after.letters) == 1 and after.letters[0].reason.startswith("InvalidRequest: ")
    assert after.letters[0].read_payload(spool_folder(db)) == GARBAGE  # kept intact
    assert _count(db, "SELECT count(*) FROM spans") == 1

    code, _, err = _run(capsys, "discard", "--db", str(db))
    assert code == 2 and "without --yes" in err and "1 dead letter" in err
    assert len(read_dead_letters(spool_folder(db)).letters) == 1
    code, out, _ = _run(capsys, "discard", "--db", str(db), "--yes")
    assert code == 0 and f"removed 1 dead letter (1 items, {len(GARBAGE)} bytes)" in out
    assert not list(spool_folder(db).glob("dead-letter*"))
    code, out, _ = _run(capsys, "list", "--db", str(db))
    assert code == 0 and out.startswith("0 dead letters")
    assert DeadLetters(spool_folder(db)).count == 0


def test_replay_stores_what_the_current_decoder_reads_exactly_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.duckdb"
    _spool(db, [("traces", trace_request([genai_span("stored before")]).SerializeToString())])
    _store_spool(db)
    capsys.readouterr()
    bad_id = genai_span("bad id")
    bad_id.span_id = b"\x01" * 7
    spans = trace_request([genai_span("one"), genai_span("two"), bad_id]).SerializeToString()
    logs = log_request(["hello", "again"]).SerializeToString()
    _older_decoder_failed_on(db, [("traces", spans), ("traces", GARBAGE), ("logs", logs)])
    folder = spool_folder(db)
    before = {path.name: path.read_bytes() for path in folder.glob("dead-letter*")}
    requests_before = _count(db, "SELECT count(*) FROM collector_commits")
    code, out, _ = _run(capsys, "list", "--db", str(db))
    assert out.startswith("3 dead letters") and out.count("older decoder failed") == 3

    code, out, err = _run(capsys, "replay", "--db", str(db))
    assert code == 1, err  # the garbage still fails
    assert ("replayed 2 of 3 dead letters: stored 2 spans and 2 log records (0 items were "
            "already stored, 1 refused for bad ids or enums)") in out
    assert _count(db, "SELECT count(*) FROM spans") == 3
    assert _count(db, "SELECT count(*) FROM log_records") == 2
    # replayed like any export: counted in collector_commits (tracemill stats)
    assert _count(db, "SELECT count(*) FROM collector_commits") == requests_before + 2
    assert _count(db, "SELECT sum(rejected_items) FROM collector_commits") == 1
    left = read_dead_letters(folder)
    assert [(letter.signal, letter.payload_bytes) for letter in left.letters] == [
        ("traces", len(GARBAGE))]
    assert left.letters[0].read_payload(folder) == GARBAGE
    assert {path.name for path in folder.glob("dead-letter*.records")} == {
        left.letters[0].records} != {RECORDS}

    # a crash after the commits, before the files were rewritten: the replay runs again
    # and stores nothing twice, rows or commits (test_dead_letter_crash.py kills one)
    for path in folder.glob("dead-letter*"):
        path.unlink()
    for name, content in before.items():
        (folder / name).write_bytes(content)
    code, out, _ = _run(capsys, "replay", "--db", str(db))
    assert "replayed 2 of 3 dead letters: stored 0 spans and 0 log records (0 items" in out
    assert "2 had been stored by a replay that was interrupted" in out
    assert _count(db, "SELECT count(*) FROM collector_commits") == requests_before + 2
    assert _count(db, "SELECT count(*) FROM spans") == 3
    assert _count(db, "SELECT count(*) FROM log_records") == 2
    store = open_store(db, read_only=True)
    try:
        names = [row[0] for row in store.query("SELECT name FROM spans ORDER BY name")]
    finally:
        store.close()
    assert names == ["one", "stored before", "two"]

    # a collector started afterwards counts the dead letter that stays, and one it moves
    # aside next goes into dead-letter.records beside the rewritten file; both read back
    _spool(db, [("traces", GARBAGE + b"2")])
    _store_spool(db)
    left = read_dead_letters(folder)
    assert [letter.records == RECORDS for letter in left.letters] == [False, True]
    assert [letter.read_payload(folder) for letter in left.letters] == [GARBAGE, GARBAGE + b"2"]
    assert DeadLetters(folder).count == 2


def test_a_damaged_index_line_is_reported_and_a_cut_record_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.duckdb"
    _spool(db, [("traces", GARBAGE)])
    _store_spool(db)
    capsys.readouterr()
    folder = spool_folder(db)
    with (folder / INDEX).open("ab") as handle:
        handle.write(b"not json\n")
    records = folder / RECORDS
    records.write_bytes(records.read_bytes()[:-3])
    code, out, err = _run(capsys, "list", "--db", str(db))
    assert code == 0 and "1 damaged lines" in err
    assert "cannot be replayed: dead-letter.records ends inside its record" in out
    code, out, _ = _run(capsys, "replay", "--db", str(db))
    assert code == 1 and "cut short or damaged" in out
    # the damaged line's request may be in the records file: a replay keeps the file
    assert records.exists()
    code, out, _ = _run(capsys, "discard", "--db", str(db), "--yes")
    assert code == 0 and "removed 1 dead letter" in out
    assert not list(folder.glob("dead-letter*"))


def test_replay_and_discard_refuse_while_serve_holds_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "served.duckdb"
    _spool(db, [("traces", GARBAGE)])
    serve = ServeProcess(db, tmp_path, "--log-level", "warning")
    try:
        deadline = time.monotonic() + 60
        while not (spool_folder(db) / INDEX).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        code, out, _ = _run(capsys, "list", "--db", str(db))
        assert code == 0 and out.startswith("1 dead letter")
        assert "not known while another process holds the store" in out
        for argv in (("replay",), ("discard", "--yes")):
            code, _, err = _run(capsys, *argv, "--db", str(db))
            assert code == 3, err
            assert f"running `tracemill serve` (process {serve.pid}" in err
            assert "Stop it" in err and f"dead-letters {argv[0]}` again" in err
        assert len(read_dead_letters(spool_folder(db)).letters) == 1
    finally:
        code, log = serve.stop()
    assert code == 0, log
    code, out, _ = _run(capsys, "discard", "--db", str(db), "--yes")
    assert code == 0 and "removed 1 dead letter" in out


def test_every_dead_letters_action_and_option_has_help() -> None:
    """The CLI help test looks one level deep; these actions are two."""
    def choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return dict(action.choices)

    letters = choices(build_parser())["dead-letters"]
    actions = choices(letters)
    assert set(actions) == {"list", "replay", "discard"}
    undocumented = [f"{name} {action.dest}" for name, sub in actions.items()
                    for action in sub._actions if not action.help]
    assert undocumented == []
