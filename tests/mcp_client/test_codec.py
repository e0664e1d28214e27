"""mcp/codec.py: orjson's speed, the standard library's answers, on every input."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import example, given, strategies as st
import pytest

from custom_components.mcp_gateway.mcp import codec

# JSON values with the numbers that tell the libraries apart: integers far beyond 64 bits and
# at either edge of it, floats, and text beyond ASCII.
_NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=2**62, max_value=2**80),
    st.integers(min_value=-(2**80), max_value=-(2**62)),
    st.floats(allow_nan=False, allow_infinity=False),
)
_JSON = st.recursive(
    st.none() | st.booleans() | _NUMBERS | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=16,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 == 1.0, but they are not the same)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@given(_JSON)
@example(2**64)
@example(-(2**63) - 1)
@example(2**64 - 1)
@example({"id": 10**30, "text": "1234567890123456789012"})
def test_loads_reads_what_json_reads(value: Any) -> None:
    """Whatever `json` writes, `loads` reads back exactly as `json.loads` does."""
    for raw in (json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode()):
        assert _same(codec.loads(raw), json.loads(raw))


@pytest.mark.parametrize(
    "raw",
    [
        b"NaN",
        b"[Infinity, -Infinity]",
        b"\xef\xbb\xbf{}",  # a UTF-8 byte-order mark
        '{"a": "\u00e9"}'.encode("utf-16"),
        b'"\\ud800"',  # a lone surrogate: JSON, though no Unicode text
        b'{"a": 1, "a": 2}',
        b"1e400",
    ],
)
def test_loads_accepts_what_only_json_accepts(raw: bytes) -> None:
    """orjson refuses these; `json` reads them, and so does `loads`."""
    assert _same(codec.loads(raw), json.loads(raw))


@pytest.mark.parametrize("raw", [b"", b"[1,", b"{'a': 1}", b"\xff", b"[" * 100_000])
def test_loads_refuses_what_json_refuses(raw: bytes) -> None:
    """Not JSON: a ValueError (or the RecursionError `json` raises for deep nesting)."""
    with pytest.raises((ValueError, RecursionError)):
        codec.loads(raw)


@given(_JSON)
def test_dumps_writes_compact_json_that_reads_back(value: Any) -> None:
    """Compact, UTF-8, and exact for every number (big integers too)."""
    encoded = codec.dumps(value)
    assert _same(json.loads(encoded), json.loads(json.dumps(value)))
    # As compact as `json` at its most compact, but for how each writes a float (orjson
    # writes 1e16 shorter and 1e-05 as 0.00001): compared with every float a zero.
    flat = _floats_zeroed(value)
    assert len(codec.dumps(flat)) <= len(
        json.dumps(flat, ensure_ascii=False, separators=(",", ":")).encode()
    )


def _floats_zeroed(value: Any) -> Any:
    if isinstance(value, float):
        return 0
    if isinstance(value, dict):
        return {key: _floats_zeroed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_floats_zeroed(item) for item in value]
    return value


def test_dumps_encodes_what_orjson_refuses_as_json_does() -> None:
    """Other key types and other objects, as `json` with `default=str` writes them."""
    when = object()
    value = {1: "one", "big": 2**70, "other": when}
    assert codec.dumps(value) == (f'{{"1":"one","big":{2**70},"other":"{when}"}}'.encode())
