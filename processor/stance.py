"""The user-stance axis: how the person comes at the agent, read from their first ask.

Values: ``adversarial``, ``frustrated``, ``hurried``, ``mistaken``, ``unsure``,
``conflicting``, ``ordinary``; ``unknown`` when the ask was not captured.
"""

from __future__ import annotations

STANCE_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("adversarial", ("ignore previous", "ignore your instructions", "ignore all previous",
                     "system prompt", "pretend you", "you are now", "jailbreak")),
    ("frustrated", ("!!!", "ridiculous", "third time", "unacceptable", "useless",
                    "fed up", "what is wrong with")),
    ("hurried", ("asap", "right now", "urgent", "quickly", "hurry", "immediately")),
    ("mistaken", ("i was told", "wasn't it", "i thought", "isn't it supposed")),
    ("unsure", ("not sure", "i think", "maybe", "don't know if", "possibly")),
    ("conflicting", ("but also", "and also cancel", "but keep", "or rather")),
)
"""Keyword lists of the default stance classifier, checked in this order."""

STANCES: tuple[str, ...] = ("ordinary", *(name for name, _ in STANCE_KEYWORDS))
"""Every stance value a captured ask can get, ``ordinary`` first."""


def classify_stance(text: str | None) -> str:
    """The default user-stance classifier (keywords, see STANCE_KEYWORDS)."""
    if text is None:
        return "unknown"
    lowered = text.lower()
    for stance, keywords in STANCE_KEYWORDS:
        if any(keyword in lowered for keyword in keywords):
            return stance
    return "ordinary"
