"""Errors of the collector.

::

    CollectorError (tracemill.errors.TracemillError)
    ├── InvalidRequest       the request can never succeed: malformed protobuf/JSON, oversize,
    │                        unsupported media type (gRPC INVALID_ARGUMENT, HTTP 400/413/415)
    ├── Unauthenticated      a bearer token is required and missing or wrong (UNAUTHENTICATED, 401)
    ├── Backpressure         the queue is full; retry after a delay (UNAVAILABLE + RetryInfo, 503)
    └── WriteFailed          the spool could not be written (disk full); retryable
                         (UNAVAILABLE + RetryInfo, 503 + Retry-After)
"""

from __future__ import annotations

from tracemill.errors import TracemillError


class CollectorError(TracemillError):
    """Base of the collector's errors."""


class InvalidRequest(CollectorError):
    """The request is malformed or unacceptable; retrying it unchanged cannot succeed."""

    def __init__(self, message: str, http_status: int = 400) -> None:
        super().__init__(message)
        self.http_status = http_status
        """The HTTP status the HTTP receiver answers with (400, 413 or 415)."""


class Unauthenticated(CollectorError):
    """The request lacks the configured bearer token."""


class Backpressure(CollectorError):
    """The collector is at capacity; the client should retry after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds the client should wait before retrying."""


class WriteFailed(CollectorError):
    """The spool could not be written (a full disk); nothing of the request was acknowledged."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds the client should wait before retrying."""
