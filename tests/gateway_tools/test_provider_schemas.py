"""The portable schema subset: what it refuses, how any schema is brought into it, and back."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.mcp_gateway.gateway.catalog.schemas.convert import (
    portable_schema,
    restore_arguments,
)
from custom_components.mcp_gateway.gateway.catalog.schemas.subset import schema_problems
from custom_components.mcp_gateway.gateway.catalog.search_tool import SEARCH_SCHEMA
from custom_components.mcp_gateway.gateway.tools.ha_tools import HA_TOOLS


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False, **extra}


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = _obj({"v": schema})
    return schema


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (_obj({"v": {"type": ["string", "number"]}}), "inputSchema.v: type must be one of"),
        (_obj({"v": {"anyOf": [{"type": "string"}]}}), "unsupported keywords anyOf"),
        (_obj({"v": {"type": "string", "minLength": 1}}), "unsupported keywords minLength"),
        (_obj({"v": {"type": "string", "default": "x"}}), "unsupported keywords default"),
        (_obj({"v": {"type": "object"}}), "inputSchema.v: an object needs properties"),
        (_obj({"v": {"type": "array"}}), "inputSchema.v: an array needs items"),
        (_obj({"v": {"type": "integer", "enum": [1, 2]}}), "enum only as a non-empty list"),
        ({"type": "object", "properties": {}}, "must set additionalProperties: false"),
        (_obj({}, required=["x"]), "required must list only its properties"),
        ({"type": "string"}, "the root must be an object"),
        (_obj({"v": {"description": "anything"}}), "inputSchema.v: type must be one of"),
        (_obj({"v": "string"}), "inputSchema.v: a schema must be an object"),
        (_obj({"v": {"type": "string", "enum": ["a", 1]}}), "enum values must be strings"),
        (_obj({"v": {"type": "string", "properties": {}}}), "properties/required only on objects"),
        (_obj({"v": {"type": "string", "items": {"type": "string"}}}), "items only on arrays"),
        (_nested(12), "nested deeper than 10"),
    ],
)
def test_problems_are_named(schema: dict[str, Any], problem: str) -> None:
    """Each rule of the two dialects that the schema breaks is reported with its path."""
    found = schema_problems(schema)
    assert any(problem in item for item in found), found
    assert schema_problems(portable_schema(schema)) == []


def test_core_tool_schemas_are_portable_as_written() -> None:
    """The gateway's own tools need no conversion: converting changes nothing."""
    for schema in (SEARCH_SCHEMA, *(tool.input_schema for tool in HA_TOOLS)):
        assert schema_problems(schema) == []
        assert portable_schema(schema) == schema


def test_conversion_keeps_meaning_in_words() -> None:
    """What cannot be declared portably is said in the description."""
    converted = portable_schema(
        {
            "type": "object",
            "$defs": {"Day": {"type": "string", "enum": ["mon", "tue"]}},
            "properties": {
                "date": {"type": ["string", "null"], "format": "date", "description": "Day."},
                "level": {"type": "integer", "enum": [0, 1, 2]},
                "lock": {"type": ["boolean", "integer"]},
                "label": {"type": "string", "minLength": 1, "maxLength": 40, "default": "Wake"},
                "days": {"type": "array", "items": {"$ref": "#/$defs/Day"}, "uniqueItems": True},
                "mode": {"anyOf": [{"const": "a"}, {"const": "b"}]},
                "extra": {"type": "object", "additionalProperties": True},
                "deep": {"allOf": [{"properties": {"x": {"type": "number"}}}]},
            },
            "required": ["date", "gone"],
        }
    )
    properties = converted["properties"]
    assert properties["date"] == {"type": "string", "description": "Day. (format date)"}
    assert properties["level"] == {"type": "integer", "description": "One of 0, 1, 2"}
    assert properties["lock"] == {"type": "boolean", "description": "Also accepts integer"}
    assert properties["label"]["description"] == '1-40 characters; default "Wake"'
    assert properties["days"]["items"] == {"type": "string", "enum": ["mon", "tue"]}
    assert properties["mode"] == {"type": "string", "enum": ["a", "b"]}
    assert properties["extra"] == {"type": "string", "description": "Give it as JSON text"}
    assert properties["deep"]["properties"] == {"x": {"type": "number"}}
    assert converted["required"] == ["date"]
    assert schema_problems(converted) == []


def test_recursive_refs_end() -> None:
    """A schema that refers to itself converts to a finite one."""
    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}},
    }
    converted = portable_schema(node)
    assert schema_problems(converted) == []


def test_restore_parses_only_free_form_text() -> None:
    """JSON text where the backend wants an object or list is parsed; strings stay strings."""
    original = {
        "type": "object",
        "properties": {
            "extra": {"type": "object"},
            "items": {"type": "array"},
            "note": {"type": "string"},
            "nested": {"type": "object", "properties": {"inner": {"type": "object"}}},
        },
    }
    restored = restore_arguments(
        original,
        {
            "extra": '{"a": 1}',
            "items": "[1, 2]",
            "note": '{"kept": "as text"}',
            "nested": {"inner": '{"b": 2}'},
            "unknown": "{}",
            "broken": "{",
        },
    )
    assert restored == {
        "extra": {"a": 1},
        "items": [1, 2],
        "note": '{"kept": "as text"}',
        "nested": {"inner": {"b": 2}},
        "unknown": "{}",
        "broken": "{",
    }
    assert restore_arguments(original, {"extra": "{not json"}) == {"extra": "{not json"}


def test_conversion_infers_and_notes_what_it_cannot_declare() -> None:
    """Types are inferred from what a schema shows; the rest is said in words."""
    converted = portable_schema(
        {
            "type": "object",
            "title": "Alarm",
            "properties": {
                "tags": {"items": {"type": "string"}, "maxLength": 3},
                "amount": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
                "count": {"const": 3},
                "ratio": {"enum": [0.5, 1.5]},
                "flag": {"enum": [True]},
                "name": {"enum": ["x"]},
                "kind": {"type": "string", "const": "alarm"},
                "short": {"type": "string", "maxLength": 8},
                "long": {"type": "string", "minLength": 2},
                "other": {"$ref": "#/$defs/missing", "description": "Gone."},
            },
        }
    )
    assert converted["title"] == "Alarm"
    properties = converted["properties"]
    assert properties["tags"] == {"type": "array", "items": {"type": "string"}}
    assert properties["amount"] == {"type": "number"}
    assert properties["count"] == {"type": "integer", "description": "One of 3"}
    assert properties["ratio"] == {"type": "number", "description": "One of 0.5, 1.5"}
    assert properties["flag"] == {"type": "boolean", "description": "One of true"}
    assert properties["name"] == {"type": "string", "enum": ["x"]}
    assert properties["kind"] == {"type": "string", "enum": ["alarm"]}
    assert properties["short"] == {"type": "string", "description": "At most 8 characters"}
    assert properties["long"] == {"type": "string", "description": "At least 2 characters"}
    # A reference to nothing is a value to give as JSON text, its description kept.
    assert properties["other"] == {"type": "string", "description": "Gone. (give it as JSON text)"}
    assert schema_problems(converted) == []


def test_restore_follows_every_way_a_schema_names_its_types() -> None:
    """JSON text is parsed where the original wants structure and cannot take a string."""
    original = {
        "type": "object",
        "properties": {
            "listed": {"type": ["object", "null"]},
            "either": {"anyOf": [{"type": "array"}, {"type": "integer"}]},
            "shaped": {"properties": {"a": {"type": "integer"}}},
            "anything": {"description": "any value"},
            "text_or_map": {"type": ["string", "object"]},
            "number": {"type": "integer"},
        },
    }
    restored = restore_arguments(
        original,
        {
            "listed": '{"a": 1}',
            "either": "[1]",
            "shaped": '{"a": 2}',
            "anything": "true",
            "text_or_map": '{"kept": 1}',
            "number": "7",
        },
    )
    assert restored == {
        "listed": {"a": 1},
        "either": [1],
        "shaped": {"a": 2},
        "anything": True,
        "text_or_map": '{"kept": 1}',
        "number": "7",
    }
