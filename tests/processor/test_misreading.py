"""The stance reader's known confusions, as the failure map reads them (processor/_misreading)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import orjson
import pytest

from processor._misreading import (
    CONFUSION_RESOURCE,
    explained_by,
    misreads_for,
    parse_confusion,
)
from processor.options import ProcessOptions
from processor.run import _fingerprint
from processor.stance_learned import ReaderFileError, reader_digest
from tracemill.store import open_store


def _shipped() -> bytes:
    package, path = CONFUSION_RESOURCE
    return resources.files(package).joinpath(path).read_bytes()


def test_the_shipped_confusions_were_measured_for_the_shipped_reader() -> None:
    # a new reader must come with its own confusions (bench/stance_confusion.py --split dev8
    # --framed tau2 --save-confusion): else the map would explain cores by another
    # reader's mistakes
    reader, misreads = parse_confusion(_shipped(), "shipped")
    assert reader == reader_digest()
    assert set(misreads) == {"adversarial", "frustrated", "hurried", "unsure", "mistaken",
                             "conflicting", "ordinary"}
    # out of sample and framed: a request that contradicts itself is read as a mistaken
    # premise more often than the other way round
    assert misreads["conflicting"]["mistaken"] > misreads["mistaken"]["conflicting"]


def test_counts_are_scaled_by_the_readings_that_were_right() -> None:
    data = orjson.dumps({"reader": "abc", "counts": {
        "conflicting": {"conflicting": 20, "mistaken": 8, "ordinary": 12},
        "unsure": {"unsure": 0, "ordinary": 5}}})
    reader, misreads = parse_confusion(data, "x.json")
    assert reader == "abc"
    assert misreads == {"conflicting": {"mistaken": 0.4, "ordinary": 0.6}}


@pytest.mark.parametrize("data", [b"not json", b'{"counts": {}}', b'{"reader": 1, "counts": {}}',
                                  b'{"reader": "a", "counts": {"x": {"y": 1}}}'])
def test_a_file_that_is_not_a_confusion_file_says_how_to_rebuild_it(data: bytes) -> None:
    with pytest.raises(ReaderFileError, match=r"x\.json: not a stance confusion file .*"
                                         r"bench/stance_confusion\.py"):
        parse_confusion(data, "x.json")


def test_a_core_the_confusions_account_for_is_explained() -> None:
    misreads = {"conflicting": {"mistaken": 0.4, "hurried": 0.05}}
    # 14 members failing 6 at a 7% rate outside: 1 expected, plus 0.4 of the conflicting
    # core's 10.7 excess failures: 5.3 expected, 6 seen
    assert explained_by(misreads, "mistaken", 14, 6, 0.07, {"conflicting": 10.7})
    # the same failures on a stance the reader seldom puts conflicting asks in: a group
    assert not explained_by(misreads, "hurried", 14, 6, 0.07, {"conflicting": 10.7})
    # far more than the confusions put there: a group of its own
    assert not explained_by(misreads, "mistaken", 14, 12, 0.07, {"conflicting": 10.7})
    # never by a smaller core, nor by a stance whose confusions are unknown
    assert not explained_by(misreads, "mistaken", 14, 6, 0.07, {"conflicting": 4.0})
    assert not explained_by(misreads, "mistaken", 14, 6, 0.07, {"hurried": 10.7})


def test_the_confusions_apply_only_to_conversations_the_reader_read(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m.duckdb")
    try:
        def stored(options: str) -> dict[str, dict[str, float]]:
            with store.transaction() as cursor:
                cursor.execute("UPDATE processor_state SET options = ?", [options])
                return {k: dict(v) for k, v in misreads_for(cursor).items()}

        assert stored("") == {}  # written without processing: read by nobody known
        assert stored("not json") == stored("[1]") == {}
        _, shipped = parse_confusion(_shipped(), "shipped")
        assert stored(_fingerprint(ProcessOptions())) == shipped
        # relabelled by a stance model, or read by another reader
        modelled = orjson.loads(_fingerprint(ProcessOptions()))
        assert stored(orjson.dumps({**modelled, "stance_model": "openai:gpt-4o-mini"})
                      .decode()) == {}
        assert stored(orjson.dumps({**modelled, "stance_reader": "0123456789ab"})
                      .decode()) == {}
    finally:
        store.close()
