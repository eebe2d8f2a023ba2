"""Errors of the processor.

::

    ProcessorError (tracemill.errors.TracemillError)
    ├── LabelFileError   a label file cannot be read (names the file, line and column)
    └── UnknownVersion   a model version asked for is not in the store
"""

from __future__ import annotations

from tracemill.errors import TracemillError


class ProcessorError(TracemillError):
    """Base of the processor's errors."""


class LabelFileError(ProcessorError):
    """A label file is malformed; nothing of it was stored."""


class UnknownVersion(ProcessorError):
    """A model version named on the command line is not among the conversations."""
