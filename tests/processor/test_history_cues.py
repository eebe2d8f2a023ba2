"""The history axis's contact cue on independently written, labelled asks
(``bench/data/history``, measured by ``bench/history_cues.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from processor._history_cues import READER_CUES, REPEAT_CONTACT, says_contact
from processor.stance_learned import normalise

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "history"


def _scores(split: str, cue: re.Pattern[str]) -> tuple[float, float]:
    rows = [json.loads(line) for line in (DATA / f"{split}.jsonl").read_text().splitlines()
            if line.strip()]
    said = [bool(cue.search(row["text"])) for row in rows]
    real = [bool(row["contact"]) for row in rows]
    hits = sum(s and r for s, r in zip(said, real, strict=True))
    return hits / max(1, sum(said)), hits / max(1, sum(real))


@pytest.mark.parametrize(("split", "precision", "recall"),
                         [("dev", 0.98, 0.98),    # the split the cue was written on
                          ("test", 0.93, 0.78)])  # report-only: 0.950 / 0.800 when written
def test_the_contact_cue_on_labelled_asks(split: str, precision: float, recall: float) -> None:
    p, r = _scores(split, REPEAT_CONTACT)
    assert p >= precision and r >= recall, (split, p, r)
    # the cue it replaced read any "again": most of what it found was no contact
    old_p, old_r = _scores(split, READER_CUES[2])
    assert old_p < 0.5 and old_r < 0.3, (split, old_p, old_r)


def test_the_stance_reader_still_leaves_out_what_it_was_trained_without() -> None:
    # the reader's weights were fitted on text without the earlier cue's words; changing the
    # history axis's cue must not change what the reader reads
    assert READER_CUES[2].pattern == r"\bagain\b|already contacted|last time|still not|" \
                                     r"second time"
    assert normalise("Internet dropped again, last time too") == "internet dropped , too"


def test_the_gated_cue_is_the_whole_pattern() -> None:
    # says_contact runs each alternative only where its words are: on every labelled ask of
    # both corpora it answers as the whole pattern does
    stance = Path(__file__).resolve().parents[2] / "bench" / "data" / "stance"
    texts = [json.loads(line)["text"] for folder in (DATA, stance)
             for path in sorted(folder.glob("*.jsonl"))
             for line in path.read_text().splitlines() if line.strip()]
    assert len(texts) > 5000
    said = [says_contact(text) for text in texts]
    assert said == [REPEAT_CONTACT.search(text) is not None for text in texts]
    assert 50 < sum(said) < len(texts) / 5
