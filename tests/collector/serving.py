"""Helpers for tests that run a real `tracemill serve` process or fill a real small disk."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


class ServeProcess:
    """`python -m tracemill serve` on free ports, with its ready file read."""

    def __init__(self, db: Path, tmp: Path, *extra: str,
                 env: dict[str, str] | None = None) -> None:
        ready = tmp / f"ready-{time.monotonic_ns()}.json"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tracemill", "serve", "--db", str(db),
             "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0",
             "--ready-file", str(ready), "--log-format", "text", "--log-level", "debug",
             *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 60
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"serve did not start: {self.process.communicate()}")
            time.sleep(0.05)
        info = json.loads(ready.read_text())
        self.grpc = info["grpc"]
        self.http = info["http"]
        assert info["pid"] == self.process.pid


@contextlib.contextmanager
def small_disks() -> Iterator[SmallDisks]:
    """Mount small tmpfs file systems on demand; unmount them all afterwards."""
    disks = SmallDisks()
    try:
        yield disks
    finally:
        for folder in reversed(disks.mounted):
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


class SmallDisks:
    """Real small file systems (tmpfs) that a test can fill up."""

    def __init__(self) -> None:
        self.mounted: list[Path] = []

    def mount(self, folder: Path, size: str) -> Path:
        """A tmpfs of ``size`` (``4m``) at ``folder``; skips the test when mounting is denied."""
        if shutil.which("mount") is None:
            pytest.skip("no mount command: cannot make a small file system to fill up")
        folder.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                                 str(folder)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            pytest.skip("mounting a small tmpfs to fill up is not permitted here (needs root "
                        f"or CAP_SYS_ADMIN): {result.stderr.strip()}")
        self.mounted.append(folder)
        return folder


def fill(folder: Path) -> Path:
    """Write a file into ``folder`` until its file system has no byte left; returns it."""
    filler = folder / f"filler-{time.monotonic_ns()}"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for chunk in (1 << 16, 1 << 12, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(descriptor, b"\0" * chunk)
    finally:
        os.close(descriptor)
    return filler
