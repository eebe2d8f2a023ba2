"""Worker processes for CPU-bound Python (decoding, conversation building).

Workers are started with ``spawn`` (never ``fork``: the gRPC core's threads must not be
forked) and exit by themselves when the process that started them is gone, even after
SIGKILL, so a killed collector or processor leaves no orphans behind.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor


def _watch_parent(parent: int) -> None:
    """In a worker: exit when the process that started it is gone."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="tracemill-parent-watch", daemon=True).start()


def worker_pool(processes: int) -> ProcessPoolExecutor:
    """A pool of ``processes`` spawned workers that die with this process."""
    return ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_watch_parent, initargs=(os.getpid(),))
