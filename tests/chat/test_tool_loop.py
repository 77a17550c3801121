"""The tool loop in the conversation core, driven by a scripted engine: calls, approval,
policy, step limit, built-in document tools, and saved tool turns after a restart."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.chat import ChatCore, ChatSaver, Decision
from desktop.chat._conversation import Conversation, ToolOutcome, ToolStep, Turn
from desktop.engine._prompting.templates import render_chat
from desktop.engine._types import GenerationParams, Message, ToolCall
from desktop.root.context import AppContext
from desktop.tools._call_log import ToolAudit
from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import McpPolicy, ServerList
from desktop.tools._toolbox import ToolBox
from desktop.tools._types import ToolSpec
from tests.chat.scripted import Scripted
from tests.engine.chat import test_template_corpus as corpus
from tests.fixtures import hf_reference
from tests.tools.conftest import SERVERS


def _call(name: str, **args: object) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {json.dumps(args)}}}</tool_call>'


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[McpClients]:
    made = McpClients(log_dir=tmp_path, token=lambda _n: None, call_timeout_s=10.0)
    yield made
    made.close()


def _toolbox(tmp_path: Path, clients: McpClients, policy: McpPolicy | None = None) -> ToolBox:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {"mcpServers": {"calc": {"command": sys.executable, "args": [str(SERVERS), "calc"]}}}
        )
    )
    return ToolBox(
        ServerList(path, policy or McpPolicy()), clients, ToolAudit(tmp_path / "tools.jsonl")
    )


class Asked:
    """An approver that answers from a list and remembers what it was shown."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.seen: list[tuple[str, str]] = []

    def __call__(self, spec: ToolSpec, call: ToolCall) -> Decision:
        self.seen.append((spec.name, call.arguments))
        return self.answers.pop(0)


def test_two_rounds_of_calls_then_an_answer_saved_and_restored(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    engine = Scripted(_call("add", a=2, b=40), _call("add", a=42, b=1), "It is 43.")
    core = ChatCore(engine, ChatSaver(context.chat_store), tools=_toolbox(tmp_path, clients))
    chat = Conversation(model="any")
    asked = Asked("once", "once")
    shown: list[str] = []
    turn = core.run(
        core.ask(chat, "What is 2+40+1?"), lambda c: shown.append(c.text), approve=asked
    )
    assert turn.content == "It is 43." and "".join(shown) == "It is 43."  # no markup shown
    assert asked.seen == [("add", '{"a": 2, "b": 40}'), ("add", '{"a": 42, "b": 1}')]
    assert [[r.text for r in s.results] for s in turn.tool_steps] == [["42"], ["43"]]
    last_prompt = engine.prompts[-1]
    assert [m.role for m in last_prompt] == ["user", "assistant", "tool", "assistant", "tool"]
    assert last_prompt[2].content == "42" and last_prompt[4].content == "43"
    assert engine.tools[0] is not None and "add" in json.dumps(engine.tools[0])

    # A restart: the stored chat comes back with its tool rounds, and the next turn's
    # prompt holds them exactly as the model saw them.
    saver = ChatSaver(context.chat_store)
    [reopened] = saver.load_all()
    saver.load_turns(reopened)
    assert reopened.messages() == [*last_prompt, Message("assistant", "It is 43.")]
    export = context.chat_store.export_markdown()
    assert "<details><summary>Tool add (ok)</summary>" in export


def test_deny_once_and_always(context: AppContext, tmp_path: Path, clients: McpClients) -> None:
    toolbox = _toolbox(tmp_path, clients)
    engine = Scripted(_call("add", a=1, b=1), "ok")
    core = ChatCore(engine, tools=toolbox)
    chat = Conversation(model="any")
    turn = core.run(core.ask(chat, "add"), approve=Asked("deny"))
    [outcome] = turn.tool_steps[0].results
    assert (outcome.status, outcome.text) == ("denied", "The user did not allow this call.")
    assert [(e.tool, e.ok, e.error) for e in toolbox.audit.entries()] == [("add", False, "denied")]

    engine = Scripted(_call("add", a=1, b=1), _call("add", a=2, b=2), "ok")
    core.streamer = engine
    always = Asked("always")
    turn = core.run(core.ask(chat, "add twice"), approve=always)
    assert len(always.seen) == 1  # "Always for this tool": the second call is not asked
    assert [s.results[0].text for s in turn.tool_steps] == ["2", "4"]
    entry = toolbox.audit.entries()[-1]
    assert (entry.tool, entry.server, entry.ok) == ("add", "calc", True)
    assert entry.duration_ms > 0 and "4" not in json.dumps(entry.__dict__).replace(
        str(entry.duration_ms), ""
    ).replace(str(entry.time), "")  # no content


def test_required_approval_asks_every_time_despite_always_and_yes_tools(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    toolbox = _toolbox(tmp_path, clients, McpPolicy(require_approval=True))
    engine = Scripted(_call("add", a=1, b=1), _call("add", a=2, b=2), "ok")
    core = ChatCore(engine, tools=toolbox, preapproved={"add"})
    asked = Asked("always", "always")
    core.run(core.ask(Conversation(model="any"), "add twice"), approve=asked)
    assert len(asked.seen) == 2


def test_a_server_the_policy_refuses_is_not_offered(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    toolbox = _toolbox(tmp_path, clients, McpPolicy(allow_user=False))
    engine = Scripted(_call("add", a=1, b=1), "ok")
    core = ChatCore(engine, tools=toolbox)
    turn = core.run(core.ask(Conversation(model="any"), "add"), approve=Asked())
    assert engine.tools[0] is None  # no tool at all: calc is the user's, not IT's
    assert turn.tool_steps == [] and "add" in turn.content  # the words, left as written
    assert clients.running() == []  # never started


def test_the_step_limit_makes_the_model_answer(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    engine = Scripted(_call("add", a=1, b=1))  # calls forever
    core = ChatCore(
        engine, tools=_toolbox(tmp_path, clients), preapproved={"add"}, max_tool_steps=2
    )
    turn = core.run(core.ask(Conversation(model="any"), "loop"))
    assert len(turn.tool_steps) == 2
    assert engine.tools[2] is None and len(engine.prompts) == 3


def test_the_document_tools_run_without_asking(context: AppContext, handbook: Path) -> None:
    engine = Scripted(
        _call("search_documents", collection="handbook", query="paid leave"), "Staff get 25 days."
    )
    core = ChatCore(engine, tools=context.toolbox)

    def never(spec: ToolSpec, call: ToolCall) -> Decision:
        raise AssertionError(f"{spec.name} needs no approval")

    grounded = Conversation(model="any", collection="handbook")
    turn = core.run(core.ask(grounded, "How much leave?"), approve=never)
    [outcome] = turn.tool_steps[0].results
    assert outcome.status == "ok" and "25 days of paid leave" in outcome.text
    assert f"{handbook} lines 1-3" in outcome.text and "source chunk:" in outcome.text
    chunk = outcome.text.split("source ")[1].split(" ")[0]
    engine = Scripted(_call("read_document_passage", source=chunk), "done")
    core.streamer = engine
    turn = core.run(core.ask(grounded, "read it"), approve=never)
    assert "25 days of paid leave" in turn.tool_steps[0].results[0].text


def test_a_chat_on_no_documents_is_offered_no_document_tools(
    context: AppContext, handbook: Path
) -> None:
    engine = Scripted("Paris.", "Paris.")
    core = ChatCore(engine, tools=context.toolbox)
    core.run(core.ask(Conversation(model="any"), "What is the capital of France?"))
    assert engine.tools[0] is None  # nothing to search: no tool specs in the prompt
    core.run(core.ask(Conversation(model="any", collection="handbook"), "And leave?"))
    assert {t["function"]["name"] for t in engine.tools[1]} >= {
        "search_documents",
        "read_document_passage",
    }


@pytest.mark.parametrize(("name", "call_id", "mutable"), corpus.CORPUS)
def test_saved_tool_turns_render_byte_exactly_after_a_restart(
    context: AppContext, name: str, call_id: str, mutable: bool
) -> None:
    call = ToolCall(call_id, "get_weather", json.dumps(corpus.ARGS, ensure_ascii=False))
    chat = Conversation(
        model="any",
        system_prompt="You are terse.",
        turns=[
            Turn("user", "Weather in Tokyo?"),
            Turn(
                "assistant",
                "21 °C, sunny.",
                tool_steps=[
                    ToolStep(
                        "",
                        "Need the forecast.",
                        (call,),
                        [ToolOutcome(call_id, "get_weather", "weather", '{"temp": 21}')],
                    )
                ],
            ),
            Turn("user", "And tomorrow?"),
        ],
    )
    saver = ChatSaver(context.chat_store)
    saver.sync(chat, len(chat.turns))
    [reopened] = ChatSaver(context.chat_store).load_all()
    ChatSaver(context.chat_store).load_turns(reopened)
    reopened.system_prompt = "You are terse."  # kept with answers' parameters
    template = corpus._template(name)
    ours = render_chat(template, reopened.messages(), tools=[corpus.WEATHER_TOOL])
    reference = hf_reference.render(
        template.text,
        corpus._hf_conversation(call_id),
        tools=[corpus.WEATHER_TOOL],
        mutable=mutable,
    )
    assert ours == reference


def test_a_real_tiny_model_forced_to_call_a_tool_gets_its_result(
    context: AppContext, tmp_path: Path, clients: McpClients, tiny_chat: Path
) -> None:
    # A grammar forces the tiny model's words to be one call: the real engine's text goes
    # through the same parser, approval, MCP call and next prompt as a real model's.
    forced = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    sent: list[list[Message]] = []

    class Recording:
        def stream_chat(self, model, call, cancel=None):
            sent.append(list(call.messages))
            return context.scheduler.stream_chat(model, call, cancel)

    core = ChatCore(Recording(), tools=_toolbox(tmp_path, clients), max_tool_steps=1)
    pending = core.ask(Conversation(model=str(tiny_chat), max_tokens=256), "2+3?")
    pending.params = GenerationParams(
        max_tokens=256, temperature=0.0, grammar=f"root ::= {json.dumps(forced)}"
    )
    asked = Asked("once")
    turn = core.run(pending, approve=asked)
    assert asked.seen == [("add", '{"a": 2, "b": 3}')]
    [step] = turn.tool_steps
    assert step.results[0].text == "5" and step.results[0].status == "ok"
    assert sent[1][-1] == Message("tool", "5", tool_call_id=step.calls[0].id)


def test_an_answer_opening_with_a_brace_still_streams(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    engine = Scripted('{"json": "is just an answer here"}')
    core = ChatCore(engine, tools=context.toolbox)
    seen: list[str] = []
    turn = core.run(
        core.ask(Conversation(model="any"), "json please"), lambda c: seen.append(c.text)
    )
    assert len([s for s in seen if s]) > 1  # word by word, not held to the end
    assert turn.content == '{"json": "is just an answer here"}' and not turn.tool_steps


def test_a_bare_json_call_streamed_as_words_moves_into_its_round(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    engine = Scripted('{"name": "add", "arguments": {"a": 1, "b": 2}}', "3.")
    core = ChatCore(engine, tools=_toolbox(tmp_path, clients), preapproved={"add"})
    turn = core.run(core.ask(Conversation(model="any"), "1+2"))
    assert turn.content == "3." and turn.tool_steps[0].results[0].text == "3"


def test_always_is_kept_across_a_restart_and_can_be_forgotten(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from desktop.base.config import NoPolicy
    from desktop.cli import main
    from desktop.root.context import build_context

    assert main(["tools", "add", "calc", "--", sys.executable, str(SERVERS), "calc"]) == 0

    def answer(approve: Asked) -> list[str]:
        ctx = build_context(policy=NoPolicy())  # a fresh start of the app each time
        try:
            core = ChatCore(Scripted(_call("add", a=1, b=1), "ok"), tools=ctx.toolbox)
            turn = core.run(core.ask(Conversation(model="any"), "add"), approve=approve)
            return [r.text for s in turn.tool_steps for r in s.results]
        finally:
            ctx.close()

    first = Asked("always")
    assert answer(first) == ["2"] and len(first.seen) == 1
    assert answer(Asked()) == ["2"]  # not asked again after the restart
    capsys.readouterr()
    assert main(["tools", "list"]) == 0
    assert "always allowed: calc/add" in capsys.readouterr().out
    assert main(["tools", "forget", "calc", "add"]) == 0
    assert main(["tools", "forget", "calc", "add"]) == 1  # nothing left to forget
    again = Asked("deny")
    assert answer(again) == ["The user did not allow this call."] and len(again.seen) == 1


def test_required_approval_never_remembers_always(tmp_path: Path, clients: McpClients) -> None:
    from desktop.tools._approvals import Approvals

    approvals = Approvals(tmp_path / "tool-approvals.json")
    approvals.add("calc", "divide")  # kept from before IT set the policy
    policy = McpPolicy(require_approval=True)
    toolbox = ToolBox(
        _toolbox(tmp_path, clients, policy).servers,
        clients,
        ToolAudit(tmp_path / "tools.jsonl"),
        approvals=approvals,
    )
    engine = Scripted(_call("add", a=1, b=1), _call("divide", a=4, b=2), "ok")
    asked = Asked("always", "once")
    ChatCore(engine, tools=toolbox).run(
        ChatCore(engine, tools=toolbox).ask(Conversation(model="any"), "add, divide"), approve=asked
    )
    assert [name for name, _ in asked.seen] == ["add", "divide"]  # both asked
    assert approvals.all() == [("calc", "divide")]  # "always" under the policy: not kept


def test_identical_calls_of_a_round_are_asked_and_run_once(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    toolbox = _toolbox(tmp_path, clients)
    storm = " ".join([_call("add", a=1, b=1)] * 5 + [_call("add", b=1, a=1)])
    core = ChatCore(Scripted(storm, "2."), tools=toolbox)
    asked = Asked("once")  # the terminal's one-by-one approver: one question
    turn = core.run(core.ask(Conversation(model="any"), "add"), approve=asked)
    assert len(asked.seen) == 1
    [step] = turn.tool_steps
    assert [r.text for r in step.results] == ["2"] * 6
    assert [r.call_id for r in step.results] == [c.id for c in step.calls]
    assert len(toolbox.audit.entries()) == 1


def test_a_batch_approver_gets_the_round_with_its_step_limit(
    context: AppContext, tmp_path: Path, clients: McpClients
) -> None:
    from desktop.chat import ApprovalBatch

    toolbox = _toolbox(tmp_path, clients)
    engine = Scripted(_call("add", a=1, b=1) + _call("divide", a=8, b=2), "ok")
    batches: list[ApprovalBatch] = []

    def choose(batch: ApprovalBatch) -> list[Decision]:
        batches.append(batch)
        return ["once", "deny"]

    core = ChatCore(engine, tools=toolbox, max_tool_steps=3)
    turn = core.run(core.ask(Conversation(model="any"), "x"), approve_all=choose)
    [batch] = batches
    assert [a.spec.name for a in batch.asks] == ["add", "divide"]
    assert (batch.step, batch.max_steps, batch.always_offered) == (1, 3, True)
    assert [r.status for r in turn.tool_steps[0].results] == ["ok", "denied"]
