"""Request bodies decoded strictly, once, for every protocol's routes (``StrictJSONRoute``).

Python's ``json`` accepts what later breaks a request deep inside the engine, after it
took a slot: a lone surrogate (``"\\ud800"``: not a Unicode character, so the text cannot
be encoded for the tokenizer, the logs or the cache), ``NaN``/``Infinity`` and numbers
that overflow to ``inf`` (``1e999``), and integers of any size (``1e20`` as a seed or a
token id overflows the worker's 64-bit wire). Each is refused here, before any route
runs, as a 400 ``invalid_json`` in the route's protocol shape (the handler in
``error_responses``), naming where in the body it is.

Lone surrogates are refused, not replaced with U+FFFD: the strict choice of OpenAI's API
and llama-server (whose JSON parser refuses them), so the model never reads text the
client did not send (docs/api.md). Pure apart from the ``Request`` it reads.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

# The widest integers any field takes: a 64-bit seed, signed or not. Larger ones are
# refused while parsing, so no digit string of any length is turned into a number.
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
_INT_DIGITS = 20  # digits of INT_MAX: a longer literal is out of range without parsing

_SURROGATE = re.compile("[\ud800-\udfff]")
# A ``\u`` escape of a surrogate: only then can a decoded string hold a lone one (raw
# surrogate bytes are invalid UTF-8 and refused by the strict decode).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Refused(ValueError):
    """A value the strict decoder will not accept (raised inside ``json.loads``)."""


def _int(literal: str) -> int:
    if len(literal.lstrip("-")) > _INT_DIGITS or not INT_MIN <= (value := int(literal)) <= INT_MAX:
        shown = literal if len(literal) <= 24 else f"{literal[:12]}…({len(literal)} digits)"
        raise _Refused(f"the integer {shown} is out of range (at most 64 bits)")
    return value


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(f"the number {literal[:24]} is out of range (not a finite number)")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _where(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the body"


def _lone_surrogate(value: Any) -> tuple[str, str] | None:
    """Where in ``value`` a string (or a key) holds a lone surrogate, and which."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return _where(path), found.group()
        elif isinstance(item, dict):
            for key, inner in item.items():
                found = _SURROGATE.search(key)
                if found is not None:
                    return _where([*path, key.encode("utf-8", "replace").decode()]), found.group()
                stack.append((inner, [*path, key]))
        elif isinstance(item, list):
            stack.extend((inner, [*path, n]) for n, inner in enumerate(item))
    return None


def strict_loads(body: bytes) -> Any:
    """``body`` as JSON, or ``json.JSONDecodeError`` saying why it is refused: not
    UTF-8/16/32 text, a lone surrogate, a number out of range, ``NaN``/``Infinity``."""
    encoding = json.detect_encoding(body)
    try:
        text = body.decode(encoding)  # strict: raw surrogate bytes are refused here
    except UnicodeDecodeError as exc:
        raise json.JSONDecodeError(
            f"the body is not {encoding.upper()} text (byte {exc.start} cannot be decoded)",
            "",
            0,
        ) from None
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except _Refused as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError("the body nests too deeply", text, 0) from None
    if _SURROGATE_ESCAPE.search(text):
        found = _lone_surrogate(value)
        if found is not None:
            where, char = found
            raise json.JSONDecodeError(
                f"{where} holds a lone surrogate (\\u{ord(char):04x}), which is not a "
                "Unicode character; send the character itself or a complete UTF-16 pair",
                text,
                0,
            )
    return value


class StrictJSONRequest(Request):
    """A request whose ``json()`` is ``strict_loads`` of its body."""

    async def json(self) -> Any:
        """The body decoded by ``strict_loads`` (cached, as Starlette's own)."""
        if not hasattr(self, "_json"):
            self._json = strict_loads(await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    """A route that reads its JSON body with ``strict_loads`` (every protocol's routers)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's handler, given a ``StrictJSONRequest`` over the same ASGI scope."""
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict
