"""Shared fixtures: a real collector on port 0 over a real DuckDB file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from collector.server import Collector, CollectorThread
from tracemill.config import Settings
from tracemill.store import Store, open_store


@dataclass
class RunningCollector:
    """A collector serving on loopback ports for one test."""

    grpc_endpoint: str
    """host:port for OTLP/gRPC exporters (insecure unless TLS was configured)."""
    http_endpoint: str
    """Base URL for OTLP/HTTP (exporters post to /v1/traces and /v1/logs)."""
    db_path: Path
    """The DuckDB file."""
    store: Store
    """The open store (shared with the collector)."""
    collector: Collector
    """The running collector, for its metrics and writer."""
    thread: CollectorThread
    """The thread it runs on."""

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Run read-only SQL on the live store, once everything acknowledged is stored."""
        assert self.collector.flush(timeout=60), "acknowledged requests were not stored"
        return self.store.query(sql, params)


StartCollector = Callable[..., RunningCollector]


@pytest.fixture
def start_collector(tmp_path: Path) -> Iterator[StartCollector]:
    """Start collectors with settings overrides (``start_collector(auth_token="x")``)."""
    running: list[RunningCollector] = []

    def start(**overrides: Any) -> RunningCollector:
        values: dict[str, Any] = {
            "db": tmp_path / f"store{len(running)}.duckdb",
            "grpc_address": "127.0.0.1:0",
            "http_address": "127.0.0.1:0",
            "decode_workers": 0,
        }
        values.update(overrides)
        settings = Settings(**values)
        store = open_store(settings.db, memory_limit=settings.db_memory_limit,
                           checkpoint_threshold=settings.db_checkpoint_threshold,
                           compression=settings.db_compression)
        thread = CollectorThread(settings, store)
        bound = thread.start()
        scheme = "https" if settings.tls_cert else "http"
        handle = RunningCollector(bound.grpc, f"{scheme}://{bound.http}", settings.db, store,
                                  thread.collector, thread)
        running.append(handle)
        return handle

    yield start
    for handle in running:
        handle.thread.stop()
        handle.store.close()


@pytest.fixture
def collector_server(start_collector: StartCollector) -> RunningCollector:
    """A collector with default settings (no auth, no TLS) on free loopback ports."""
    return start_collector()
