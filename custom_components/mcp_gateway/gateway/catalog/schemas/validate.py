"""Arguments checked against the one schema a tool publishes, with messages an AI can act on.

The gateway's own tools are declared in the portable subset, and `schema_errors` (after
`lift_single_items`) checks their arguments against the very schema tools/list publishes:
the checks every schema may have (type, enum, anyOf), then those of the value's JSON type,
looked up by type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import json
import math
from typing import Any, Final

from .subset import json_type

# The title of a string property that takes JSON text, and the object or array itself.
JSON_TEXT_TITLE: Final = "JSON text"

_JSON_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def lift_single_items(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Plain intents written loosely become what the schema asks for, at any depth.

    Models often write `"domain": "light"` for `["light"]`, or a number where a text is asked
    (`"value": 5` for a select or number entity); the intent is plain, so accept it rather than
    fail the call. Anything else is left for schema_errors to judge.
    """
    lifted = _lift(schema, arguments)
    return lifted if isinstance(lifted, dict) else arguments


def _lift(schema: Any, value: Any) -> Any:
    # Schemas are JSON objects (dicts), checked as such rather than against the Mapping ABC:
    # every gateway call comes through here.
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict | list) and schema.get("title") == JSON_TEXT_TITLE:
        # A free-form value no portable schema can declare is asked for as JSON text; the
        # object or array itself is what most clients send.
        return json.dumps(value)
    lift = _LIFTS.get(json_type(value))
    return value if lift is None else lift(schema, value)


def _lift_string(schema: dict[str, Any], value: str) -> Any:
    """A text where a list of texts is asked: that list of one."""
    items = schema.get("items") if schema.get("type") == "array" else None
    return [value] if isinstance(items, dict) and items.get("type") == "string" else value


def _lift_number(schema: dict[str, Any], value: float) -> Any:
    """A number where a text is asked: the number's text."""
    if schema.get("type") != "string":
        return value
    return f"{value:g}" if isinstance(value, float) else str(value)


def _lift_array(schema: dict[str, Any], value: list[Any]) -> Any:
    items = schema.get("items")
    return [_lift(items, item) for item in value] if isinstance(items, dict) else value


def _lift_object(schema: dict[str, Any], value: dict[str, Any]) -> Any:
    if isinstance(properties := schema.get("properties"), dict):
        return {key: _lift(properties.get(key), item) for key, item in value.items()}
    return value


_LIFTS: Final[Mapping[str | None, Callable[[dict[str, Any], Any], Any]]] = {
    "string": _lift_string,
    "number": _lift_number,
    "array": _lift_array,
    "object": _lift_object,
}


def schema_errors(schema: Mapping[str, Any], value: Any, path: str = "arguments") -> list[str]:
    """Check a value against the JSON Schema subset the gateway's own tools publish; messages
    name the path."""
    if not _type_matches(schema, value):
        types = schema["type"]
        names = [types] if isinstance(types, str) else list(types)
        return [f"{path} must be {' or '.join(names)}"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(item) for item in schema["enum"])
        errors.append(f"{path} must be one of {allowed}")
    if "anyOf" in schema:
        errors.extend(_any_of_errors(schema["anyOf"], value, path))
    if check := _CHECKS.get(json_type(value)):
        errors.extend(check(schema, value, path))
    return errors


def _any_of_errors(branches: list[Mapping[str, Any]], value: Any, path: str) -> list[str]:
    found = [schema_errors(branch, value, path) for branch in branches]
    if not all(found):
        return []
    # A branch whose type matched has the useful complaint ("must be ≥ 5").
    typed = [
        errors
        for branch, errors in zip(branches, found, strict=True)
        if _type_matches(branch, value)
    ]
    return [min(typed or found, key=len)[0]]


def _number_errors(schema: Mapping[str, Any], value: float, path: str) -> list[str]:
    if not math.isfinite(value):
        # Python's JSON parser lets NaN and Infinity through; no tool means them.
        return [f"{path} must be a finite number"]
    errors = []
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path} must be ≥ {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path} must be ≤ {schema['maximum']}")
    return errors


def _string_errors(schema: Mapping[str, Any], value: str, path: str) -> list[str]:
    errors = []
    if len(value) < schema.get("minLength", 0):
        errors.append(f"{path} must have at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{path} must have at most {schema['maxLength']} characters")
    return errors


def _array_errors(schema: Mapping[str, Any], value: list[Any], path: str) -> list[str]:
    errors = []
    if len(value) < schema.get("minItems", 0):
        errors.append(f"{path} must have at least {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path} must have at most {schema['maxItems']} items")
    if isinstance(items := schema.get("items"), dict):
        for index, item in enumerate(value):
            errors.extend(schema_errors(items, item, f"{path}[{index}]"))
    return errors


def _object_errors(schema: Mapping[str, Any], value: dict[str, Any], path: str) -> list[str]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    errors = [
        f"{path}.{name} is required" for name in schema.get("required", ()) if name not in value
    ]
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            errors.extend(schema_errors(properties[name], item, f"{path}.{name}"))
        elif extra is False:
            errors.append(
                f"{path}.{name} is not accepted (accepted: {', '.join(properties) or 'none'})"
            )
        elif isinstance(extra, dict):
            errors.extend(schema_errors(extra, item, f"{path}.{name}"))
    return errors


# Booleans and null have no checks beyond type, enum and anyOf.
_CHECKS: Final[Mapping[str | None, Callable[[Mapping[str, Any], Any, str], list[str]]]] = {
    "number": _number_errors,
    "string": _string_errors,
    "array": _array_errors,
    "object": _object_errors,
}


def _type_matches(schema: Mapping[str, Any], value: Any) -> bool:
    types = schema.get("type")
    if types is None:
        return True
    if isinstance(types, str):
        return _is_type(value, types)
    return any(_is_type(value, name) for name in types)


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(name, (object,)))
