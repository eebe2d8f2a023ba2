"""Property: any OTLP attribute value survives decode → DuckDB → read exactly."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from collector.decode import Signal
from collector.metrics import Metrics
from collector.pipeline import Pipeline
from collector.values import attributes_from_json, value_from_json
from tests.support.otlp import log_request, trace_request
from tracemill.config import Settings
from tracemill.store import Store, open_store

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FLOATS = st.floats(allow_nan=False) | st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
TAGS = st.sampled_from(["bytesValue", "doubleValue", "kvlistValue"])


def _scalar() -> st.SearchStrategy[AnyValue]:
    return st.one_of(
        st.text().map(lambda v: AnyValue(string_value=v)),
        INT64.map(lambda v: AnyValue(int_value=v)),
        FLOATS.map(lambda v: AnyValue(double_value=v)),
        st.booleans().map(lambda v: AnyValue(bool_value=v)),
        st.binary().map(lambda v: AnyValue(bytes_value=v)),
        st.just(AnyValue()),
    )


def _extend(children: st.SearchStrategy[AnyValue]) -> st.SearchStrategy[AnyValue]:
    keys = st.text(max_size=8) | TAGS  # tag-like and repeated keys must survive too
    pairs = st.lists(st.tuples(keys, children), max_size=4)
    return st.one_of(
        st.lists(children, max_size=4).map(
            lambda items: AnyValue(array_value=ArrayValue(values=items))),
        pairs.map(lambda items: AnyValue(kvlist_value=KeyValueList(
            values=[KeyValue(key=k, value=v) for k, v in items]))),
    )


VALUES = st.recursive(_scalar(), _extend, max_leaves=12)
ATTRIBUTES = st.dictionaries(st.text(max_size=12), VALUES, max_size=6)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Pipeline]]:
    db = Path(tmp_path_factory.mktemp("roundtrip")) / "values.duckdb"
    store = open_store(db)
    pipeline = Pipeline(Settings(db=db, decode_workers=0), store, Metrics())
    pipeline.start()
    yield store, pipeline
    pipeline.close()
    store.close()


def _store(pipeline: Pipeline, signal: Signal, payload: bytes) -> None:
    assert pipeline.intake.export_blocking(signal, payload, "test").accepted == 1
    assert pipeline.flush(timeout=30)


def _same(left: list[KeyValue], right: list[KeyValue]) -> bool:
    # Serialized bytes compare NaN by bit pattern (math.nan is canonical on both sides).
    return [kv.SerializeToString(deterministic=True) for kv in left] == [
        kv.SerializeToString(deterministic=True) for kv in right]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attributes=ATTRIBUTES)
def test_span_attributes_round_trip(pipeline: tuple[Store, Pipeline],
                                    attributes: dict[str, AnyValue]) -> None:
    store, running = pipeline
    original = [KeyValue(key=key, value=value) for key, value in attributes.items()]
    span_id = os.urandom(8)
    request = trace_request([])
    span = request.resource_spans[0].scope_spans[0].spans.add(
        trace_id=os.urandom(16), span_id=span_id, name="p")
    span.attributes.extend(original)
    event = span.events.add(name="e")
    event.attributes.extend(original)
    _store(running, "traces", request.SerializeToString())
    (attrs_json, events_json), = store.query(
        "SELECT attributes, events FROM spans WHERE span_id = ?", [span_id.hex()])
    assert _same(attributes_from_json(orjson.loads(attrs_json)), original)
    assert _same(attributes_from_json(orjson.loads(events_json)[0]["attributes"]), original)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=VALUES)
def test_log_bodies_round_trip(pipeline: tuple[Store, Pipeline], body: AnyValue) -> None:
    store, running = pipeline
    request = log_request([])
    record: LogRecord = request.resource_logs[0].scope_logs[0].log_records.add(
        time_unix_nano=int.from_bytes(os.urandom(7)))
    record.body.CopyFrom(body)
    _store(running, "logs", request.SerializeToString())
    (stored,), = store.query("SELECT body FROM log_records WHERE time_unix_nano = ?",
                             [record.time_unix_nano])
    expected = body.SerializeToString(deterministic=True)
    assert value_from_json(orjson.loads(stored)).SerializeToString(deterministic=True) == expected
