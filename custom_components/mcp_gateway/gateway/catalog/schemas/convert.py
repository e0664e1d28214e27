"""Any backend's tool schema rewritten into the portable subset, and its arguments back.

`portable_schema` rewrites a schema into the subset (subset.py), one converter per JSON type;
what cannot be said portably is said in the description. `restore_arguments` undoes the one
lossy step (a free-form value asked for as JSON text) before a call reaches the backend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import json
from typing import Any, Final

from .subset import JSON_TEXT_NOTE, MAX_DEPTH, TYPES, json_type


def portable_schema(schema: Any) -> dict[str, Any]:
    """Any tool's input schema in the portable subset; a portable schema comes back equal.

    What cannot be said portably is said in the description (a default, a length bound, the
    other types a value may have), and a free-form value (an object without properties, a
    map, an untyped array) is asked for as JSON text, which `restore_arguments` parses.
    """
    root = schema if isinstance(schema, Mapping) else {}
    converted = _convert(root, _Walk(root, depth=0, seen=frozenset()))
    if converted.get("type") != "object" or converted.get(JSON_TEXT_NOTE):
        # No parameters (or none a schema can state): an empty, closed object.
        empty: dict[str, Any] = {"type": "object", "properties": {}}
        if isinstance(root.get("required"), list):
            empty["required"] = []
        empty["additionalProperties"] = False
        return empty
    return _finish(converted)


@dataclass(frozen=True, slots=True)
class _Walk:
    """Where a conversion is: the root (for `$ref`s), the depth, the `$ref`s on the path."""

    root: Mapping[str, Any]
    depth: int
    seen: frozenset[str]

    def deeper(self) -> _Walk:
        return _Walk(self.root, self.depth + 1, self.seen)


def _convert(schema: Mapping[str, Any], walk: _Walk) -> dict[str, Any]:
    schema, walk = _resolve(schema, walk)
    notes: list[str] = []
    kind = _single_type(schema, notes)
    if kind is None or walk.depth >= MAX_DEPTH:
        return _json_text(schema, notes)
    out: dict[str, Any] = {"type": kind}
    for key in ("description", "title"):
        if isinstance(text := schema.get(key), str) and text:
            out[key] = text
    _carry_enum(schema, kind, out, notes)
    if not _CONVERTERS[kind](schema, out, notes, walk):
        return _json_text(schema, notes)
    if "default" in schema:
        notes.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
    _add_notes(out, notes)
    return out


# A converter adds its type's keywords to `out` (and what it cannot say to the notes); False
# when no portable schema can describe the value.
type _Converter = Callable[[Mapping[str, Any], dict[str, Any], list[str], _Walk], bool]


def _convert_number(
    schema: Mapping[str, Any], out: dict[str, Any], notes: list[str], walk: _Walk
) -> bool:
    for key in ("minimum", "maximum"):
        if _is_number(schema.get(key)):
            out[key] = schema[key]
    return True


def _convert_string(
    schema: Mapping[str, Any], out: dict[str, Any], notes: list[str], walk: _Walk
) -> bool:
    if isinstance(schema.get("pattern"), str):
        out["pattern"] = schema["pattern"]
    _bounds_note(schema, notes, "minLength", "maxLength", "characters")
    if isinstance(fmt := schema.get("format"), str):
        notes.append(f"format {fmt}")
    return True


def _convert_boolean(
    schema: Mapping[str, Any], out: dict[str, Any], notes: list[str], walk: _Walk
) -> bool:
    return True


def _convert_array(
    schema: Mapping[str, Any], out: dict[str, Any], notes: list[str], walk: _Walk
) -> bool:
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return False  # an untyped array
    out["items"] = _convert(items, walk.deeper())
    for key in ("minItems", "maxItems"):
        if isinstance(schema.get(key), int) and not isinstance(schema[key], bool):
            out[key] = schema[key]
    if schema.get("uniqueItems") is True:
        notes.append("no repeats")
    return True


def _convert_object(
    schema: Mapping[str, Any], out: dict[str, Any], notes: list[str], walk: _Walk
) -> bool:
    properties = _object_properties(schema)
    if not properties:
        return False  # free-form, or a map
    deeper = walk.deeper()
    out["properties"] = {name: _convert(item, deeper) for name, item in properties.items()}
    required = schema.get("required")
    if isinstance(required, list):
        out["required"] = [name for name in required if name in properties]
    out["additionalProperties"] = False
    return True


_CONVERTERS: Final[Mapping[str, _Converter]] = {
    "object": _convert_object,
    "array": _convert_array,
    "string": _convert_string,
    "number": _convert_number,
    "integer": _convert_number,
    "boolean": _convert_boolean,
}


def _resolve(schema: Mapping[str, Any], walk: _Walk) -> tuple[Mapping[str, Any], _Walk]:
    """Inline a local `$ref` (once per path: a recursive one ends as JSON text)."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema, walk
    if ref in walk.seen or not ref.startswith("#/"):
        return {"description": schema.get("description", "")}, walk
    target: Any = walk.root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
    if not isinstance(target, Mapping):
        return {"description": schema.get("description", "")}, walk
    merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return merged, _Walk(walk.root, walk.depth, walk.seen | {ref})


# --- types, enums and the alternatives of anyOf/oneOf -------------------------------------------


def _branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives of anyOf (else oneOf)."""
    for key in ("anyOf", "oneOf"):
        if isinstance(found := schema.get(key), list):
            return [branch for branch in found if isinstance(branch, Mapping)]
    return []


def _single_type(schema: Mapping[str, Any], notes: list[str]) -> str | None:
    """The one type to declare; the others a value may have go into the notes."""
    real = [kind for kind in dict.fromkeys(_candidate_types(schema)) if kind in TYPES]
    if not real:
        return None
    if len(real) > 1:
        if set(real) == {"integer", "number"}:
            return "number"
        notes.append(f"also accepts {' or '.join(real[1:])}")
    return real[0]


def _candidate_types(schema: Mapping[str, Any]) -> list[str]:
    """The types a value may have, as declared, else as the alternatives or keywords imply."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [kind for kind in declared if isinstance(kind, str)]
    if branches := _branches(schema):
        return [kind for branch in branches if (kind := _branch_type(branch)) is not None]
    return _implied_types(schema)


def _implied_types(schema: Mapping[str, Any]) -> list[str]:
    """The type an untyped schema's keywords imply (properties, items, an enum's values)."""
    if _object_properties(schema):
        return ["object"]
    if "items" in schema:
        return ["array"]
    values = schema.get("enum", [schema.get("const")])
    if isinstance(values, list) and values and values[0] is not None:
        return [_value_type(values[0])]
    return []


def _branch_type(branch: Mapping[str, Any]) -> str | None:
    kind = branch.get("type")
    if isinstance(kind, str):
        return kind
    return "string" if "const" in branch or "enum" in branch else None


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
    """An enum (or const, or the alternatives' ones) kept on a string, else said in the notes."""
    values = _enum_values(schema)
    if not isinstance(values, list) or not values:
        return
    if kind == "string" and all(isinstance(value, str) for value in values):
        out["enum"] = list(values)
    else:
        notes.append(f"one of {', '.join(json.dumps(value) for value in values)}")


def _enum_values(schema: Mapping[str, Any]) -> Any:
    values: Any = schema.get("enum")
    if values is None and "const" in schema:
        values = [schema["const"]]
    if values is None and (branches := _branches(schema)):
        values = [value for branch in branches for value in _branch_values(branch)] or None
    return values


def _branch_values(branch: Mapping[str, Any]) -> Any:
    return branch.get("enum") or ([branch["const"]] if "const" in branch else [])


# --- descriptions --------------------------------------------------------------------------------


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


# --- arguments back ------------------------------------------------------------------------------


def restore_arguments(original: Any, arguments: Any) -> Any:
    """Arguments written against the portable schema, as the backend's own schema wants them.

    Only JSON text given where the original wants an object, array or untyped value is parsed;
    everything else passes unchanged (the backend validates).
    """
    if not isinstance(original, dict):
        return arguments
    restore = _RESTORERS.get(json_type(arguments))
    return arguments if restore is None else restore(original, arguments)


def _restore_text(original: dict[str, Any], text: str) -> Any:
    if original.get("type") == "string":
        return text  # the common case, decided without working out every type
    wants = _native_types(original)
    if wants & {"object", "array", "any"} and "string" not in wants:
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _restore_object(original: dict[str, Any], arguments: dict[str, Any]) -> Any:
    properties = _object_properties(original)
    return {key: restore_arguments(properties.get(key), value) for key, value in arguments.items()}


def _restore_array(original: dict[str, Any], arguments: list[Any]) -> Any:
    if isinstance(items := original.get("items"), Mapping):
        return [restore_arguments(items, value) for value in arguments]
    return arguments


_RESTORERS: Final[Mapping[str | None, Callable[[dict[str, Any], Any], Any]]] = {
    "string": _restore_text,
    "object": _restore_object,
    "array": _restore_array,
}


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
