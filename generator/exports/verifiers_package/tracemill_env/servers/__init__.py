# mypy: ignore-errors
"""Tool servers of the tracemill environment."""
