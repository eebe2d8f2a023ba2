from collections.abc import Callable

_Column = tuple[bytes | None, bytes | None, bytes, int]

def check_traces(payload: bytes) -> tuple[int, int, list[str]]: ...

class TraceDecoder:
    def __init__(self, payload: bytes, received_unix_nano: int,
                 promoted: tuple[tuple[str, ...], ...], float_json: Callable[[float], bytes],
                 invocation_model: Callable[[str], str | None]) -> None: ...
    def next_chunk(self, max_rows: int, max_bytes: int) -> tuple[
        bool, int, list[_Column], int, int, list[str], int]: ...
