"""Helpers for tests that run a real `tracemill serve` process or fill a real small disk."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


class ServeProcess:
    """`python -m tracemill serve` on free ports (OTLP/gRPC, OTLP/HTTP and the admin API),
    with its ready file read.

    ``cwd``: its working directory (default: this one). ``clean_env``: start from this
    environment without any ``TRACEMILL_*`` variable, so only ``env`` and the flags set
    it up. ``log_file``: write its stderr there instead of a pipe (a chatty service
    cannot fill the pipe and stall; the test reads the file afterwards)."""

    def __init__(self, db: Path, tmp: Path, *extra: str,
                 env: dict[str, str] | None = None, cwd: Path | None = None,
                 clean_env: bool = False, log_file: Path | None = None,
                 api_address: str = "127.0.0.1:0") -> None:
        ready = tmp / f"ready-{time.monotonic_ns()}.json"
        base = ({k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}
                if clean_env else dict(os.environ))
        self.log_file = log_file
        self._log = log_file.open("w") if log_file is not None else None
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tracemill", "serve", "--db", str(db),
             "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0",
             "--api-address", api_address, "--ready-file", str(ready),
             "--log-format", "text", "--log-level", "debug", *extra],
            stdout=subprocess.PIPE,
            stderr=self._log if self._log is not None else subprocess.PIPE, text=True,
            cwd=cwd, env={**base, **(env or {})})
        deadline = time.monotonic() + 90
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"serve did not start: {self.process.communicate()} "
                                     f"{self.log()}")
            time.sleep(0.05)
        info = json.loads(ready.read_text())
        self.grpc: str = info["grpc"]
        self.http: str = info["http"]
        self.api: str = info["api"]
        self.pid: int = info["pid"]
        assert self.pid == self.process.pid

    def url(self, path: str) -> str:
        """The admin API's URL of ``path`` (``/status``)."""
        return f"http://{self.api}/api/v1{path}"

    def log(self) -> str:
        """What it wrote to ``log_file`` so far ('' without one)."""
        return self.log_file.read_text() if self.log_file is not None else ""

    def stop(self) -> tuple[int, str]:
        """SIGTERM, wait; returns the exit code and stderr (or the log file)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=120)
        finally:
            if self._log is not None:
                self._log.close()
        return self.process.returncode, err if self._log is None else self.log()


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
