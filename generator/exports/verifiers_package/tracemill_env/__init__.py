# mypy: ignore-errors
"""Tracemill's exported rollouts as a verifiers environment (v1 Taskset API)."""

from .taskset import TracemillTaskset

__all__ = ["TracemillTaskset"]
