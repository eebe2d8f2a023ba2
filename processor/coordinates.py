"""How a set of coordinates is written: ``tool=cancel_order & world_state=missing``.

Situations, map cells and the generator's planned cells are all named this way; the name
is what joins a rollout's lineage to the failure map, so it is written in one place. A
module of its own (no imports) so that light callers do not load the map's machinery.
"""

from __future__ import annotations

from collections.abc import Iterable


def coordinate_label(coordinates: Iterable[tuple[str, str]]) -> str:
    """``a=x & b=y``, axes sorted by name."""
    return " & ".join(f"{axis}={value}" for axis, value in sorted(coordinates))
