"""Counts of what the store holds, for ``tracemill stats``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tracemill.store import Store, load_sql


class StoreStats(BaseModel):
    """What the collector has stored so far."""

    model_config = ConfigDict(frozen=True)

    spans: int = Field(description="Spans stored (each once, however often delivered).")
    log_records: int = Field(description="Log records stored.")
    traces: int = Field(description="Distinct trace ids among the spans.")
    services: int = Field(description="Distinct service.name values.")
    agents: int = Field(description="Distinct agent names.")
    model_versions: int = Field(
        description="Distinct model versions (agent version > service version > response "
        "model > request model)."
    )
    requests: int = Field(description="Export requests committed.")
    rejected_items: int = Field(description="Spans and log records refused for bad content.")
    duplicate_items: int = Field(description="Re-delivered items that were not stored again.")
    first_span_unix_nano: int | None = Field(description="Earliest span start.")
    last_span_unix_nano: int | None = Field(description="Latest span end.")


def store_stats(store: Store) -> StoreStats:
    """Count what the store holds."""
    cursor = store.cursor()
    try:
        relation = cursor.execute(load_sql("collector", "stats.sql"))
        names = [column[0] for column in relation.description or ()]
        row = relation.fetchone()
    finally:
        cursor.close()
    assert row is not None
    return StoreStats(**dict(zip(names, row, strict=True)))
