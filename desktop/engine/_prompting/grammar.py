"""Sampling grammars: GBNF text from a request's ``grammar`` or ``json_schema``.

Turning a JSON Schema into GBNF happens here, before any model work, so a schema that
llama.cpp's converter cannot handle is the caller's 400, never a crash mid-request. The
schema is first checked against the JSON Schema metaschema (so ``{"type": "no-such-type"}``
is named as such), then converted; when the converter fails, the message names the
keywords it does not support.

Pure functions; safe on any thread.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from desktop.base.errors import InvalidRequest
from desktop.engine._llama_cpp import json_schema_to_gbnf
from desktop.engine._types import GenerationParams

# What llama.cpp's converter (llama_cpp/llama_grammar.py, SchemaConverter.visit) turns
# into grammar; other constraint keywords are ignored by it (documented in docs/api.md).
SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "$ref",
        "$defs",
        "definitions",
        "oneOf",
        "anyOf",
        "allOf",
        "const",
        "enum",
        "properties",
        "additionalProperties",
        "required",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "pattern",
        "format",
        "minLength",
        "maxLength",
    }
)
UNSUPPORTED_KEYWORDS = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
    }
)
SUPPORTED_FORMATS = frozenset(
    {"date", "time", "date-time", "uuid", "uuid1", "uuid2", "uuid3", "uuid4", "uuid5"}
)


def _where(path: list[str | int]) -> str:
    return "/".join(str(p) for p in path) or "the top level"


def _walk(node: Any, path: list[str | int]) -> Iterator[tuple[list[str | int], str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield path, str(key), value
            if key not in ("const", "enum", "default", "examples"):
                yield from _walk(value, [*path, key])
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, [*path, i])


def _unsupported(schema: Any) -> list[str]:
    """Where the schema uses what the converter cannot turn into grammar."""
    found = []
    for path, key, value in _walk(schema, []):
        parent_is_properties = bool(path) and path[-1] in ("properties", "$defs", "definitions")
        if parent_is_properties:
            continue  # a property *named* "not" or "minimum" is fine
        if key in UNSUPPORTED_KEYWORDS:
            found.append(f"'{key}' at {_where(path)}")
        elif key == "format" and isinstance(value, str) and value not in SUPPORTED_FORMATS:
            found.append(f"format '{value}' at {_where(path)}")
        elif (
            key == "pattern"
            and isinstance(value, str)
            and not (value.startswith("^") and value.endswith("$"))
        ):
            found.append(f"a pattern not anchored with ^...$ at {_where(path)}")
    return found


def check_schema(schema: Any) -> None:
    """Raise InvalidRequest naming the first place where ``schema`` is not a JSON Schema."""
    if not isinstance(schema, (dict, bool)):
        raise InvalidRequest("invalid json_schema: a schema is a JSON object", param="json_schema")
    # Imported here: jsonschema's format checkers build a grammar at import (about 2 s),
    # which every model worker and command would pay at start-up for a rare request.
    import jsonschema

    validator = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    error = jsonschema.exceptions.best_match(validator(validator.META_SCHEMA).iter_errors(schema))
    if error is not None:
        raise InvalidRequest(
            f"invalid json_schema: at {_where(list(error.absolute_path))}: {error.message}",
            param="json_schema",
        )


def schema_grammar(schema_text: str) -> str:
    """GBNF for a JSON schema text, or InvalidRequest naming what is wrong or unsupported."""
    try:
        schema = json.loads(schema_text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(
            f"invalid json_schema: not JSON ({exc})", param="json_schema"
        ) from None
    check_schema(schema)
    try:
        return str(json_schema_to_gbnf(schema_text))
    except Exception as exc:  # the converter raises bare asserts/KeyErrors on what it lacks
        unsupported = _unsupported(schema)
        if unsupported:
            detail = "uses what llama.cpp's grammar converter does not support: " + ", ".join(
                unsupported
            )
        else:
            detail = f"cannot be turned into a grammar by llama.cpp ({exc or type(exc).__name__})"
        raise InvalidRequest(
            f"json_schema {detail}; simplify the schema", param="json_schema"
        ) from None


def gbnf_for(params: GenerationParams) -> str | None:
    """The GBNF grammar ``params`` asks for, or None; raises InvalidRequest when invalid."""
    if params.json_schema:
        return schema_grammar(params.json_schema)
    return params.grammar or None
