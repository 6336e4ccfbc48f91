"""A small JSON-Schema checker for the registry schema (``testsets/schema.json``).

Custom registries are user input, so they are validated on load with messages that name the
file and the path of the bad value. This interprets the subset of JSON Schema the registry
schema uses (type, required, properties, additionalProperties, items, enum, pattern,
propertyNames, minItems/minProperties/minLength/minimum, local ``$ref``); the tests check
every registry entry with the full ``jsonschema`` library as well.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


def validate(value: Any, schema: dict, root: dict | None = None, path: str = "") -> list[str]:
    """All violations of ``schema`` by ``value``, as ``"path: problem"`` strings."""
    root = root or schema
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return validate(value, target, root, path)
    where = path or "(top level)"
    expected = schema.get("type")
    if expected:
        ok = isinstance(value, _TYPES[expected]) and not (
            expected in ("integer", "number") and isinstance(value, bool)
        )
        if not ok:
            return [f"{where}: expected {expected}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is not one of {', '.join(map(repr, schema['enum']))}"]
    errors: list[str] = []
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{where}: must not be empty")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int) and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{where}: {value} is below {schema['minimum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{where}: needs at least {schema['minItems']} item(s)")
        for i, item in enumerate(value):
            errors += validate(item, schema.get("items", {}), root, f"{path}[{i}]")
    if isinstance(value, dict):
        errors += _validate_object(value, schema, root, path, where)
    return errors


def _validate_object(value: dict, schema: dict, root: dict, path: str, where: str) -> list[str]:
    errors = [
        f"{where}: missing required key {key!r}"
        for key in schema.get("required", [])
        if key not in value
    ]
    if len(value) < schema.get("minProperties", 0):
        errors.append(f"{where}: needs at least {schema['minProperties']} entr(ies)")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    names = schema.get("propertyNames", {})
    for key, item in value.items():
        child = f"{path}.{key}" if path else key
        if "pattern" in names and not re.search(names["pattern"], key):
            errors.append(f"{child}: key {key!r} does not match {names['pattern']}")
        if key in properties:
            errors += validate(item, properties[key], root, child)
        elif isinstance(extra, dict):
            errors += validate(item, extra, root, child)
    return errors
