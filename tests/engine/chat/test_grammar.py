"""Structured output: a schema is checked and converted before any model work (pure)."""

from __future__ import annotations

import json

import pytest

from desktop.base.errors import InvalidRequest
from desktop.engine._prompting.grammar import gbnf_for
from desktop.engine._types import GenerationParams

pytestmark = pytest.mark.fast


def _grammar(schema: object) -> str | None:
    return gbnf_for(GenerationParams(json_schema=json.dumps(schema)))


def test_a_supported_schema_becomes_a_grammar() -> None:
    grammar = _grammar(
        {
            "type": "object",
            "properties": {"answer": {"enum": ["yes", "no"]}},
            "required": ["answer"],
        }
    )
    assert grammar is not None and "root ::=" in grammar and '\\"yes\\"' in grammar


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ({"type": "no-such-type"}, "at type: 'no-such-type' is not valid"),
        ({"type": "object", "properties": {"a": {"type": "strin"}}}, "at properties/a/type"),
        ({"type": "array", "minItems": -1}, "at minItems"),
        ({"required": "a"}, "at required: 'a' is not of type 'array'"),
    ],
)
def test_an_invalid_schema_is_a_400_naming_the_place(schema: object, named: str) -> None:
    with pytest.raises(InvalidRequest, match="invalid json_schema") as e:
        _grammar(schema)
    assert named in str(e.value) and e.value.http_status == 400
    assert e.value.param == "json_schema"


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ({"not": {"type": "string"}}, "'not' at the top level"),
        ({"if": {"type": "string"}, "then": {"minLength": 2}}, "'if' at the top level"),
        ({"type": "object", "properties": {"n": {"minimum": 3}}}, "'minimum' at properties/n"),
        ({"type": "string", "pattern": "abc"}, "a pattern not anchored with ^...$ at the top"),
    ],
)
def test_what_llama_cpp_cannot_convert_is_a_400_naming_the_keyword(
    schema: object, named: str
) -> None:
    with pytest.raises(InvalidRequest, match="does not support") as e:
        _grammar(schema)
    assert named in str(e.value) and e.value.http_status == 400


def test_a_property_named_like_a_keyword_is_fine() -> None:
    grammar = _grammar(
        {
            "type": "object",
            "properties": {"not": {"type": "string"}, "minimum": {"type": "integer"}},
        }
    )
    assert grammar is not None


def test_not_json_and_plain_grammar() -> None:
    with pytest.raises(InvalidRequest, match="not JSON"):
        gbnf_for(GenerationParams(json_schema="{oops"))
    assert gbnf_for(GenerationParams(grammar='root ::= "x"')) == 'root ::= "x"'
    assert gbnf_for(GenerationParams()) is None
