"""What an ask says about earlier attempts: the history axis reads it (``repeat_visit``,
``prior_failure``, ``prior_partial_action``; :mod:`processor.axes`), so the learned stance
reader does not (:func:`processor.stance_learned.normalise`): a calm "I'm asking again" or
"it didn't go through before" is history, not frustration, and one cue should not move
two axes."""

from __future__ import annotations

import re

REPEAT_CONTACT = re.compile(
    r"\bagain\b|already contacted|last time|still not|second time", re.I)
"""A first ask that mentions an earlier contact (``repeat_visit``)."""
PRIOR_FAILURE = re.compile(
    r"\b(?:tried|attempted|did)\b[^.!?]{0,60}\b(?:before|earlier|already|last time|"
    r"yesterday)\b[^.!?]{0,40}\b(?:fail|didn'?t (?:go through|work)|did not (?:go through|"
    r"work)|error|no luck|never went through)|\b(?:failed|didn'?t go through|did not go "
    r"through|didn'?t work|did not work|never went through|got an error)\b[^.!?]{0,40}"
    r"\b(?:before|earlier|last time|yesterday|when i tried)\b", re.I)
"""An ask that says it was tried before and failed (``prior_failure``)."""
PRIOR_PARTIAL = re.compile(
    r"\b(?:(?:part|some|half) of (?:it|this|that|(?:the|my) (?:order|refund|items?|booking|"
    r"request|change|payment)s?)|only (?:some|part|half))"
    r"\b[^.!?]{0,40}\b(?:done|went through|processed|completed|happened|worked)\b|"
    r"\bpartially (?:done|processed|completed|refunded|cancell?ed|updated)\b", re.I)
"""An ask that says part of it was done before (``prior_partial_action``)."""

HISTORY_CUES = (PRIOR_FAILURE, PRIOR_PARTIAL, REPEAT_CONTACT)
"""Every cue the history axis reads in an ask."""


def without_history(text: str) -> str:
    """``text`` with what the history axis reads in it left out."""
    for cue in HISTORY_CUES:
        text = cue.sub(" ", text)
    return text
