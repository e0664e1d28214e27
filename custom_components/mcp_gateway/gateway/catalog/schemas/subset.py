"""The portable subset of JSON Schema, and `schema_problems`, which names every departure from it.

Model providers accept only part of JSON Schema for tool parameters, and each a different part:
- OpenAI's strict mode (Structured Outputs, "Supported schemas"): every object closes with
  `additionalProperties: false`, `required` names only its properties (strict clients then
  mark every property required), no `minLength`/`maxLength`/`uniqueItems`/`default`/
  `patternProperties`/`minProperties`/`maxProperties`, nothing free-form.
- Gemini's function declarations take an OpenAPI 3.0 subset (`Schema` of the Gemini API):
  one `type` per schema (no `["string", "null"]`), `enum` on strings only, no `$ref`,
  `oneOf`/`allOf`/`not`/`const`, an OBJECT needs non-empty `properties` ("should be non-empty
  for OBJECT type"), an ARRAY needs `items`. `additionalProperties` is not part of it:
  Gemini clients drop it when they convert, which is why it may stay for OpenAI.
What both take is the subset below. Each JSON type has its own check, looked up by type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array"})
# Keywords both dialects accept. `title` only describes; `pattern` both enforce.
KEYWORDS: Final = frozenset(
    {
        *("type", "description", "title", "enum", "properties", "required"),
        *("additionalProperties", "items", "minimum", "maximum", "minItems", "maxItems"),
        "pattern",
    }
)
# Set on a value the portable schema asks for as JSON text (dropped before it is published).
JSON_TEXT_NOTE: Final = "x-json-text"
# Nesting both accept (OpenAI's strict limit is the lower one).
MAX_DEPTH: Final = 10


def json_type(value: Any) -> str | None:
    """The JSON type of a parsed JSON value ("number" for any number), None for anything else."""
    # Parsed JSON has exactly these classes: one lookup on every call's every value.
    if (kind := _JSON_CLASSES.get(type(value))) is not None:
        return kind
    # A subclass (an IntEnum, an OrderedDict); bool has none, and precedes int in the table.
    for python, name in _JSON_CLASSES.items():
        if isinstance(value, python):
            return name
    return None


_JSON_CLASSES: Final[Mapping[type, str]] = {
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}


def schema_problems(schema: Any, path: str = "inputSchema") -> list[str]:
    """Every departure from the portable subset, each with its path; [] when it is portable."""
    problems: list[str] = []
    _check(schema, path, problems, depth=0, root=True)
    return problems


def _check(schema: Any, path: str, problems: list[str], *, depth: int, root: bool) -> None:
    kind = _checked_type(schema, path, problems, depth)
    if kind is None:
        return
    if root and kind != "object":
        problems.append(f"{path}: the root must be an object")
    if "enum" in schema:
        _check_enum(schema["enum"], kind, path, problems)
    _CHECKS[kind](schema, path, problems, depth, root)


def _checked_type(schema: Any, path: str, problems: list[str], depth: int) -> str | None:
    """The schema's one type, or None when nothing more of it can be checked."""
    if not isinstance(schema, Mapping):
        problems.append(f"{path}: a schema must be an object")
        return None
    if depth > MAX_DEPTH:
        problems.append(f"{path}: nested deeper than {MAX_DEPTH}")
        return None
    if unknown := sorted(set(schema) - KEYWORDS):
        problems.append(f"{path}: unsupported keywords {', '.join(unknown)}")
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        problems.append(f"{path}: type must be one of {', '.join(sorted(TYPES))}, not {kind!r}")
        return None
    return kind


def _check_enum(enum: Any, kind: str, path: str, problems: list[str]) -> None:
    if kind != "string" or not isinstance(enum, list) or not enum:
        problems.append(f"{path}: enum only as a non-empty list of strings")
    elif not all(isinstance(value, str) for value in enum):
        problems.append(f"{path}: enum values must be strings")


def _check_object(
    schema: Mapping[str, Any], path: str, problems: list[str], depth: int, root: bool
) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or (not properties and not root):
        problems.append(f"{path}: an object needs properties")
        properties = {}
    if schema.get("additionalProperties") is not False:
        problems.append(f"{path}: an object must set additionalProperties: false")
    required = schema.get("required", [])
    if not isinstance(required, list) or any(name not in properties for name in required):
        problems.append(f"{path}: required must list only its properties")
    for name, item in properties.items():
        _check(item, f"{path}.{name}", problems, depth=depth + 1, root=False)
    _no_items(schema, path, problems)


def _check_array(
    schema: Mapping[str, Any], path: str, problems: list[str], depth: int, root: bool
) -> None:
    _no_properties(schema, path, problems)
    if "items" not in schema:
        problems.append(f"{path}: an array needs items")
    else:
        _check(schema["items"], f"{path}[]", problems, depth=depth + 1, root=False)


def _check_scalar(
    schema: Mapping[str, Any], path: str, problems: list[str], depth: int, root: bool
) -> None:
    _no_properties(schema, path, problems)
    _no_items(schema, path, problems)


def _no_properties(schema: Mapping[str, Any], path: str, problems: list[str]) -> None:
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        problems.append(f"{path}: properties/required only on objects")


def _no_items(schema: Mapping[str, Any], path: str, problems: list[str]) -> None:
    if "items" in schema:
        problems.append(f"{path}: items only on arrays")


type _Check = Callable[[Mapping[str, Any], str, list[str], int, bool], None]

_CHECKS: Final[Mapping[str, _Check]] = {
    "object": _check_object,
    "array": _check_array,
    "string": _check_scalar,
    "number": _check_scalar,
    "integer": _check_scalar,
    "boolean": _check_scalar,
}
