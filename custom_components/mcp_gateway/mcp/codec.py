"""JSON for MCP messages: orjson's speed wherever it gives the standard library's answer.

Every gateway call decodes a request and a backend's answer and encodes two messages, and
`json` spends more time on that than the rest of the call's logic. orjson (which Home
Assistant ships) is several times faster but differs at the edges: it reads integers beyond
64 bits as floats, and refuses what `json` accepts (NaN, a byte-order mark, UTF-16 or UTF-32
bytes, lone surrogates, non-string keys). JSON-RPC ids and backend data may hold such values,
so each function hands exactly those cases to `json`.
"""

from __future__ import annotations

import json
from typing import Any, Final

import orjson

# An integer literal of 19 or more digits may lie beyond 64 bits, which orjson would read as
# a float; a run that long is rare, and finding one costs far less than `json` decoding.
_DIGIT_RUNS: Final = bytes(0x39 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN: Final = b"9" * 19
# Built once: json.dumps with options builds an encoder on every call.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def loads(raw: bytes) -> Any:
    """Decode JSON bytes as `json.loads` does (ValueError for anything that is not JSON)."""
    if _LONG_RUN not in raw.translate(_DIGIT_RUNS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # `json` judges: it accepts some of what orjson refuses, and says why not
    return json.loads(raw)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; what orjson refuses (big integers, other key types, other objects,
    as `str`) is encoded by `json`."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _ENCODER.encode(value).encode()
