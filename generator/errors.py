"""Errors of the generator.

::

    GeneratorError (tracemill.errors.TracemillError)
    ├── SpecError          a backend / grader spec string cannot be understood or loaded
    ├── MissingKeyError    a provider's API key variable is not set (names the variable)
    ├── BackendError       a model call failed for good (after retries)
    │   └── BackendProtocolError  the provider answered something that is not its protocol
    ├── BudgetError        a budget cannot be kept (no price for a model, zero budget)
    ├── ToolSchemaError    a supplied tool schema file is malformed (names file and tool)
    ├── NothingToPlan      the store holds no failure map and no tools to plan from
    └── GraderError        a grader gave no usable verdict (names the grader and the field)
"""

from __future__ import annotations

from tracemill.errors import TracemillError


class GeneratorError(TracemillError):
    """Base of the generator's errors."""


class SpecError(GeneratorError):
    """A spec string (``openai:gpt-4o-mini``, ``python:pkg.mod:fn``) is not usable."""


class MissingKeyError(GeneratorError):
    """A backend needs an API key from an environment variable that is not set."""

    def __init__(self, spec: str, variable: str) -> None:
        super().__init__(
            f"{spec} needs an API key: set the environment variable {variable} "
            "(or use --agent offline to run without a key)"
        )
        self.variable = variable


class BackendError(GeneratorError):
    """A model call failed after its retries (names the backend, status and body)."""


class BackendProtocolError(BackendError):
    """A provider's answer does not follow its protocol (malformed JSON, missing fields)."""


class BudgetError(GeneratorError):
    """The budget cannot be kept or accounted (for example: no price for a model)."""


class ToolSchemaError(GeneratorError):
    """A supplied tool schema is malformed; names the file, the tool and the problem."""


class NothingToPlan(GeneratorError):
    """Neither a failure map nor tool schemas are in the store, and none were supplied."""


class GraderError(GeneratorError):
    """A grader could not give a verdict: a Python grader raised or returned an invalid
    mapping, or a judge's answer stayed unparseable after one retry (names the grader)."""
