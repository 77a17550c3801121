"""Chat-template resolution and rendering, and the streaming ``<think>`` splitter.

llama-cpp-python silently falls back to the "llama-2" prompt format when a GGUF has no
template, and the model then answers garbage. We never guess: the template comes from
the GGUF, else the catalog, else a format known for the architecture, else the model is
refused with a message that says what to do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import TemplateError

from desktop.base.errors import InvalidRequest, TemplateFailed, TemplateMissing
from desktop.engine._prompting.jinja_env import TemplateRaised, compiled
from desktop.engine._prompting.template_messages import (
    fold_system_turns,
    late_system_texts,
    template_messages,
)
from desktop.engine._types import Message

# Formats whose architecture name tells us the family for certain. "llama" is absent on
# purpose: dozens of families share it, so guessing would be the bug we refuse to have.
ARCHITECTURE_TEMPLATES: dict[str, str] = {
    "chatglm": (
        "{%- for m in messages -%}<|{{ m['role'] }}|>\n{{ m['content'] }}{%- endfor -%}"
        "{%- if add_generation_prompt -%}<|assistant|>\n{% endif -%}"
    ),
    "glm4": (
        "[gMASK]<sop>{%- for m in messages -%}<|{{ m['role'] }}|>\n{{ m['content'] }}"
        "{%- endfor -%}{%- if add_generation_prompt -%}<|assistant|>\n{% endif -%}"
    ),
    # As Gemma's own template: no system role, so the system text opens the first user turn.
    "gemma3": (
        "{{ bos_token }}{%- set sys = '' -%}{%- set msgs = messages -%}"
        "{%- if messages and messages[0]['role'] == 'system' -%}"
        "{%- set sys = messages[0]['content'] | trim ~ '\n\n' -%}"
        "{%- set msgs = messages[1:] -%}{%- endif -%}"
        "{%- for m in msgs -%}"
        "{%- set role = 'model' if m['role'] == 'assistant' else 'user' -%}"
        "<start_of_turn>{{ role }}\n{{ (sys if loop.first else '') ~ (m['content'] | trim) }}"
        "<end_of_turn>{{ '\\n' }}{%- endfor -%}"
        "{%- if add_generation_prompt -%}<start_of_turn>model\n{% endif -%}"
    ),
}
# Turn markers that must end generation even if the GGUF's EOG list forgot them.
_TURN_STOPS = ("<|user|>", "<|observation|>", "<|im_end|>", "<end_of_turn>", "<|endoftext|>")


@dataclass(frozen=True)
class ResolvedTemplate:
    """A usable chat template and where it came from."""

    source: str
    text: str
    bos_token: str
    eos_token: str
    model: str = ""

    def describe(self) -> str:
        """How error messages name this template: whose it is and where it came from."""
        where = {"gguf": "from its GGUF", "catalog": "from models.toml"}.get(
            self.source, f"built in for {self.source.partition(':')[2]}"
        )
        return f"the chat template of {self.model or 'the model'} ({where})"

    def stop_strings(self) -> tuple[str, ...]:
        """Strings that end a turn in this format (only those the template uses)."""
        stops = [s for s in _TURN_STOPS if s in self.text]
        if "<|{{" in self.text.replace(" ", ""):  # GLM style: role markers built from names
            stops += ["<|user|>", "<|observation|>"]
        if self.eos_token and self.eos_token not in stops:
            stops.append(self.eos_token)
        return tuple(stops)


def resolve_template(
    *,
    model_name: str,
    architecture: str,
    gguf_template: str | None,
    catalog_template: str | None,
    bos_token: str = "",
    eos_token: str = "",
) -> ResolvedTemplate:
    """Pick the chat template (GGUF, catalog, architecture) or raise TemplateMissing."""
    if gguf_template and gguf_template.strip():
        return ResolvedTemplate("gguf", gguf_template, bos_token, eos_token, model_name)
    if catalog_template and catalog_template.strip():
        return ResolvedTemplate("catalog", catalog_template, bos_token, eos_token, model_name)
    known = ARCHITECTURE_TEMPLATES.get(architecture)
    if known:
        return ResolvedTemplate(
            f"architecture:{architecture}", known, bos_token, eos_token, model_name
        )
    raise TemplateMissing(
        f"{model_name} has no chat template (architecture '{architecture}'), so EdgeDesk "
        "cannot know its prompt format; add chat_template to its models.toml entry"
    )


def _cause(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if not isinstance(exc, TemplateRaised) else str(exc)


def render_chat(
    template: ResolvedTemplate,
    messages: Sequence[Message],
    *,
    tools: Sequence[dict[str, object]] | None = None,  # OpenAI tool entries (ToolSpec.openai)
    add_generation_prompt: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Render the conversation into the prompt text the model was trained on.

    ``extra`` are further template variables (``chat_template_kwargs``, e.g.
    ``enable_thinking``); they never override the ones set here. Any failure of the
    template is an error naming the template and its cause (a 4xx), never a crash.
    """
    if not messages:
        raise InvalidRequest("a chat needs at least one message", param="messages")
    name = template.describe()
    try:
        compiled_template = compiled(template.text)
    except TemplateError as exc:
        raise TemplateFailed(
            f"{name} cannot be compiled: {_cause(exc)}; set a working chat_template in models.toml"
        ) from None
    late = late_system_texts(messages)
    if late:
        # A system message after the first: the template renders it where it stands if
        # it can (ChatML, Llama 3, GLM); if it refuses the conversation or leaves the
        # text out (Gemma, Mistral), it is folded into the user turn beside it.
        try:
            prompt = _render(
                compiled_template,
                template,
                messages,
                tools=tools,
                add_generation_prompt=add_generation_prompt,
                extra=extra,
                name=name,
            )
        except InvalidRequest:
            prompt = None
        if prompt is not None and all(t.strip() in prompt for t in late):
            return prompt
        messages = fold_system_turns(messages)
    return _render(
        compiled_template,
        template,
        messages,
        tools=tools,
        add_generation_prompt=add_generation_prompt,
        extra=extra,
        name=name,
    )


def _render(
    compiled_template: Any,
    template: ResolvedTemplate,
    messages: Sequence[Message],
    *,
    tools: Sequence[dict[str, object]] | None,  # OpenAI tool entries (ToolSpec.openai)
    add_generation_prompt: bool,
    extra: Mapping[str, Any] | None,
    name: str,
) -> str:
    variables: dict[str, object] = dict(extra or {})  # a Jinja template's variables
    variables.update(
        messages=template_messages(messages, template.text),
        tools=[dict(t) for t in tools] if tools else None,
        add_generation_prompt=add_generation_prompt,
        bos_token=template.bos_token,
        eos_token=template.eos_token,
    )
    try:
        return str(compiled_template.render(**variables))
    except TemplateRaised as exc:
        # The template's own check (e.g. "roles must alternate"): the caller's to fix.
        raise InvalidRequest(f"{name} rejected the conversation: {exc}", param="messages") from None
    except RecursionError:
        raise TemplateFailed(f"{name} failed to render: it recursed too deeply") from None
    except Exception as exc:  # a template is foreign code: TypeError, KeyError, ... all 4xx
        raise TemplateFailed(
            f"{name} failed to render: {_cause(exc)}; set a working chat_template in models.toml"
        ) from None


class ThinkSplitter:
    """Split a token stream into answer text and ``<think>…</think>`` reasoning.

    Tags may arrive cut across tokens, so a possible tag prefix is held back until the
    next piece decides it. Start inside reasoning when the prompt already opened it.
    """

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self, *, enabled: bool, start_in_reasoning: bool = False) -> None:
        self._enabled = enabled
        self._thinking = enabled and start_in_reasoning
        self._pending = ""
        # GLM-4.5+ writes "</think>\n\n" before the answer; its reference reasoning
        # parsers strip those newlines, so the answer does not open with blank lines.
        self._after_close = False

    def _content(self, text: str) -> str:
        if self._after_close:
            text = text.lstrip("\n")
            self._after_close = not text
        return text

    def feed(self, text: str) -> tuple[str, str]:
        """Consume ``text``; return (content, reasoning) that are now certain."""
        if not self._enabled:
            return text, ""
        buffer = self._pending + text
        self._pending = ""
        content: list[str] = []
        reasoning: list[str] = []
        while buffer:
            tag = self.CLOSE if self._thinking else self.OPEN
            index = buffer.find(tag)
            if index >= 0:
                if self._thinking:
                    reasoning.append(buffer[:index])
                else:
                    content.append(self._content(buffer[:index]))
                buffer = buffer[index + len(tag) :]
                self._after_close = self._thinking
                self._thinking = not self._thinking
                continue
            keep = _partial_suffix(buffer, tag)
            if self._thinking:
                reasoning.append(buffer[: len(buffer) - keep])
            else:
                content.append(self._content(buffer[: len(buffer) - keep]))
            self._pending = buffer[len(buffer) - keep :]
            break
        return "".join(content), "".join(reasoning)

    def flush(self) -> tuple[str, str]:
        """Release whatever is held back at the end of the stream."""
        pending, self._pending = self._pending, ""
        return ("", pending) if self._thinking else (self._content(pending), "")


def _partial_suffix(text: str, tag: str) -> int:
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0
