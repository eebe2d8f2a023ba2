"""A dead-letter replay killed between storing its letters and removing them from the
dead-letter files: the next replay stores nothing twice, rows or commit bookkeeping.

The crash is real: ``tracemill dead-letters replay`` runs in a subprocess that SIGKILLs
itself where the replay starts rewriting the dead-letter files
(:func:`collector.dead_letters.keep_only`, the one seam replaced), after every letter's
transaction committed; DuckDB then recovers the store from its write-ahead log.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from collector.dead_letters import read_dead_letters
from collector.pipeline import spool_folder
from tests.collector.test_dead_letter_commands import (
    GARBAGE,
    _count,
    _older_decoder_failed_on,
    _spool,
    _store_spool,
)
from tests.support.otlp import genai_span, log_request, trace_request
from tracemill.cli import main

pytestmark = pytest.mark.integration

_KILLED_BEFORE_THE_FILES = textwrap.dedent("""
    import os, signal, sys
    import collector.dead_letters
    from tracemill.cli import main

    def crash(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    collector.dead_letters.keep_only = crash
    sys.exit(main(["dead-letters", "replay", "--db", sys.argv[1]], environ={}))
""")


def _commits(db: Path) -> tuple[int, int, int, int]:
    """(commit rows, requests, received items, duplicate items) in collector_commits."""
    return (_count(db, "SELECT count(*) FROM collector_commits"),
            _count(db, "SELECT coalesce(sum(requests), 0) FROM collector_commits"),
            _count(db, "SELECT coalesce(sum(received_items), 0) FROM collector_commits"),
            _count(db, "SELECT coalesce(sum(duplicate_items), 0) FROM collector_commits"))


def test_a_replay_killed_before_removing_its_letters_counts_each_commit_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.duckdb"
    _spool(db, [("traces", trace_request([genai_span("stored before")]).SerializeToString())])
    _store_spool(db)
    spans = trace_request([genai_span("one"), genai_span("two")]).SerializeToString()
    logs = log_request(["hello"]).SerializeToString()
    _older_decoder_failed_on(db, [("traces", spans), ("traces", GARBAGE), ("logs", logs)])
    folder = spool_folder(db)
    rows, requests, received, duplicates = _commits(db)

    killed = subprocess.run([sys.executable, "-c", _KILLED_BEFORE_THE_FILES, str(db)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # it died after its commits and before the files changed: every letter is still there
    assert len(read_dead_letters(folder).letters) == 3
    assert _count(db, "SELECT count(*) FROM spans") == 3
    assert _commits(db) == (rows + 2, requests + 2, received + 3, duplicates)

    # the listing says which letters are stored already (the two that decode now)
    capsys.readouterr()
    assert main(["dead-letters", "list", "--db", str(db)], environ={}) == 0
    assert capsys.readouterr().out.count("already stored by a replay that was interrupted") == 2
    assert main(["dead-letters", "list", "--db", str(db), "--json"], environ={}) == 0
    listed = json.loads(capsys.readouterr().out)["dead_letters"]
    assert [letter["stored_by_replay"] for letter in listed] == [True, False, True]

    assert main(["dead-letters", "replay", "--db", str(db)], environ={}) == 1  # GARBAGE
    out = capsys.readouterr().out
    # the letters the killed replay stored are counted once, as the store holds them once
    assert _commits(db) == (rows + 2, requests + 2, received + 3, duplicates)
    assert "replayed 2 of 3 dead letters" in out
    assert "2 had been stored by a replay that was interrupted" in out
    assert _count(db, "SELECT count(*) FROM spans") == 3
    assert _count(db, "SELECT count(*) FROM log_records") == 1
    left = read_dead_letters(folder)
    assert [letter.read_payload(folder) for letter in left.letters] == [GARBAGE]

    # and a third replay has only the undecodable one left
    assert main(["dead-letters", "replay", "--db", str(db)], environ={}) == 1
    assert "replayed 0 of 1 dead letter:" in capsys.readouterr().out
    assert _commits(db) == (rows + 2, requests + 2, received + 3, duplicates)
