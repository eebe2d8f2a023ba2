"""/healthz tells a live process from one whose worker threads died."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from collector.http_server import OtlpHttpApp
from collector.metrics import Metrics
from collector.pipeline import Pipeline
from tracemill.config import Settings
from tracemill.store import open_store


def test_healthz_names_dead_worker_threads(tmp_path: Path) -> None:
    store = open_store(tmp_path / "health.duckdb")
    pipeline = Pipeline(Settings(db=store.path, decode_workers=0), store, Metrics())
    died: list[str] = []

    def dead() -> list[str]:
        return pipeline.dead_threads() + died

    app = OtlpHttpApp(pipeline.intake, pipeline.metrics, auth_token=None,
                      max_message_bytes=1 << 20, ready=lambda: pipeline.ready, documents={},
                      dead=dead)

    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://collector") as client:
            return await client.get(path)

    try:
        pipeline.start()
        assert pipeline.dead_threads() == []
        assert asyncio.run(get("/healthz")).status_code == 200
        assert asyncio.run(get("/readyz")).status_code == 200
        # No public way kills a worker thread (each outlives any error it meets); what
        # /healthz answers when one is gone is checked with the list it would report.
        died.append("tracemill-materializer")
        response = asyncio.run(get("/healthz"))
        assert response.status_code == 503
        assert response.json() == {"status": "worker thread died",
                                   "dead_threads": ["tracemill-materializer"]}
        died.clear()
    finally:
        pipeline.close(drain_all=True)
        store.close()
    # stopping on purpose is not dying
    assert pipeline.dead_threads() == []
    assert asyncio.run(get("/readyz")).status_code == 503
    assert asyncio.run(get("/healthz")).status_code == 200
