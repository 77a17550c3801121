"""Find the tool calls in a model's answer, in the formats the model families write.

Pure functions over text, so each format is tested without a model:

- Hermes/Qwen and most fine-tunes: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
- GLM-4.5 and later: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``
- GLM-4 (glm-4-9b-chat): a known tool name alone on the first line, then JSON arguments
- Kimi K2: ``<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>``
- a bare ``{"name": KNOWN, "arguments": {...}}`` object as the whole answer

Arguments always come out as JSON text, exactly as OpenAI transmits them. ``known`` may
be a mapping of tool name to its parameters schema: then a GLM argument the schema
declares a string stays a string (``"123"`` is not turned into ``123``). Kimi's call ids
(``functions.NAME:IDX``) are kept as the OpenAI ids, so the history a client sends back
renders exactly as the model wrote it.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from desktop.engine._types import ChatCall, Delta, ToolCall

IdFactory = Callable[[], str]

_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_GLM_ARG = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)
_KIMI_SECTION = re.compile(
    r"<\|tool_calls_section_begin\|>.*?(?:<\|tool_calls_section_end\|>|$)", re.DOTALL
)
_KIMI_CALL = re.compile(
    r"<\|tool_call_begin\|>\s*((?:functions\.)?([\w.\-]+?)(?::\d+)?)\s*"
    r"<\|tool_call_argument_begin\|>(.*?)<\|tool_call_end\|>",
    re.DOTALL,
)
_KIMI_ID = re.compile(r"functions\.[\w.\-]+:\d+")


@dataclass(frozen=True)
class ParsedAnswer:
    """The answer split into plain text and the tool calls found in it."""

    content: str
    tool_calls: tuple[ToolCall, ...]


def new_call_id() -> str:
    """A fresh OpenAI-style tool call id."""
    return "call_" + secrets.token_hex(12)


def _arguments_text(value: Any) -> str | None:
    """Arguments as JSON object text, or None when they are not an object."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        return None
    return json.dumps(value, ensure_ascii=False)


def _from_json_object(text: str) -> tuple[str, str] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    nested = data.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else data  # model's JSON
    name = function.get("name")
    args = _arguments_text(function.get("arguments", function.get("parameters")))
    if not isinstance(name, str) or not name or args is None:
        return None
    return name, args


def _string_parameters(schema: Any) -> frozenset[str]:
    """Names of the properties ``schema`` declares as strings (only strings)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return frozenset()
    names = set()
    for key, spec in props.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        kinds = set(kind) if isinstance(kind, list) else {kind}
        if "string" in kinds and not kinds & {"number", "integer", "boolean", "object", "array"}:
            names.add(key)
    return frozenset(names)


def _glm_value(raw: str, is_string: bool) -> Any:
    # The GLM-4.5+ templates write strings unquoted and everything else as JSON, so only
    # the tool's schema can tell "123" the string from 123 the number.
    if is_string:
        return raw
    try:
        return json.loads(raw.strip())
    except json.JSONDecodeError:
        return raw.strip()


def _from_tag_body(body: str, known: Collection[str]) -> tuple[str, str] | None:
    body = body.strip()
    if body.startswith("{"):
        return _from_json_object(body)
    name, _, rest = body.partition("<arg_key>")
    name = name.strip()
    if not name or any(c in name for c in "<>{}\n "):
        return None
    strings = _string_parameters(known.get(name)) if isinstance(known, Mapping) else frozenset()
    args = (
        {
            k.strip(): _glm_value(v, k.strip() in strings)
            for k, v in _GLM_ARG.findall("<arg_key>" + rest)
        }
        if rest
        else {}
    )
    return name, json.dumps(args, ensure_ascii=False)


def parse_tool_calls(
    text: str, known: Collection[str] = (), new_id: IdFactory = new_call_id
) -> ParsedAnswer:
    """Split ``text`` into content and tool calls; ``known`` are the offered tool names."""
    found: list[tuple[str, str]] = []
    kimi_ids: dict[int, str] = {}
    content = text
    if "<|tool_call_begin|>" in text:
        for raw_id, name, args in _KIMI_CALL.findall(text):
            arguments = _arguments_text(args)
            if arguments is not None:
                if _KIMI_ID.fullmatch(raw_id):
                    kimi_ids[len(found)] = raw_id
                found.append((name, arguments))
        content = _KIMI_SECTION.sub("", text)
    elif "<tool_call>" in text:
        for body in _TAGGED.findall(text):
            call = _from_tag_body(body, known)
            if call is not None:
                found.append(call)
        content = _TAGGED.sub("", text)
    else:
        call = _bare_call(text.strip(), known)
        if call is not None:
            found.append(call)
            content = ""
    numbered = list(enumerate(found))
    if known:
        numbered = [(i, c) for i, c in numbered if c[0] in known]
        if not numbered:
            content = text  # nothing we could honour: give the words back untouched
    calls = tuple(ToolCall(kimi_ids.get(i) or new_id(), name, args) for i, (name, args) in numbered)
    return ParsedAnswer(content.strip() if calls else content, calls)


def _bare_call(text: str, known: Collection[str]) -> tuple[str, str] | None:
    """A whole answer that is one JSON call, or GLM-4's ``NAME\\n{args}``."""
    if not known:
        return None
    if text.startswith("{"):
        call = _from_json_object(text)
        return call if call and call[0] in known else None
    first, _, rest = text.partition("\n")
    if first.strip() in known:
        arguments = _arguments_text(rest.strip() or "{}")
        if arguments is not None:
            return first.strip(), arguments
    return None


_MARKERS = ("<tool_call>", "<|tool_calls_section_begin|>", "<|tool_call_begin|>")


class StreamGate:
    """Lets an answer's words stream while holding back whatever may be a tool call.

    Text flows until a tool-call marker starts (a tail that could begin one waits for
    the next piece). An answer that opens like a bare call (``{`` or a known tool name
    on the first line) is held whole, because only the end tells whether it is one.
    ``finish`` parses the whole answer and returns the words not yet sent.
    """

    def __init__(
        self, known: Collection[str], *, hold_all: bool = False, hold_bare: bool = True
    ) -> None:
        # A mapping (name -> parameters schema) is kept whole: the parser reads the schemas.
        self._known: Collection[str] = dict(known) if isinstance(known, Mapping) else tuple(known)
        self._text = ""
        self._sent = 0
        self._holding = hold_all
        # hold_bare=False: an answer opening like a bare call streams anyway (a view that
        # can take the words back once a call is found, as the chat core does).
        self._opening_checked = hold_all or not hold_bare

    def feed(self, piece: str) -> str:
        """Add generated text; return the part that is safe to send now."""
        self._text += piece
        if self._holding:
            return ""
        if not self._opening_checked:
            verdict = self._opening()
            if verdict != "no":
                self._holding = verdict == "bare"
                return ""
            self._opening_checked = True
        text = self._text
        found = [i for i in (text.find(m, max(0, self._sent - 40)) for m in _MARKERS) if i >= 0]
        if found:
            end = min(found)
            self._holding = True
        else:
            end = len(text) - _partial_marker(text)
        out = text[self._sent : max(end, self._sent)]
        self._sent = max(end, self._sent)
        return out

    def _opening(self) -> str:
        """'bare' (held whole), 'maybe' (wait for more) or 'no' (ordinary words)."""
        lead = self._text.lstrip()
        if not lead:
            return "maybe"
        if lead.startswith("{"):
            return "bare"
        first, newline, _ = lead.partition("\n")
        first = first.strip()
        if newline:
            return "bare" if first in self._known else "no"
        return "maybe" if any(name.startswith(first) for name in self._known) else "no"

    def finish(self, new_id: IdFactory = new_call_id) -> tuple[str, tuple[ToolCall, ...]]:
        """The words still to send and the tool calls of the whole answer."""
        parsed = parse_tool_calls(self._text, self._known, new_id)
        sent = self._text[: self._sent]
        if not parsed.tool_calls:
            return self._text[self._sent :], ()
        # The sent words open the parsed content (which is stripped); send the rest.
        content, head = parsed.content, sent.lstrip()
        if content.startswith(head):
            return content[len(head) :], parsed.tool_calls
        return ("" if head.startswith(content) else content), parsed.tool_calls


def _partial_marker(text: str) -> int:
    """Length of the longest tail of ``text`` that could be the start of a marker."""
    best = 0
    for marker in _MARKERS:
        for n in range(min(len(marker) - 1, len(text)), best, -1):
            if text.endswith(marker[:n]):
                best = n
                break
    return best


def gate_calls(
    deltas: Iterable[Delta], call: ChatCall, new_id: IdFactory = new_call_id
) -> Iterator[Delta]:
    """A generated answer's deltas with its tool calls parsed: the engine side's one parse.

    Without tools the deltas pass unchanged. With tools, text that may be a call is held
    back (``StreamGate``: everything when ``call.forced``; an answer opening like a bare
    call unless ``call.stream_bare``) and the final delta carries the calls found in the
    whole answer (``Delta.tool_calls``, after any that came structured). The final
    delta's own words, reasoning and
    logprobs go out in a delta of their own before it, then the held words that are not
    a call, on the final delta, so every consumer sees them in the order they were made.
    """
    if not call.tools:
        yield from deltas
        return
    gate = StreamGate(call.tool_schemas(), hold_all=call.forced, hold_bare=not call.stream_bare)
    source = iter(deltas)
    try:
        for delta in source:
            if delta.admitted:
                yield delta
                continue
            words = gate.feed(delta.text)
            if not delta.is_final:
                yield delta if words == delta.text else replace(delta, text=words)
                continue
            rest, calls = gate.finish(new_id)
            if words or delta.reasoning or delta.logprobs:
                yield Delta(text=words, reasoning=delta.reasoning, logprobs=delta.logprobs)
            calls = delta.tool_calls + calls  # calls that came structured (a remote's) stay
            yield replace(delta, text=rest, reasoning="", logprobs=(), tool_calls=calls)
    finally:
        if isinstance(source, Generator):  # closing this stream ends the engine's at once
            source.close()
