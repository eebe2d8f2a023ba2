"""Errors of the processor.

::

    ProcessorError (tracemill.errors.TracemillError)
    ├── LabelFileError   a label file cannot be read (names the file, line and column)
    ├── PolicyFileError  a policy document cannot be read or holds no clause (names the file)
    ├── UnknownVersion   a model version asked for is not in the store
    ├── UnknownConversation  a conversation id asked for is not in the store
    └── UnknownSituation     a situation id asked for is not in the failure map
"""

from __future__ import annotations

from tracemill.errors import TracemillError


class ProcessorError(TracemillError):
    """Base of the processor's errors."""


class LabelFileError(ProcessorError):
    """A label file is malformed; nothing of it was stored."""


class PolicyFileError(ProcessorError):
    """A policy document (``--policy FILE``) is missing, unreadable or holds no clause."""


class UnknownVersion(ProcessorError):
    """A model version named on the command line is not among the conversations."""


class UnknownConversation(ProcessorError):
    """A conversation id named on the command line is not among the conversations."""


class UnknownSituation(ProcessorError):
    """A situation id named on the command line is not in the stored failure map."""
