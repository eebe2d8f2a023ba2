"""Waiting in tests for something a real server does on its own time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(predicate: Callable[[], Any], seconds: float, what: str,
               every: float = 0.2) -> Any:
    """The first truthy value of ``predicate()``, asked every ``every`` seconds; an
    AssertionError naming ``what`` when ``seconds`` pass without one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")
