"""Structured logs on stderr: one JSON object per line (or plain text), never payloads.

Code logs with ``log.info("what happened", extra={"fields": {...}})``; the fields become
keys of the JSON line. Request bodies, message contents and tokens are never logged.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """Formats a record as ``time level logger: message key=value ...``."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None)
        tail = ""
        if isinstance(fields, dict):
            tail = " " + " ".join(f"{key}={value}" for key, value in fields.items())
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        return f"{stamp} {record.levelname.lower()} {record.name}: {record.getMessage()}{tail}"


def configure_logging(level: str, fmt: str) -> None:
    """Send tracemill's logs to stderr in the chosen format and level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger("tracemill")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
