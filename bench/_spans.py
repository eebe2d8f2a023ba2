"""Realistic GenAI span content for the collector benchmark, serialized once per template.

Each request body holds ``spans`` OpenTelemetry GenAI semconv spans of about 3.1 KB: 20
attributes including a ~1.9 KB ``gen_ai.input.messages`` JSON string, and two events
(``gen_ai.choice``, ``gen_ai.evaluation.result``), grouped ``spans_per_trace`` to a trace
(one root and its children). :func:`build_templates` serializes a few such bodies and
cuts each at the first 4 bytes of every trace id, span id and parent span id, so that the
load generator can stamp a request number into all of them with one ``bytes.join``.
"""

from __future__ import annotations

import json
import random
import time

_VOCABULARY = (
    "order refund shipping account password invoice subscription cancel upgrade plan "
    "delivery address warehouse tracking number customer policy exception escalate "
    "manager receipt payment card declined charge duplicate billing cycle discount "
    "coupon expired return label carrier delay damaged item replacement warranty "
    "please could you check whether my the was is not yet still and but because when"
)
_WORDS = tuple(_VOCABULARY.split())
_TOOLS = ("lookup_order", "issue_refund", "update_address", "get_tracking", "search_kb")


def _text(rng: random.Random, n_chars: int) -> str:
    """Return pseudo-English text of about ``n_chars`` characters."""
    out: list[str] = []
    size = 0
    while size < n_chars:
        word = rng.choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out).capitalize() + "."


def _input_messages(rng: random.Random, n_chars: int) -> str:
    """A GenAI semconv ``gen_ai.input.messages`` JSON string of about ``n_chars``."""
    call_id = f"call_{rng.getrandbits(64):016x}"
    tool = rng.choice(_TOOLS)
    part = max(n_chars // 5, 40)
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": _text(rng, part)}]},
        {"role": "user", "parts": [{"type": "text", "content": _text(rng, part)}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": tool,
                                         "arguments": {"order_id": f"A{rng.randrange(10**6)}"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id,
                                    "response": _text(rng, part)}]},
        {"role": "user", "parts": [{"type": "text", "content": _text(rng, part)}]},
    ]
    return json.dumps(messages)


def _span_bytes_template(
    rng: random.Random, spans: int, spans_per_trace: int
) -> tuple[bytes, list[bytes]]:
    """Serialize one request of ``spans`` GenAI spans with random sentinel ids.

    Returns the body and the list of id values (each trace id and span id, once) so
    that the caller can find where ids sit in the body.
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    def kv(key: str, value: str | int | float | list[str]) -> KeyValue:
        if isinstance(value, str):
            return KeyValue(key=key, value=AnyValue(string_value=value))
        if isinstance(value, bool):
            return KeyValue(key=key, value=AnyValue(bool_value=value))
        if isinstance(value, int):
            return KeyValue(key=key, value=AnyValue(int_value=value))
        if isinstance(value, float):
            return KeyValue(key=key, value=AnyValue(double_value=value))
        arr = ArrayValue(values=[AnyValue(string_value=v) for v in value])
        return KeyValue(key=key, value=AnyValue(array_value=arr))

    seen: set[bytes] = set()

    def fresh_id(n: int) -> bytes:
        while True:
            value = rng.randbytes(n)
            # Non-zero after the first 4 bytes are overwritten; unique in the body.
            if value[4:].strip(b"\0") and value not in seen:
                seen.add(value)
                return value

    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend([
        kv("service.name", "support-agent"),
        kv("service.version", "2.14.1"),
        kv("deployment.environment.name", "production"),
        kv("host.name", f"agent-{rng.randrange(100):02d}"),
        kv("telemetry.sdk.name", "opentelemetry"),
        kv("telemetry.sdk.language", "python"),
        kv("telemetry.sdk.version", "1.45.2"),
    ])
    ss = rs.scope_spans.add()
    ss.scope.name = "opentelemetry.instrumentation.openai_v2"
    ss.scope.version = "2.4b0"

    ids: list[bytes] = []
    now = time.time_ns()
    trace_id = root_id = b""
    conversation = ""
    for i in range(spans):
        if i % spans_per_trace == 0:
            trace_id, root_id = fresh_id(16), fresh_id(8)
            conversation = f"conv-{rng.getrandbits(64):016x}"
            ids += [trace_id, root_id]
            span_id, parent = root_id, b""
        else:
            span_id, parent = fresh_id(8), root_id
            ids.append(span_id)
        model = rng.choice(("gpt-4o-2024-08-06", "gpt-4.1-mini", "claude-sonnet-4"))
        in_tok, out_tok = rng.randrange(200, 4000), rng.randrange(10, 600)
        start = now - rng.randrange(10**9, 60 * 10**9)
        end = start + rng.randrange(2 * 10**8, 8 * 10**9)
        op = "invoke_agent" if not parent else "chat"
        finish = rng.choice(("stop", "tool_calls"))
        span = Span(
            trace_id=trace_id, span_id=span_id, parent_span_id=parent,
            name=f"{op} {model}" if parent else "invoke_agent support-agent",
            kind=Span.SPAN_KIND_CLIENT if parent else Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=start, end_time_unix_nano=end,
            status=Status(code=Status.STATUS_CODE_OK),
        )
        span.attributes.extend([
            kv("gen_ai.operation.name", op),
            kv("gen_ai.provider.name", "openai"),
            kv("gen_ai.request.model", model),
            kv("gen_ai.response.model", model),
            kv("gen_ai.response.id", f"chatcmpl-{rng.getrandbits(96):024x}"),
            kv("gen_ai.request.temperature", round(rng.random(), 2)),
            kv("gen_ai.request.top_p", 0.95),
            kv("gen_ai.request.max_tokens", 1024),
            kv("gen_ai.usage.input_tokens", in_tok),
            kv("gen_ai.usage.output_tokens", out_tok),
            kv("gen_ai.response.finish_reasons", [finish]),
            kv("gen_ai.conversation.id", conversation),
            kv("gen_ai.agent.name", "support-agent"),
            kv("gen_ai.agent.version", "2.14.1"),
            kv("gen_ai.input.messages", _input_messages(rng, 1800)),
            kv("gen_ai.output.messages", json.dumps([{
                "role": "assistant", "finish_reason": finish,
                "parts": [{"type": "text", "content": _text(rng, 100)}]}])),
            kv("server.address", "api.openai.com"),
            kv("server.port", 443),
            kv("session.id", conversation),
            kv("user.id", f"user-{rng.randrange(10**5)}"),
        ])
        ev = span.events.add(time_unix_nano=end - 1000, name="gen_ai.choice")
        ev.attributes.extend([kv("index", 0), kv("finish_reason", finish)])
        ev = span.events.add(time_unix_nano=end, name="gen_ai.evaluation.result")
        ev.attributes.extend([
            kv("gen_ai.evaluation.name", "helpfulness"),
            kv("gen_ai.evaluation.score.value", round(rng.random(), 3)),
            kv("gen_ai.evaluation.score.label", rng.choice(("pass", "fail"))),
        ])
        ss.spans.append(span)
    return request.SerializeToString(), ids


def _split_at_ids(body: bytes, ids: list[bytes], expected_slots: int) -> list[bytes]:
    """Cut ``body`` at the first 4 bytes of every occurrence of every id.

    ``prefix.join(result)`` then rebuilds the body with each id's first 4 bytes replaced
    by ``prefix``; with a request number as prefix all ids of the request become unique
    across the run, while the remaining id bytes keep them unique within the request.
    """
    offsets: list[int] = []
    for value in ids:
        pos = body.find(value)
        while pos != -1:
            offsets.append(pos)
            pos = body.find(value, pos + 1)
    offsets.sort()
    if len(offsets) != expected_slots:
        raise RuntimeError(f"found {len(offsets)} id slots in the template, expected "
                           f"{expected_slots}: an id value collided with other bytes")
    segments: list[bytes] = []
    prev = 0
    for off in offsets:
        segments.append(body[prev:off])
        prev = off + 4
    segments.append(body[prev:])
    return segments


def build_templates(seed: int, templates: int, spans_per_request: int,
                    spans_per_trace: int) -> tuple[list[list[bytes]], float]:
    """Pre-serialize ``templates`` request bodies, split for id stamping.

    Returns the segment lists and the mean serialized bytes per span.
    """
    rng = random.Random(seed)
    n = spans_per_request
    roots = -(-n // spans_per_trace)
    # Every span has a trace id and a span id; every non-root span a parent id.
    slots = n + n + (n - roots)
    bodies: list[list[bytes]] = []
    total = 0
    for _ in range(templates):
        body, ids = _span_bytes_template(rng, n, spans_per_trace)
        bodies.append(_split_at_ids(body, ids, slots))
        total += len(body)
    return bodies, total / (templates * n)
