"""A full disk, survived: real small file systems under the spool and the store.

The store and its spool each get their own small tmpfs, so the test can fill one and not
the other: a full spool disk refuses exports (UNAVAILABLE with RetryInfo, 503 +
Retry-After) without acknowledging anything; a full store disk keeps acknowledging (the
spool has room) and stores the backlog once space returns. Neither kills a thread, and
SIGTERM on a full disk exits 0 with the spool intact.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import grpc
import httpx
import pytest

from tests.collector.serving import ServeProcess, SmallDisks, fill, small_disks
from tests.support.otlp import genai_span, trace_request

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
pytestmark = pytest.mark.integration


@pytest.fixture
def disks() -> Iterator[SmallDisks]:
    with small_disks() as mounted:
        yield mounted


class Exporter:
    """Sends requests of a few spans over gRPC and remembers what was acknowledged."""

    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.acked: set[str] = set()

    def export(self) -> grpc.RpcError | None:
        spans = [genai_span() for _ in range(20)]
        with grpc.insecure_channel(self.server.grpc) as channel:
            try:
                channel.unary_unary(TRACES)(trace_request(spans).SerializeToString(),
                                            timeout=20)
            except grpc.RpcError as error:
                return error
        self.acked.update(span.span_id.hex() for span in spans)
        return None

    def refused(self) -> grpc.RpcError:
        error = self.export()
        assert error is not None, "an export was acknowledged while its spool disk was full"
        return error

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"http://{self.server.http}{path}", timeout=20)


def _metric(exporter: Exporter, outcome: str) -> int:
    line = f'tracemill_items_total{{signal="traces",outcome="{outcome}"}} '
    for text in exporter.get("/metrics").text.splitlines():
        if text.startswith(line):
            return int(text[len(line):])
    raise AssertionError(f"no {line} in /metrics")


def _wait_until_stored(exporter: Exporter, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _metric(exporter, "stored") >= len(exporter.acked):
            return
        time.sleep(0.2)
    raise AssertionError(f"only {_metric(exporter, 'stored')} of {len(exporter.acked)} "
                         "acknowledged spans were stored after space returned")


def _stored_span_ids(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return {row[0] for row in connection.execute("SELECT span_id FROM spans").fetchall()}


def test_a_full_disk_is_survived_without_a_restart(disks: SmallDisks, tmp_path: Path) -> None:
    store_disk = disks.mount(tmp_path / "store", "24m")
    db = store_disk / "full.duckdb"
    spool_disk = disks.mount(tmp_path / "store" / "full.duckdb.spool", "2m")
    server = ServeProcess(db, tmp_path, env={"TRACEMILL_SHUTDOWN_DRAIN_SECONDS": "2"})
    try:
        exporter = Exporter(server)
        assert exporter.export() is None

        # 1. The spool's disk is full: nothing is acknowledged, every answer says retry.
        # (each request is larger than the page a segment's tail may still have free)
        spool_filler = fill(spool_disk)
        for _ in range(4):  # the spool thread died after the second failure before
            error = exporter.refused()
            assert error.code() == grpc.StatusCode.UNAVAILABLE, error
            assert "full" in (error.details() or ""), error.details()
            trailers = dict(error.trailing_metadata() or ())
            assert "google.rpc.retryinfo-bin" in trailers
        body = trace_request([genai_span() for _ in range(20)]).SerializeToString()
        http = httpx.post(f"http://{server.http}/v1/traces", timeout=20, content=body,
                          headers={"content-type": "application/x-protobuf"})
        assert http.status_code == 503 and http.headers["retry-after"].isdigit()
        assert exporter.get("/healthz").status_code == 200  # every thread lives
        assert exporter.get("/readyz").status_code == 503  # but do not send here now

        # Space returns: the same process acknowledges again.
        spool_filler.unlink()
        assert exporter.export() is None
        _wait_until_stored(exporter)
        assert exporter.get("/readyz").status_code == 200

        # 2. The store's disk is full: exports are still acknowledged (the spool has room)
        # and wait in the spool until the store can take them.
        store_filler = fill(store_disk)
        stored_before = _metric(exporter, "stored")
        for _ in range(3):
            assert exporter.export() is None
        time.sleep(2.5)  # the materializer retries every second
        assert _metric(exporter, "stored") == stored_before
        assert exporter.get("/readyz").status_code == 503
        assert exporter.get("/healthz").status_code == 200
        store_filler.unlink()
        _wait_until_stored(exporter)

        # 3. Both disks full at SIGTERM, with acknowledged spans not yet stored.
        store_filler = fill(store_disk)
        assert exporter.export() is None
        spool_filler = fill(spool_disk)
        assert exporter.refused().code() == grpc.StatusCode.UNAVAILABLE
        server.process.send_signal(signal.SIGTERM)
        _, stderr = server.process.communicate(timeout=120)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate()
    assert server.process.returncode == 0, stderr
    assert "Traceback" not in stderr and "Fatal" not in stderr, stderr
    assert "cannot rollback" not in stderr, stderr
    # each failure episode is logged once with its cause, not once per retry
    assert stderr.count("spool write failed") == 2, stderr
    assert stderr.count("storing spooled requests failed") == 2, stderr
    assert "No space left on device" in stderr

    # The spool kept what was acknowledged: a restart with space stores all of it.
    store_filler.unlink()
    spool_filler.unlink()
    final = ServeProcess(db, tmp_path)
    final.process.send_signal(signal.SIGTERM)
    _, stderr = final.process.communicate(timeout=120)
    assert final.process.returncode == 0, stderr
    stored = _stored_span_ids(db)
    assert exporter.acked <= stored, f"{len(exporter.acked - stored)} acknowledged spans lost"
