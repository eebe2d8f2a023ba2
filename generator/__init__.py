"""The generator: budgeted simulation, grading and exports (not built yet)."""

__all__: list[str] = []
