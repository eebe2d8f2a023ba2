"""The spans of an ask the stance reader also reads on their own: its first and its last
sentences (see ``SPAN_PROBABILITY`` in :mod:`processor.stance_learned`)."""

from __future__ import annotations

import re

__all__ = ["SPAN_SENTENCES", "SPAN_WORDS", "text_spans"]

SPAN_WORDS = 10
"""Words a span needs to be read on its own: a sign-off ("Kind regards, Hana") or a bare
fact ("My phone number is 555-123-2002.") is too little text for the model, which was
fitted on whole openings, and reads as a stance too often (of the generator's ordinary
openings, 18% read as a stance on the whole ask alone, 21% with spans of 5 words or more,
39% with the first version of spans, 3 words or more with ``!`` and ``?`` counted). 10
since session 11: chosen by ``python bench/stance_span_cv.py --span-words 5,8,10,12
--span-probability 0.7`` (5-fold cross-validation on the training splits; traffic-weighted
macro F1 bare 0.788 / 0.792 / 0.796 / 0.798, framed 0.682 / 0.687 / 0.691 / 0.691, plain
framed asks kept plain 0.78 / 0.79 / 0.80 / 0.81); the reader trained on ``dev8`` read the
7-word fact above as ``mistaken`` at 0.71."""
SPAN_SENTENCES = 4
"""Sentences a span holds at most: the first or last few, so a pasted document costs a
few readings, not one per sentence."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
"""Where a sentence ends: after ``.``, ``!`` or ``?`` and a space, or at a line break
(linear: no run of spaces is tried twice)."""
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def text_spans(text: str, limit: int) -> list[str]:
    """The first and the last one to :data:`SPAN_SENTENCES` sentences of an ask, each
    without the rest (none for a single sentence), of at least :data:`SPAN_WORDS` words;
    the first ones from its first ``limit`` characters, the last ones from its last
    ``limit`` (a long pasted log between them is not read, and a sentence cut at either
    limit is not a span)."""
    head, tail = _sentences(text[:limit]), _sentences(text[-limit:])
    found = [" ".join(head[:k]) for k in range(1, min(len(head), SPAN_SENTENCES + 1))]
    found += [" ".join(tail[-k:]) for k in range(1, min(len(tail), SPAN_SENTENCES + 1))]
    return [span for span in found if len(_WORD.findall(span)) >= SPAN_WORDS]
