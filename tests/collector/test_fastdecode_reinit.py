"""A TraceDecoder decodes one request: calling ``__init__`` again is refused (its read
positions and promoted keys point into the first payload; a failed second init used to
leave them dangling, and the next chunk read freed memory)."""

from __future__ import annotations

import gc

import orjson
import pytest

from collector import native
from collector.promote import PROMOTED_SOURCES, invocation_model
from tests.support.otlp import genai_span, trace_request

pytestmark = pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING_HINT)


def test_a_second_init_is_refused_and_the_first_request_still_decodes() -> None:
    from collector import _fastdecode

    promoted = tuple(PROMOTED_SOURCES.values())
    payload = trace_request([genai_span(f"span {n}", span_id=(n + 1).to_bytes(8, "big"))
                             for n in range(20)]).SerializeToString()
    decoder = _fastdecode.TraceDecoder(payload, 1, promoted, orjson.dumps, invocation_model)
    first = decoder.next_chunk(10, 1 << 40)
    assert first[1] == 10
    with pytest.raises(RuntimeError, match="decodes one request"):
        decoder.__init__(b"\x0a\xff", 1, promoted, orjson.dumps,  # type: ignore[misc]
                         invocation_model)
    del payload
    gc.collect()
    assert decoder.next_chunk(10, 1 << 40)[1] == 10  # the rest of the first request
