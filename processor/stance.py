"""The user-stance axis: how the person comes at the agent, read from their first ask.

Values: ``adversarial``, ``frustrated``, ``hurried``, ``mistaken``, ``unsure``,
``conflicting``, ``ordinary``; ``unknown`` when the ask was not captured.

The default reader (:func:`classify_stance`) is :mod:`processor.stance_learned`: a linear
model over the ask's words, character grams and a static word table (numpy only, weights
shipped with the package), combined with the hand-written patterns below by the rule its
training chose (``bench/train_stance_reader.py``; the rule is recorded in the weights
file). :func:`pattern_stance` is the patterns alone (:mod:`processor._stance_rules`).

The patterns score the ask against weighted intent
families (:mod:`processor._stance_patterns`): imperatives to bypass or override rules and
checks, claims of authority, requests for other people's data or the agent's
instructions, falsified records and threats for an exception (adversarial), and indirect
pressure read by its frame (:mod:`processor._stance_leverage`: a consequence plus a
condition, someone's approval plus a demand to act on it, the rule dismissed, flattery as
a lever); exasperation words, repeated contacts, sarcasm, ``!!``/``??`` and shouted words
(frustrated); time windows, deadlines, demands for brevity, and time budgets said without
"urgent" (minutes to spare, someone waiting, a dying battery, "can't stay long")
(hurried); hedges and either-or questions (unsure); premises asserted as given ("you
promised", "I read on your site", "that's the law", "..., right?") (mistaken); asks that
contradict themselves or flip back and forth (conflicting). Structure as well as words
(:mod:`processor._stance_inference`, :mod:`processor._stance_acts`): a conclusion drawn
from a premise and asserted as settled ("..., so my bill should be zero", "which means I'm
covered"), a rule stated as given and built on, the same day given two months (mistaken);
something ended and then asked to go on, refused and then asked for, the opposite state
kept (conflicting); a bypass without naming the check, an order in the first person, a
record asked to say what is admitted untrue, secrecy (adversarial). Guards take away the score
of trigger words used neutrally (a question about a policy, urgent care, "no rush",
prompt injection as a coding topic, a polite "not sure who handles this, but please ...").

The patterns' decision: adversarial when its score reaches :data:`ADVERSARIAL_AT` (it wins
over every other stance: "skip the ID check, I'm in a hurry" is adversarial); otherwise the stance
with the highest score of at least :data:`STANCE_AT` (ties: :data:`PRECEDENCE`); else
``ordinary``. An optional model-based pass can replace the reader's result
(:mod:`processor.stance_model`).

Measured on the independent corpus in ``bench/data/stance`` by
``bench/stance_confusion.py``.
"""

from __future__ import annotations

from processor._stance_rules import (
    ADVERSARIAL_AT,
    PRECEDENCE,
    STANCE_AT,
    STANCES,
    pattern_stance,
    stance_evidence,
    stance_scores,
)
from processor.stance_learned import read_stance

__all__ = ["ADVERSARIAL_AT", "PRECEDENCE", "STANCES", "STANCE_AT", "classify_stance",
           "pattern_stance", "stance_evidence", "stance_scores"]


def classify_stance(text: str | None) -> str:
    """The default user-stance reader (the learned model with the patterns, see the
    module); ``unknown`` when no ask was captured."""
    if text is None:
        return "unknown"
    return read_stance(text)
