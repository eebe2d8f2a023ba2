"""How the stance reader misreads, so the map can tell one group read as two stances from
two groups (*Misread cores* in :mod:`processor.situations`).

A group of people who all come at the agent one way is read right only in part: the reader
puts some of them under other stances, and not at random (a request that contradicts itself
is read as a mistaken premise far more often than as adversarial). When a broad situation's
failures show as two stance cores, the smaller may be the larger group's misread members.
``processor/data/stance_confusion.json`` holds the shipped reader's confusion counts on
openings it was not trained on, joined to plain asks as people write a first message
(written by ``python bench/stance_confusion.py --split dev8 --framed tau2
--save-confusion``), with the digest of the reader they were measured for. The map uses
them only for conversations that reader read: when the stored conversations were built by
another reader or relabelled by a stance model, nothing is explained by misreading.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache

import duckdb
import orjson

from processor.stance_learned import ReaderFileError, resource_bytes

__all__ = ["CONFUSION_RESOURCE", "MISREAD_ALPHA", "Misreads", "explained_by", "misreads_for",
           "parse_confusion"]

CONFUSION_RESOURCE = ("processor", "data/stance_confusion.json")
"""Package and path of the shipped reader's confusion counts."""
_FIX = "rebuild it with python bench/stance_confusion.py --split dev8 --framed tau2 " \
       "--save-confusion"

MISREAD_ALPHA = 0.05
"""A core is the misread members of a larger one unless it fails more than the reader's
confusions put there with probability below this (one-sided Poisson)."""

Misreads = Mapping[str, Mapping[str, float]]
"""stance -> other stance -> how many of that stance's members the reader puts under the
other for each one it reads right (the confusion count over the diagonal count)."""


def parse_confusion(data: bytes, where: str) -> tuple[str, Misreads]:
    """(the reader digest, the misreads) in a confusion file's bytes;
    :class:`~processor.stance_learned.ReaderFileError` (printed by the command line) saying
    what is wrong and how to rebuild it when it is not one."""
    try:
        parsed = orjson.loads(data)
        reader = parsed["reader"]
        counts = parsed["counts"]
        if not isinstance(reader, str) or not isinstance(counts, dict):
            raise TypeError("reader must be a string and counts an object")
        misreads: dict[str, dict[str, float]] = {}
        for stance, row in counts.items():
            right = row[stance]
            if right <= 0:
                continue  # never read right: nothing to scale its misreadings by
            misreads[stance] = {other: count / right for other, count in row.items()
                                if other != stance}
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise ReaderFileError(f"{where}: not a stance confusion file ({exc}); {_FIX}") from None
    return reader, misreads


@lru_cache(maxsize=1)
def _shipped() -> tuple[str, Misreads]:
    """The shipped file's reader and misreads; :class:`ReaderFileError` when it is missing
    or unreadable (a broken install, as for the reader's own files)."""
    package, path = CONFUSION_RESOURCE
    return parse_confusion(resource_bytes(CONFUSION_RESOURCE, _FIX), f"{package}/{path}")


def misreads_for(cursor: duckdb.DuckDBPyConnection) -> Misreads:
    """The shipped misreads when the stored conversations were read by the reader they were
    measured for, without a stance model (``processor_state.options``); else none."""
    rows = cursor.execute("SELECT options FROM processor_state").fetchall()
    if not rows or not rows[0][0]:
        return {}
    try:
        built = orjson.loads(rows[0][0])
    except orjson.JSONDecodeError:
        return {}  # not what this version writes: read by nobody it knows
    reader, misreads = _shipped()
    if not isinstance(built, dict) or built.get("stance_model") is not None or \
            built.get("stance_reader") != reader:
        return {}
    return misreads


def _at_least(count: int, mean: float) -> float:
    """P(X >= count) for X ~ Poisson(mean)."""
    if count <= 0:
        return 1.0
    if mean <= 0:
        return 0.0
    term = below = math.exp(-mean)
    for k in range(1, count):
        term *= mean / k
        below += term
    return max(0.0, 1.0 - below)


def explained_by(misreads: Misreads, stance: str, graded: int, failed: int, rate: float,
                 others: Mapping[str, float]) -> bool:
    """Whether a core of ``stance`` (``graded`` members, ``failed`` of them, against the
    ``rate`` outside its cell) fails no more than the reader's confusions put there from a
    larger core of another stance in the same cell and period (``others``: stance -> its
    excess failures), at :data:`MISREAD_ALPHA`."""
    mine = failed - graded * rate
    for other, excess in others.items():
        share = misreads.get(other, {}).get(stance)
        if share is None or excess <= mine:
            continue
        if _at_least(failed, graded * rate + excess * share) >= MISREAD_ALPHA:
            return True
    return False
