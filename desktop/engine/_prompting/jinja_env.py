"""The sandboxed Jinja environment chat templates run in.

It follows Hugging Face transformers' chat-template rules (``_compile_jinja_template``:
trim/lstrip blocks, the loopcontrols extension, a ``tojson`` filter taking
``ensure_ascii``/``indent``/``separators``/``sort_keys``, ``raise_exception`` and
``strftime_now``), so a GGUF's template renders exactly as the model's authors rendered
it in training. Two deliberate differences:

- list and dict mutation (``.append``, ``.pop``, ``.update``) is allowed, because real
  templates (Kimi K2) use it and llama.cpp's own Jinja engine allows it;
- attribute access is an allow-list by type: only plain data (str, numbers, lists,
  dicts, Jinja's loop/namespace/cycler/joiner helpers) exposes attributes, and never
  one that starts with an underscore. A template from a downloaded file therefore
  cannot reach Python internals, files or the network, and any attempt is refused
  loudly instead of rendering as an empty string.

Pure and thread-safe: compiled templates are immutable and may render on any thread.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from typing import Any, NoReturn

from jinja2 import Template
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.ext import loopcontrols
from jinja2.runtime import LoopContext, Undefined
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Cycler, Joiner, Namespace
from markupsafe import Markup

# Types whose public attributes a template may use: plain data and Jinja's own helpers.
_SAFE_TYPES: tuple[type, ...] = (
    str,
    int,
    float,
    bool,
    type(None),
    list,
    dict,
    tuple,
    set,
    frozenset,
    LoopContext,
    Cycler,
    Joiner,
    Namespace,
    Markup,
    Undefined,
)


class TemplateRaised(TemplateError):
    """The template itself refused the conversation (its ``raise_exception``)."""


class _ChatSandbox(SandboxedEnvironment):
    """A mutable sandbox whose attribute access is allow-listed by type."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not isinstance(obj, _SAFE_TYPES):
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        # Jinja's default hands back an Undefined that prints as "", so a probing
        # template would render silently; refusing at once names the culprit.
        raise SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} is not allowed "
            "in a chat template"
        )


def _raise_exception(message: str) -> NoReturn:
    raise TemplateRaised(message)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # Hugging Face's override: no HTML escaping, and the json.dumps options exposed.
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


def environment() -> SandboxedEnvironment:
    """A fresh chat-template environment with Hugging Face's filters and globals."""
    env = _ChatSandbox(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@functools.lru_cache(maxsize=32)
def compiled(text: str) -> Template:
    """The compiled template for ``text`` (cached: compiling costs 8-20 ms, rendering 0.05)."""
    return environment().from_string(text)
