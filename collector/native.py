"""The compiled trace decoder (``collector/_fastdecode.c``) seen from Python.

The extension walks an ExportTraceServiceRequest's wire format and fills Arrow column
buffers directly, chunk by chunk: no parsed message objects, no Python object per
attribute or promoted value, so it is many times faster than the pure-Python path in
``collector/decode.py`` and its memory grows with a chunk, not with the request. It walks a
request of 16 KiB or more without the GIL (the receivers and the insert run meanwhile) and
hands the column buffers over without a copy; only rare values need Python (a double of 16
or 17 digits, non-ASCII text to lower-case, a token count int() must read, the JSON of
``llm.invocation_parameters``), and for those it takes the GIL back briefly.
``pip install -e .`` builds it (``setup.py``); when it could not be built, :data:`AVAILABLE`
is False and the collector decodes in pure Python, which produces the same rows
(tests/collector/test_fastdecode.py).

Log records are always decoded in Python: they are a small share of the traffic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import orjson
import pyarrow as pa

INTERFACE = 2
"""The extension's ``INTERFACE`` this module speaks (``FASTDECODE_INTERFACE`` in the C
source; raised whenever what a call hands over changes)."""

try:
    from collector import _fastdecode
except ImportError:  # not built: the pure-Python decoder is used (and serve says so)
    _fastdecode = None  # type: ignore[assignment]
    _WHY = "is not built"
else:
    _BUILT = getattr(_fastdecode, "INTERFACE", 1)  # builds from before the number: 1
    if _BUILT != INTERFACE:
        # built from an older source (an update without reinstalling): calling it would
        # fail on every request, so it is left unused
        _WHY = (f"was built from another version of the source (interface {_BUILT}, "
                f"this code needs {INTERFACE})")
        _fastdecode = None  # type: ignore[assignment]
    else:
        _WHY = ""

AVAILABLE = _fastdecode is not None
"""Whether the compiled decoder was built, imports and matches this source."""

MISSING_HINT = (
    f"the compiled trace decoder (collector/_fastdecode.c) {_WHY}, so spans are decoded "
    "in pure Python, about four times slower; reinstall with `pip install -e .` on a machine "
    "with a C compiler and the Python headers (python3-dev) to build it"
)
"""What to tell the operator when :data:`AVAILABLE` is False."""


class MalformedRequest(ValueError):
    """The bytes are not a valid protobuf ExportTraceServiceRequest (the message says why)."""


@dataclass(frozen=True)
class Chunk:
    """One chunk of a request decoded by the extension."""

    rows: pa.Table
    """The valid spans of the chunk, in the schema the decoder was given."""
    received: int
    """Spans read in this chunk."""
    rejected: int
    """Spans refused for their ids in this chunk."""
    problems: tuple[str, ...]
    """Why, for the first few refused spans of the chunk."""
    payload_bytes: int
    """The request's size in the first chunk, 0 in the others."""


def _require() -> None:
    if _fastdecode is None:
        raise RuntimeError(MISSING_HINT)


def check_traces(payload: bytes) -> tuple[int, int, tuple[str, ...]]:
    """(spans, spans with bad ids, explanations) of a request, checked without parsing it.

    Raises MalformedRequest for bytes the protobuf parser would refuse.
    """
    _require()
    try:
        received, rejected, problems = _fastdecode.check_traces(payload)
    except ValueError as exc:
        raise MalformedRequest(str(exc)) from None
    return received, rejected, tuple(problems)


def trace_chunks(payload: bytes, received_unix_nano: int, *, schema: pa.Schema,
                 promoted: tuple[tuple[str, ...], ...],
                 invocation_model: Callable[[str], str | None], max_rows: int,
                 max_bytes: int) -> Iterator[Chunk]:
    """Decode a request in chunks of at most ``max_rows`` rows (or about ``max_bytes``).

    ``promoted`` lists, per promoted column in schema order, the attribute keys it is read
    from (best first); ``invocation_model`` reads the model out of OpenInference's
    ``llm.invocation_parameters`` JSON. Raises MalformedRequest for bytes that do not parse.
    """
    _require()
    try:
        decoder = _fastdecode.TraceDecoder(payload, received_unix_nano, promoted, orjson.dumps,
                                           invocation_model)
    except ValueError as exc:
        raise MalformedRequest(str(exc)) from None
    while True:
        done, rows, columns, received, rejected, problems, payload_bytes = (
            decoder.next_chunk(max_rows, max_bytes))
        # the schema object, not a C schema: importing one costs ~250 µs a chunk
        batch = pa.RecordBatch._import_from_c(_fastdecode.array_address(columns), schema)
        del columns  # moved into the batch: the capsule frees only the emptied struct
        batch.validate()
        if batch.num_rows != rows:
            raise RuntimeError(f"the compiled decoder exported {batch.num_rows} rows, not {rows}")
        yield Chunk(pa.Table.from_batches([batch]), received, rejected, tuple(problems),
                    payload_bytes)
        if done:
            return


def format_double(x: float) -> tuple[str, str] | None:
    """(orjson.dumps text, repr text) of ``x`` as the extension writes them, or None when it
    leaves ``x`` to Python (for the tests)."""
    _require()
    return _fastdecode.format_double(x)
