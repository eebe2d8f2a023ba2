"""The server under test: start it in a clean environment, watch it, stop it, count its rows.

:func:`start_server` runs ``CMD --db PATH --grpc-address 127.0.0.1:0 --http-address
127.0.0.1:0 --ready-file PATH`` in an empty temporary working directory (so no
``./tracemill.toml`` is read) with every ``TRACEMILL_*`` variable of the caller removed,
``TRACEMILL_SHUTDOWN_DRAIN_SECONDS`` set to 900 (so SIGTERM never cuts the drain short) and
the repository first on ``PYTHONPATH`` (so this checkout is what runs).

:class:`ProcessSampler` samples the process tree (the main process and its children, the
decode workers) with psutil; :class:`MetricsSampler` reads the collector's ``/metrics``.
Both sample every 0.5 s on their own thread.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
SAMPLE_INTERVAL_S = 0.5
SHUTDOWN_DRAIN_SECONDS = 900
"""``TRACEMILL_SHUTDOWN_DRAIN_SECONDS`` given to the server under test."""

_ITEMS = 'tracemill_items_total{{signal="traces",outcome="{}"}}'
_BACKLOG = "tracemill_spool_backlog_bytes"


def server_env() -> dict[str, str]:
    """The caller's environment without ``TRACEMILL_*``, plus the benchmark's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}
    env["TRACEMILL_SHUTDOWN_DRAIN_SECONDS"] = str(SHUTDOWN_DRAIN_SECONDS)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


@dataclass
class Server:
    """A started server under test."""

    popen: subprocess.Popen[bytes]
    pid: int
    """From the ready file (the process that serves)."""
    grpc: str
    """OTLP/gRPC ``HOST:PORT``."""
    http: str | None
    """``HOST:PORT`` of OTLP/HTTP and ``/metrics`` (None: the baseline serves no HTTP)."""
    db: Path
    log: Path


def start_server(cmd: list[str], workdir: Path, timeout_s: float) -> Server:
    """Start ``cmd`` with the serve contract flags and wait for its ready file."""
    db, ready, log = workdir / "spans.duckdb", workdir / "ready.json", workdir / "server.log"
    cwd = workdir / "cwd"
    cwd.mkdir()
    argv = [*cmd, "--db", str(db), "--grpc-address", "127.0.0.1:0",
            "--http-address", "127.0.0.1:0", "--ready-file", str(ready)]
    with log.open("wb") as out:
        popen = subprocess.Popen(argv, cwd=cwd, env=server_env(), stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError(f"server exited with {popen.returncode} before it was ready: "
                               f"{shlex.join(argv)}\n{tail(log)}")
        if ready.exists():
            info = json.loads(ready.read_text())
            http = info.get("http")
            return Server(popen, int(info["pid"]), str(info["grpc"]),
                          str(http) if http else None, db, log)
        time.sleep(0.05)
    popen.kill()
    popen.wait()
    raise RuntimeError(f"server wrote no ready file {ready} within {timeout_s:.0f} s: "
                       f"{shlex.join(argv)}\n{tail(log)}")


def stop_server(server: Server, timeout_s: float) -> tuple[float, int | None]:
    """SIGTERM the server and wait; return (seconds to exit, exit code or None if killed)."""
    start = time.perf_counter()
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)
    try:
        code: int | None = server.popen.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        server.popen.kill()
        server.popen.wait()
        code = None
    return time.perf_counter() - start, code


def tail(path: Path, lines: int = 20) -> str:
    """Last lines of a log file, for error messages."""
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""


def count_stored(db: Path) -> int:
    """``SELECT count(*) FROM spans`` on the database file, opened read-only."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT count(*) FROM spans").fetchone()
    return int(row[0]) if row else 0


def size_mib(paths: list[Path]) -> float:
    """Total size of the files among ``paths`` and of the files in the folders among them."""
    total = 0
    for path in paths:
        files = path.rglob("*") if path.is_dir() else [path]
        total += sum(f.stat().st_size for f in files if f.is_file())
    return total / (1024 * 1024)


# --------------------------------------------------------------------------- process tree


@dataclass(frozen=True)
class CpuSplit:
    """CPU seconds over a window: the main process, and its child processes."""

    main: float
    """The process from the ready file (receivers, spool writer, materializer, DuckDB)."""
    children: float
    """Its descendants: the decode workers (and multiprocessing's resource tracker)."""

    @property
    def total(self) -> float:
        """Both."""
        return self.main + self.children


class ProcessSampler(threading.Thread):
    """Samples a process tree's RSS (and the kernel high-water mark) every 0.5 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.peak_rss = 0
        """Largest sampled tree RSS, or the main process's VmHWM if higher."""
        self.peak_main_rss = 0
        """Largest sampled RSS or VmHWM of the main process alone."""
        self._stop_event = threading.Event()

    def tree(self) -> list[psutil.Process]:
        """The process and its live descendants."""
        try:
            return [self.proc, *self.proc.children(recursive=True)]
        except psutil.Error:
            return [self.proc]

    def cpu_snapshot(self) -> dict[int, float]:
        """User + system CPU seconds so far of each process of the tree, by pid."""
        out: dict[int, float] = {}
        for p in self.tree():
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                out[p.pid] = t.user + t.system
        return out

    def cpu_between(self, before: dict[int, float], after: dict[int, float]) -> CpuSplit:
        """CPU used between two snapshots (a process born in between counts from 0)."""
        main = children = 0.0
        for pid, seconds in after.items():
            used = seconds - before.get(pid, 0.0)
            if pid == self.proc.pid:
                main += used
            else:
                children += used
        return CpuSplit(main, children)

    def _sample(self) -> None:
        rss = main = 0
        for p in self.tree():
            with contextlib.suppress(psutil.Error):
                value = p.memory_info().rss
                rss += value
                if p.pid == self.proc.pid:
                    main = value
        hwm = 0
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
        self.peak_rss = max(self.peak_rss, rss, hwm)
        self.peak_main_rss = max(self.peak_main_rss, main, hwm)

    def run(self) -> None:
        while not self._stop_event.is_set() and self.proc.is_running():
            self._sample()
            self._stop_event.wait(SAMPLE_INTERVAL_S)

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join()


# --------------------------------------------------------------------------- /metrics


@dataclass(frozen=True)
class MetricsSample:
    """The collector's span counters and spool backlog at one moment."""

    t: float
    """``time.perf_counter()`` when the answer arrived."""
    accepted: int
    """Spans acknowledged: durable in the spool."""
    stored: int
    """Spans stored as new rows."""
    duplicates: int
    """Spans materialized but already stored (re-deliveries)."""
    backlog_bytes: int
    """Spool bytes acknowledged and not yet rows."""

    @property
    def all_stored(self) -> bool:
        """Whether every acknowledged span has been materialized."""
        return self.backlog_bytes == 0 and self.stored + self.duplicates >= self.accepted


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text exposition to ``{'name{labels}': value}``."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                out[name] = float(value)
    return out


def fetch_metrics(client: httpx.Client) -> MetricsSample:
    """GET /metrics once; raises httpx.HTTPError or KeyError."""
    response = client.get("/metrics")
    response.raise_for_status()
    values = parse_metrics(response.text)
    return MetricsSample(
        t=time.perf_counter(), accepted=int(values[_ITEMS.format("accepted")]),
        stored=int(values[_ITEMS.format("stored")]),
        duplicates=int(values[_ITEMS.format("duplicates")]),
        backlog_bytes=int(values[_BACKLOG]),
    )


def metrics_client(http_address: str) -> httpx.Client:
    """A client for the collector's HTTP port (no proxies from the environment)."""
    return httpx.Client(base_url=f"http://{http_address}", timeout=10.0, trust_env=False)


class MetricsSampler(threading.Thread):
    """Reads ``/metrics`` every 0.5 s and keeps every sample."""

    def __init__(self, http_address: str) -> None:
        super().__init__(daemon=True)
        self._client = metrics_client(http_address)
        self._stop_event = threading.Event()
        self._changed = threading.Condition()
        self.samples: list[MetricsSample] = []
        self.errors = 0
        """Failed reads (the collector's event loop may be slow to answer under load)."""

    def run(self) -> None:
        try:
            while not self._stop_event.is_set():
                try:
                    sample = fetch_metrics(self._client)
                except (httpx.HTTPError, KeyError):
                    self.errors += 1
                else:
                    with self._changed:
                        self.samples.append(sample)
                        self._changed.notify_all()
                self._stop_event.wait(SAMPLE_INTERVAL_S)
        finally:
            self._client.close()

    def wait_for(self, predicate: Callable[[MetricsSample], bool],
                 timeout_s: float) -> MetricsSample | None:
        """The first new sample that satisfies ``predicate``; None after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            seen = len(self.samples)
            while True:
                for sample in self.samples[seen:]:
                    if predicate(sample):
                        return sample
                seen = len(self.samples)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.is_alive():
                    return None
                self._changed.wait(min(remaining, 1.0))

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join()
