"""How conversations are graded and versioned, and how much generation explores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from processor.assemble import VERSION_SOURCES

if TYPE_CHECKING:  # worker processes import this module: the settings' imports are heavy
    from tracemill.config import Settings


@dataclass(frozen=True)
class ProcessOptions:
    """How conversations are graded and versioned, and how much generation explores."""

    reward_keys: tuple[str, ...] = ("reward", "tracemill.reward")
    """Span attributes read as rewards."""
    threshold: float = 0.5
    """A reward or score at or above it passes."""
    version_sources: tuple[str, ...] = VERSION_SOURCES
    """Where the model version comes from, in order of precedence."""
    exploration: float = 0.2
    """Share of a generation budget kept for cells that do not fail."""
    min_support: int = 10
    """Graded conversations a situation needs in the latest period before it is called
    new, persistent or fixed, and in the previous one too before persistent or fixed
    (below: uncertain, low support)."""
    policy_clauses: tuple[tuple[str, str], ...] = ()
    """(id, text) of each clause of the user's policy document, in document order (empty:
    the policy_rule axis comes from evaluation names and failure classes only). Part of
    the rebuild fingerprint, so a changed policy rebuilds the conversations."""
    stance_model: str | None = None
    """A backend spec (``openai:gpt-4o-mini``, ``ollama:MODEL``, ...) that labels each first
    ask's stance after the patterns (:mod:`processor.stance_model`); None: patterns only.
    Part of the rebuild fingerprint, so turning it on or off rebuilds the conversations
    (the model's answers are cached: it is not asked again)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ProcessOptions:
        """The options a command's settings ask for (reads the policy file, when set)."""
        clauses: tuple[tuple[str, str], ...] = ()
        if settings.policy_file is not None:
            from processor.policy import load_policy

            clauses = tuple((clause.id, clause.text)
                            for clause in load_policy(settings.policy_file))
        if settings.stance_model is not None:  # a malformed spec fails here, before any work
            from processor.stance_model import check_spec

            check_spec(settings.stance_model)
        return cls(reward_keys=settings.reward_keys, threshold=settings.pass_threshold,
                   version_sources=settings.model_version_sources,
                   exploration=settings.exploration_share, policy_clauses=clauses,
                   stance_model=settings.stance_model)
