"""The argument checker of the core tools, and attribute values made JSON."""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime
from enum import Enum, IntEnum
from typing import Any

import pytest

from custom_components.mcp_gateway.gateway.catalog.schemas.subset import json_type
from custom_components.mcp_gateway.gateway.catalog.schemas.validate import schema_errors
from custom_components.mcp_gateway.gateway.tools.state_items import jsonable

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mode": {"enum": ["a", "b"]},
        "label": {"type": "string", "minLength": 1, "maxLength": 3},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "count": {"type": "integer"},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]},
        "list": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 2},
        "nullable": {"type": ["string", "null"]},
    },
    "required": ["mode"],
    "additionalProperties": {"type": "integer"},
}


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ({"mode": "a"}, []),
        ({}, ["arguments.mode is required"]),
        ({"mode": "c"}, ['arguments.mode must be one of "a", "b"']),
        ({"mode": "a", "label": ""}, ["arguments.label must have at least 1 characters"]),
        ({"mode": "a", "label": "long"}, ["arguments.label must have at most 3 characters"]),
        ({"mode": "a", "ratio": 2}, ["arguments.ratio must be ≤ 1"]),
        ({"mode": "a", "ratio": -1}, ["arguments.ratio must be ≥ 0"]),
        ({"mode": "a", "ratio": float("nan")}, ["arguments.ratio must be a finite number"]),
        ({"mode": "a", "ratio": True}, ["arguments.ratio must be number"]),
        ({"mode": "a", "count": 3.0}, []),
        ({"mode": "a", "count": 3.5}, ["arguments.count must be integer"]),
        ({"mode": "a", "either": "x"}, []),
        ({"mode": "a", "either": 7}, []),
        ({"mode": "a", "either": 2}, ["arguments.either must be ≥ 5"]),
        ({"mode": "a", "list": []}, ["arguments.list must have at least 1 items"]),
        (
            {"mode": "a", "list": [True, 1, False]},
            [
                "arguments.list must have at most 2 items",
                "arguments.list[1] must be boolean",
            ],
        ),
        ({"mode": "a", "nullable": None}, []),
        ({"mode": "a", "extra": 1}, []),
        ({"mode": "a", "extra": "x"}, ["arguments.extra must be integer"]),
        ([], ["arguments must be object"]),
    ],
)
def test_schema_errors(value: Any, errors: list[str]) -> None:
    """Every failed rule is reported with the path to the value."""
    assert schema_errors(SCHEMA, value) == errors


def test_closed_objects_list_what_they_accept() -> None:
    """An unknown key in a closed object names the accepted ones."""
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert schema_errors(schema, {"b": 1}) == ["arguments.b is not accepted (accepted: a)"]
    empty = {"type": "object", "properties": {}, "additionalProperties": False}
    assert schema_errors(empty, {"b": 1}) == ["arguments.b is not accepted (accepted: none)"]


def testjsonable() -> None:
    """Datetimes, mappings, sets and odd objects become plain JSON."""

    class Color(Enum):
        RED = "red"

    when = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    # Times in HA's time zone (the tests' is US/Pacific), with the offset.
    assert jsonable({"at": when, 1: {Color.RED}, "t": (1, 2.5), "n": None}) == {
        "at": "2026-01-01T19:04:00-08:00",
        "1": ["Color.RED"],
        "t": [1, 2.5],
        "n": None,
    }


class _Level(IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (True, "boolean"),
        (1, "number"),
        (1.5, "number"),
        ("a", "string"),
        (None, "null"),
        ([], "array"),
        ({}, "object"),
        (_Level.LOW, "number"),
        (OrderedDict(a=1), "object"),
        ((1, 2), None),
        (object(), None),
    ],
)
def test_json_type(value: Any, kind: str | None) -> None:
    """Exact JSON classes by lookup, their subclasses by kind, anything else is no JSON."""
    assert json_type(value) == kind
