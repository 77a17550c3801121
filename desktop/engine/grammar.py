"""Sampling grammars: GBNF text from a request's ``grammar`` or ``json_schema``.

Turning a JSON Schema into GBNF happens here, before any model work, so a schema that
llama.cpp's converter cannot handle is the caller's 400, never a crash mid-request.
"""

from __future__ import annotations

from llama_cpp.llama_grammar import json_schema_to_gbnf

from desktop.engine.types import GenerationParams
from desktop.errors import InvalidRequest


def gbnf_for(params: GenerationParams) -> str | None:
    """The GBNF grammar ``params`` asks for, or None; raises InvalidRequest when invalid."""
    if params.json_schema:
        try:
            return str(json_schema_to_gbnf(params.json_schema))
        except Exception as exc:  # the converter raises bare asserts/KeyErrors on bad input
            raise InvalidRequest(f"invalid json_schema: {exc!r}", param="json_schema") from None
    return params.grammar or None
