"""Tool input schemas every function-calling dialect accepts, and the rules that say so.

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
What both take is the portable subset below; `schema_problems` names every departure from it,
`portable_schema` rewrites any backend schema into it, and `restore_arguments` undoes the one
lossy step (a free-form value asked for as JSON text) before a call reaches the backend.
The gateway's own tools are declared in it, and `schema_errors` (after `lift_single_items`)
checks their arguments against the very schema tools/list publishes.
"""

from __future__ import annotations

from collections.abc import Mapping
import json
import math
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
JSON_TEXT_NOTE: Final = "x-json-text"
# Nesting both accept (OpenAI's strict limit is the lower one).
MAX_DEPTH: Final = 10


def schema_problems(schema: Any, path: str = "inputSchema") -> list[str]:
    """Every departure from the portable subset, each with its path; [] when it is portable."""
    problems: list[str] = []
    _check(schema, path, problems, depth=0, root=True)
    return problems


def _check(schema: Any, path: str, problems: list[str], *, depth: int, root: bool) -> None:
    if not isinstance(schema, Mapping):
        problems.append(f"{path}: a schema must be an object")
        return
    if depth > MAX_DEPTH:
        problems.append(f"{path}: nested deeper than {MAX_DEPTH}")
        return
    if unknown := sorted(set(schema) - KEYWORDS):
        problems.append(f"{path}: unsupported keywords {', '.join(unknown)}")
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        problems.append(f"{path}: type must be one of {', '.join(sorted(TYPES))}, not {kind!r}")
        return
    if root and kind != "object":
        problems.append(f"{path}: the root must be an object")
    if "enum" in schema:
        enum = schema["enum"]
        if kind != "string" or not isinstance(enum, list) or not enum:
            problems.append(f"{path}: enum only as a non-empty list of strings")
        elif not all(isinstance(value, str) for value in enum):
            problems.append(f"{path}: enum values must be strings")
    if kind == "object":
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
    elif "properties" in schema or "required" in schema or "additionalProperties" in schema:
        problems.append(f"{path}: properties/required only on objects")
    if kind == "array":
        if "items" not in schema:
            problems.append(f"{path}: an array needs items")
        else:
            _check(schema["items"], f"{path}[]", problems, depth=depth + 1, root=False)
    elif "items" in schema:
        problems.append(f"{path}: items only on arrays")


# --- conversion --------------------------------------------------------------------------------


def portable_schema(schema: Any) -> dict[str, Any]:
    """Any tool's input schema in the portable subset; a portable schema comes back equal.

    What cannot be said portably is said in the description (a default, a length bound, the
    other types a value may have), and a free-form value (an object without properties, a
    map, an untyped array) is asked for as JSON text, which `restore_arguments` parses.
    """
    root = schema if isinstance(schema, Mapping) else {}
    converted = _convert(root, root, depth=0, seen=frozenset())
    if converted.get("type") != "object" or converted.get(JSON_TEXT_NOTE):
        # No parameters (or none a schema can state): an empty, closed object.
        empty: dict[str, Any] = {"type": "object", "properties": {}}
        if isinstance(root.get("required"), list):
            empty["required"] = []
        empty["additionalProperties"] = False
        return empty
    return _finish(converted)


def _convert(
    schema: Mapping[str, Any], root: Mapping[str, Any], *, depth: int, seen: frozenset[str]
) -> dict[str, Any]:
    schema, seen = _resolve(schema, root, seen)
    notes: list[str] = []
    kind = _single_type(schema, notes)
    if kind is None or depth >= MAX_DEPTH:
        return _json_text(schema, notes)
    out: dict[str, Any] = {"type": kind}
    if isinstance(description := schema.get("description"), str) and description:
        out["description"] = description
    if isinstance(title := schema.get("title"), str) and title:
        out["title"] = title
    _carry_enum(schema, kind, out, notes)
    for key in ("minimum", "maximum"):
        if kind in ("number", "integer") and _is_number(schema.get(key)):
            out[key] = schema[key]
    if kind == "string":
        if isinstance(schema.get("pattern"), str):
            out["pattern"] = schema["pattern"]
        _bounds_note(schema, notes, "minLength", "maxLength", "characters")
        if isinstance(fmt := schema.get("format"), str):
            notes.append(f"format {fmt}")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, Mapping):
            return _json_text(schema, notes)
        out["items"] = _convert(items, root, depth=depth + 1, seen=seen)
        for key in ("minItems", "maxItems"):
            if isinstance(schema.get(key), int) and not isinstance(schema[key], bool):
                out[key] = schema[key]
        if schema.get("uniqueItems") is True:
            notes.append("no repeats")
    if kind == "object":
        properties = _object_properties(schema)
        if not properties:
            return _json_text(schema, notes)
        out["properties"] = {
            name: _convert(item, root, depth=depth + 1, seen=seen)
            for name, item in properties.items()
        }
        required = schema.get("required")
        if isinstance(required, list):
            out["required"] = [name for name in required if name in properties]
        out["additionalProperties"] = False
    if "default" in schema:
        notes.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
    _add_notes(out, notes)
    return out


def _resolve(
    schema: Mapping[str, Any], root: Mapping[str, Any], seen: frozenset[str]
) -> tuple[Mapping[str, Any], frozenset[str]]:
    """Inline a local `$ref` (once per path: a recursive one ends as JSON text)."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema, seen
    if ref in seen or not ref.startswith("#/"):
        return {"description": schema.get("description", "")}, seen
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
    if not isinstance(target, Mapping):
        return {"description": schema.get("description", "")}, seen
    merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return merged, seen | {ref}


def _branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    for key in ("anyOf", "oneOf"):
        if isinstance(found := schema.get(key), list):
            return [branch for branch in found if isinstance(branch, Mapping)]
    return []


def _single_type(schema: Mapping[str, Any], notes: list[str]) -> str | None:
    """The one type to declare; the others a value may have go into the notes."""
    declared = schema.get("type")
    candidates: list[str] = []
    if isinstance(declared, str):
        candidates = [declared]
    elif isinstance(declared, list):
        candidates = [kind for kind in declared if isinstance(kind, str)]
    elif branches := _branches(schema):
        for branch in branches:
            kind = branch.get("type")
            if isinstance(kind, str):
                candidates.append(kind)
            elif "const" in branch or "enum" in branch:
                candidates.append("string")
    elif _object_properties(schema):
        candidates = ["object"]
    elif "items" in schema:
        candidates = ["array"]
    elif isinstance(values := schema.get("enum", [schema.get("const")]), list) and values:
        candidates = [_value_type(values[0])] if values[0] is not None else []
    real = [kind for kind in dict.fromkeys(candidates) if kind in TYPES]
    if not real:
        return None
    if len(real) > 1:
        if set(real) == {"integer", "number"}:
            return "number"
        notes.append(f"also accepts {' or '.join(real[1:])}")
    return real[0]


def _value_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _carry_enum(
    schema: Mapping[str, Any], kind: str, out: dict[str, Any], notes: list[str]
) -> None:
    values: Any = schema.get("enum")
    if values is None and "const" in schema:
        values = [schema["const"]]
    if values is None and (branches := _branches(schema)):
        collected = [
            value
            for branch in branches
            for value in (branch.get("enum") or ([branch["const"]] if "const" in branch else []))
        ]
        values = collected or None
    if not isinstance(values, list) or not values:
        return
    if kind == "string" and all(isinstance(value, str) for value in values):
        out["enum"] = list(values)
    else:
        notes.append(f"one of {', '.join(json.dumps(value) for value in values)}")


def _bounds_note(
    schema: Mapping[str, Any], notes: list[str], low: str, high: str, unit: str
) -> None:
    lower, upper = schema.get(low), schema.get(high)
    if isinstance(lower, int) and isinstance(upper, int):
        notes.append(f"{lower}-{upper} {unit}")
    elif isinstance(upper, int):
        notes.append(f"at most {upper} {unit}")
    elif isinstance(lower, int) and lower > 1:
        notes.append(f"at least {lower} {unit}")


def _object_properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Its properties, with those of allOf parts merged in."""
    properties: dict[str, Mapping[str, Any]] = {}
    # Schemas are parsed JSON: dicts (checked as such, since every backend call comes here).
    for part in [schema, *[p for p in schema.get("allOf", ()) if isinstance(p, dict)]]:
        found = part.get("properties")
        if isinstance(found, dict):
            properties.update({str(k): v for k, v in found.items() if isinstance(v, dict)})
    return properties


def _json_text(schema: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """A value no portable schema can describe, asked for as JSON text."""
    out: dict[str, Any] = {"type": "string", JSON_TEXT_NOTE: True}
    if isinstance(description := schema.get("description"), str) and description:
        out["description"] = description
    _add_notes(out, [*notes, "give it as JSON text"])
    return out


def _add_notes(out: dict[str, Any], notes: list[str]) -> None:
    if notes:
        text = "; ".join(notes)
        description = out.get("description", "")
        out["description"] = (
            f"{description} ({text})" if description else text[0].upper() + text[1:]
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finish(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop the internal JSON-text markers."""
    out = {key: value for key, value in schema.items() if key != JSON_TEXT_NOTE}
    if isinstance(properties := out.get("properties"), Mapping):
        out["properties"] = {name: _finish(dict(item)) for name, item in properties.items()}
    if isinstance(items := out.get("items"), Mapping):
        out["items"] = _finish(dict(items))
    return out


def restore_arguments(original: Any, arguments: Any) -> Any:
    """Arguments written against the portable schema, as the backend's own schema wants them.

    Only JSON text given where the original wants an object, array or untyped value is parsed;
    everything else passes unchanged (the backend validates).
    """
    if not isinstance(original, dict):
        return arguments
    if isinstance(arguments, str):
        if original.get("type") == "string":
            return arguments  # the common case, decided without working out every type
        wants = _native_types(original)
        if wants & {"object", "array", "any"} and "string" not in wants:
            try:
                return json.loads(arguments)
            except ValueError:
                return arguments
        return arguments
    if isinstance(arguments, dict):
        properties = _object_properties(original)
        return {
            key: restore_arguments(properties.get(key), value) for key, value in arguments.items()
        }
    if isinstance(arguments, list) and isinstance(items := original.get("items"), Mapping):
        return [restore_arguments(items, value) for value in arguments]
    return arguments


def _native_types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {kind for kind in declared if isinstance(kind, str)}
    if branches := _branches(schema):
        return {kind for branch in branches for kind in _native_types(branch)}
    if "properties" in schema:
        return {"object"}
    return {"any"}


# --- validation --------------------------------------------------------------------------------
# Arguments checked against the one schema a tool publishes, with messages an AI can act on.

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
    kind = schema.get("type")
    if isinstance(value, str):
        items = schema.get("items") if kind == "array" else None
        return [value] if isinstance(items, dict) and items.get("type") == "string" else value
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, list):
        items = schema.get("items")
        return [_lift(items, item) for item in value] if isinstance(items, dict) else value
    if isinstance(value, dict) and isinstance(properties := schema.get("properties"), dict):
        return {key: _lift(properties.get(key), item) for key, item in value.items()}
    return value


def schema_errors(schema: Mapping[str, Any], value: Any, path: str = "arguments") -> list[str]:
    """Check a value against the JSON Schema subset the gateway's own tools publish; messages
    name the path."""
    errors: list[str] = []
    if not _type_matches(schema, value):
        types = schema["type"]
        names = [types] if isinstance(types, str) else list(types)
        return [f"{path} must be {' or '.join(names)}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(item) for item in schema["enum"])
        errors.append(f"{path} must be one of {allowed}")
    if "anyOf" in schema:
        branches = [schema_errors(branch, value, path) for branch in schema["anyOf"]]
        if all(branches):
            # A branch whose type matched has the useful complaint ("must be ≥ 5").
            typed = [
                found
                for branch, found in zip(schema["anyOf"], branches, strict=True)
                if _type_matches(branch, value)
            ]
            errors.append(min(typed or branches, key=len)[0])
    if isinstance(value, bool):
        return errors
    if isinstance(value, int | float):
        if not math.isfinite(value):
            # Python's JSON parser lets NaN and Infinity through; no tool means them.
            return [*errors, f"{path} must be a finite number"]
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path} must be ≥ {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path} must be ≤ {schema['maximum']}")
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path} must have at most {schema['maxLength']} characters")
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path} must have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path} must have at most {schema['maxItems']} items")
        if isinstance(items := schema.get("items"), dict):
            for index, item in enumerate(value):
                errors.extend(schema_errors(items, item, f"{path}[{index}]"))
    elif isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        errors.extend(
            f"{path}.{name} is required" for name in schema.get("required", ()) if name not in value
        )
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
