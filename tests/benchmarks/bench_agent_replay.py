"""Agent session replay: `edgedesk serve` against llama-server, each at its own defaults.

Run: .venv/bin/python -m tests.benchmarks.bench_agent_replay [--short]
     [--system-tokens 19000] [--turns 6] [--tools 20] [--llama-server PATH]
     [--only edgedesk|llama-server] [--no-rewrite | --rewrite-only [--rounds 3]]
     [--json FILE]

``--short`` (2,000-token system prompt, 3 turns, 6 tools, no rewrite task) is the quick
check: a few minutes on 2 shared cores. The default is the issue's session (a ~19k-token
system prompt, 6 turns), which takes tens of minutes there (llama-server re-reads the
whole prompt on many turns at ~100 tokens/s).

Same model (Gemma 3 270M Q4_K_M from its PyPI package, trained context 32768), same
machine, same run, both servers up together and asked in turn, request by request (so a
burst of other work on a shared machine slows both alike), both started by this script
with nothing but the model: llama-server with ``-m`` only (its defaults: context from the model, slots
chosen by it, one unified KV cache), EdgeDesk with ``serve --model --no-auth`` and an
empty ``EDGEDESK_HOME``. The peer binary is the first one that runs on this CPU
(``llama_server_peer.py``), or ``--llama-server``. The same request bodies go to both:

- Claude-Code-shaped (``/v1/messages``, streamed): the system prompt's first block is the
  billing line with a new ``cch`` every turn (what defeats prefix caching), then
  ``--system-tokens`` of instructions; ``--tools`` tools; a history that grows by an
  assistant tool call and a ~400-token tool result per turn.
- Codex-shaped (``/v1/responses``, streamed): ``instructions`` of 8/19 of that size,
  function tools, and the same growing history as ``function_call`` and
  ``function_call_output`` items.

Fair prompts: the bulk of each prompt is instruction text both servers render alike; the
tools carry one-line descriptions, because a template without tools (Gemma's) makes the
servers differ there (llama-server leaves tool definitions out of Gemma's prompt,
EdgeDesk shows them in a system turn so the model can call them). Each turn's prompt
tokens are printed for both, so any remaining difference is visible.

Each start is warmed with a one-token request (EdgeDesk loads a model on its first
request, llama-server before it reports ready), so no turn's time includes loading.
Printed: per turn, time to first token and total time on both; total time EdgeDesk ÷
llama-server (target ≤ 0.5); mean turn-2+ TTFT ÷ turn-1 TTFT (≤ 0.25); after a restart of
each server on the same data folder, turn N+1's TTFT ÷ turn 1's (≤ 0.25: EdgeDesk keeps
its prompt cache on disk, llama-server at its defaults keeps nothing); and, unless
``--no-rewrite``, a code-rewrite task's tokens/s with prompt-lookup drafting ÷ without
(≥ 1.5) on EdgeDesk's engine (``--rewrite-only``: just that, ``--rounds`` alternating runs). Absolute figures depend on the machine and what else runs
on it: compare the ratios.

``--protection`` (EdgeDesk only) measures what protecting the prompt cache costs: three
EdgeDesk servers in the same run, interleaved alike: ``edgedesk`` (plaintext database,
plaintext prompt cache), ``sealed`` (database encrypted with a passphrase, prompt cache
sealed with AES-GCM under a key derived from it) and ``memory`` (encrypted, the disk
prompt cache off: ``engine.prompt_cache_disk_mb = 0``).

``--worker`` (EdgeDesk only) measures what the model's worker process costs: two
EdgeDesk servers interleaved alike, ``edgedesk`` (each model in its worker process, the
default) and ``in-process`` (``engine.worker_process = false``, as before issue 35).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from desktop.engine._types import ChatCall
from tests.benchmarks.bench_vs_llama_server import (
    edgedesk_server,
    gemma_file,
    llama_server,
    peak_rss_bytes,
    peer_binary,
)

TOOLS = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Glob",
    "Grep",
    "WebFetch",
    "TodoWrite",
    "Task",
    "NotebookEdit",
    "LS",
    "MultiEdit",
    "ExitPlanMode",
    "BashOutput",
    "KillShell",
    "SlashCommand",
    "WebSearch",
    "Skill",
    "AskUser",
    "ListMcpResources",
]
CODEX_TOOLS = ["shell", "apply_patch", "read_file", "list_dir", "update_plan"]
_RULE = (
    "When the user asks for {topic}, read the files first, keep edits minimal, run "
    "the tests, and report what changed in one short paragraph. "
)
SHORT = {"system_tokens": 2000, "turns": 3, "tools": 6}
TARGETS = {"total": 0.5, "follow_up": 0.25, "restart": 0.25, "rewrite": 1.5}
ANSWER_TOKENS = 16  # time to first token is the point; answers stay short on both

# A server start: its work folder, and a dict that gets its process id ("pid").
Server = Callable[[Path, dict[str, int]], AbstractContextManager[tuple[str, str]]]


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
        """The next turn's TTFT after a restart ÷ turn 1's."""
        if self.after_restart is None or not self.turns:
            return 0.0
        return self.after_restart.ttft_s / self.turns[0].ttft_s

    @property
    def errors(self) -> list[str]:
        """What failed, by turn."""
        every = [*self.turns, *([self.after_restart] if self.after_restart else [])]
        return [f"turn {i}: {t.error}" for i, t in enumerate(every, start=1) if t.error]


def _text(tokens: int, seed: str) -> str:
    """About ``tokens`` tokens of instructions (Gemma: ~30 tokens per sentence)."""
    return "".join(_RULE.format(topic=f"{seed} task {i}") for i in range(max(1, tokens // 30)))


def _schema() -> dict[str, Any]:
    return {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _tool_result(turn: int) -> str:
    return "\n".join(
        f"src/module_{turn}.py:{line}: def handler_{turn}_{line}(request): ..."
        for line in range(20)
    )


def claude_code_body(turn: int, system_tokens: int, model: str, tools: int = 20) -> dict[str, Any]:
    """The Messages API body a Claude Code session sends at ``turn`` (1-based)."""
    billing = (
        f"x-anthropic-billing-header: cc_version=2.1.37.0d9; cc_entrypoint=cli; "
        f"cch={(turn * 40503) % 0xFFFFF:05x};"
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test."}]
    for done in range(1, turn):
        call = f"toolu_{done:04d}"
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Let me look at module {done}."},
                    {
                        "type": "tool_use",
                        "id": call,
                        "name": "Grep",
                        "input": {"path": f"src/module_{done}.py"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call, "content": _tool_result(done)}
                ],
            },
        ]
    return {
        "model": model,
        "max_tokens": ANSWER_TOKENS,
        "temperature": 0,
        "stream": True,
        "system": [
            {"type": "text", "text": billing},
            {"type": "text", "text": _text(system_tokens, "claude")},
        ],
        "tools": [
            {"name": n, "description": f"{n} one path.", "input_schema": _schema()}
            for n in TOOLS[:tools]
        ],
        "messages": messages,
    }


def codex_body(turn: int, model: str, instructions_tokens: int, tools: int = 5) -> dict[str, Any]:
    """The Responses API body a Codex session sends at ``turn`` (1-based)."""
    items: list[dict[str, Any]] = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Make the build pass."}],
        }
    ]
    for done in range(1, turn):
        call = f"call_{done:04d}"
        items += [
            {
                "type": "function_call",
                "call_id": call,
                "name": "shell",
                "arguments": json.dumps({"path": f"src/m{done}.py"}),
            },
            {"type": "function_call_output", "call_id": call, "output": _tool_result(done)},
        ]
    return {
        "model": model,
        "max_output_tokens": ANSWER_TOKENS,
        "temperature": 0,
        "stream": True,
        "store": False,
        "instructions": _text(instructions_tokens, "codex"),
        "tools": [
            {
                "type": "function",
                "name": n,
                "description": f"{n} one path.",
                "parameters": _schema(),
            }
            for n in CODEX_TOOLS[:tools]
        ],
        "input": items,
    }


def _content(event: dict[str, Any]) -> bool:
    """Whether a streamed event carries generated content (any of the three protocols)."""
    kind = str(event.get("type", ""))
    if kind == "content_block_delta" or (
        kind.endswith(".delta")
        and any(part in kind for part in ("output_text", "function_call_arguments", "reasoning"))
    ):
        return True
    delta = (event.get("choices") or [{}])[0].get("delta", {})
    return bool(delta.get("content") or delta.get("tool_calls"))


def _usage(event: dict[str, Any]) -> dict[str, Any]:
    """The usage an event reports, if any (Anthropic, Responses or chat shape)."""
    found: dict[str, Any] = {}
    for holder in (event, event.get("message") or {}, event.get("response") or {}):
        found.update(holder.get("usage") or {})
    return found


def _send(url: str, route: str, body: dict[str, Any]) -> Turn:
    """One streamed request: total time, time to the first content event, usage."""
    started = time.perf_counter()
    first: float | None = None
    usage: dict[str, Any] = {}
    try:
        with (
            httpx.Client(timeout=1800) as client,
            client.stream(
                "POST", f"{url}{route}", json=body, headers={"anthropic-version": "2023-06-01"}
            ) as response,
        ):
            if response.status_code != 200:
                response.read()
                return Turn(
                    time.perf_counter() - started,
                    0.0,
                    error=f"HTTP {response.status_code}: {response.text[:300]}",
                )
            for line in response.iter_lines():
                if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                    continue
                event = json.loads(line[6:])
                if first is None and _content(event):
                    first = time.perf_counter()
                usage.update(_usage(event))
    except httpx.HTTPError as exc:
        return Turn(time.perf_counter() - started, 0.0, error=repr(exc)[:300])
    end = time.perf_counter()
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    cached = int(usage.get("cache_read_input_tokens") or details.get("cached_tokens") or 0)
    prompt = int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0)
    if "cache_read_input_tokens" in usage:  # Anthropic counts the cached part apart
        prompt += cached + int(usage.get("cache_creation_input_tokens") or 0)
    return Turn(end - started, (first or end) - started, prompt, cached)


@dataclass(frozen=True)
class Shape:
    """The sizes of one replay."""

    turns: int
    system_tokens: int
    tools: int

    def claude(self, turn: int, model: str) -> tuple[str, dict[str, Any]]:
        """Route and body of the Claude-Code-shaped turn."""
        return "/v1/messages", claude_code_body(turn, self.system_tokens, model, self.tools)

    def codex(self, turn: int, model: str) -> tuple[str, dict[str, Any]]:
        """Route and body of the Codex-shaped turn."""
        return "/v1/responses", codex_body(
            turn, model, self.system_tokens * 8 // 19, min(self.tools, len(CODEX_TOOLS))
        )


def warm(url: str, model: str) -> float:
    """A one-token request, so the model is in memory before the replay's first turn
    (EdgeDesk loads a model on its first request, llama-server before it is ready)."""
    started = time.perf_counter()
    httpx.post(
        f"{url}/v1/chat/completions",
        timeout=900,
        json={"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]},
    )
    return time.perf_counter() - started


def replay(
    starts: dict[str, Server], work: Path, shape: Shape, peaks: dict[str, int] | None = None
) -> dict[str, dict[str, Replay]]:
    """Both conversations on every server, interleaved request by request (the servers
    take turns, the first one alternating), then the next turn of each after a restart of
    every server on its own data folder (each start warmed with a one-token request).
    ``peaks`` gets each server's peak resident memory over the turns before the restart.

    Interleaving keeps the comparison fair on a shared machine: a burst of other work
    slows both sides alike instead of whichever happened to run then.
    """
    out = {name: {"claude-code": Replay(), "codex": Replay()} for name in starts}
    order = list(starts)

    def each(turn: int) -> list[str]:
        return order if turn % 2 else order[::-1]

    pids: dict[str, dict[str, int]] = {name: {} for name in starts}
    with contextlib.ExitStack() as stack:
        up = {
            name: stack.enter_context(start(work / name, pids[name]))
            for name, start in starts.items()
        }
        for name, (url, model) in up.items():
            print(f"  {name} warm-up {warm(url, model):.2f} s", flush=True)
        for turn in range(1, shape.turns + 1):
            for conversation, make in (("claude-code", shape.claude), ("codex", shape.codex)):
                for name in each(turn):
                    url, model = up[name]
                    out[name][conversation].turns.append(_send(url, *make(turn, model)))
                    print(
                        f"  {name:<12} {conversation} turn {turn}: "
                        f"{_brief(out[name][conversation].turns[-1])}",
                        flush=True,
                    )
        for name, pid in pids.items():
            peak = peak_rss_bytes(pid["pid"]) if "pid" in pid else 0
            print(f"  {name} peak resident memory {peak / 2**20:.0f} MiB", flush=True)
            if peaks is not None:
                peaks[name] = peak
    with contextlib.ExitStack() as stack:  # what a restart keeps
        up = {name: stack.enter_context(start(work / name, {})) for name, start in starts.items()}
        for name, (url, model) in up.items():
            print(f"  {name} warm-up after restart {warm(url, model):.2f} s", flush=True)
        for conversation, make in (("claude-code", shape.claude), ("codex", shape.codex)):
            for name in each(shape.turns + 1):
                url, model = up[name]
                out[name][conversation].after_restart = _send(url, *make(shape.turns + 1, model))
                print(
                    f"  {name:<12} {conversation} turn {shape.turns + 1} after restart: "
                    f"{_brief(out[name][conversation].after_restart)}",
                    flush=True,
                )
    return out


def _brief(turn: Turn | None) -> str:
    if turn is None:
        return "-"
    if turn.error:
        return f"ERROR {turn.error}"
    return (
        f"TTFT {turn.ttft_s:.2f} s, total {turn.total_s:.2f} s, prompt "
        f"{turn.prompt_tokens}, cached {turn.cached_tokens}"
    )


def rewrite_speed(model: Path, rounds: int = 3) -> dict[str, Any]:
    """Tokens/s rewriting a 300-line file with one function changed, prompt lookup on and off.

    "With" is the model family's default (``LOOKUP_BY_FAMILY``, or 32 for a family without
    one). Both engines are loaded and their prompt prefilled first (a one-token request
    each), then ``rounds`` rounds alternate the two on the same prompt, greedy, 300 tokens:
    what else runs on the machine meets both alike. Per round: tokens/s of each, the
    ratio, decode steps, guesses made and taken, and whether the answers are identical.
    """
    from desktop.base.config import EngineSettings
    from desktop.catalog._gguf_info import read_gguf
    from desktop.engine._llama import LlamaEngine
    from desktop.engine._native import LoadOptions
    from desktop.engine._types import GenerationParams, Message
    from desktop.resolve._plan import lookup_tokens

    lines = [f"def f{i}(x):\n    return x * {i} + {i * 7}\n" for i in range(100)]
    source = "\n".join(lines)
    ask = [
        Message(
            "user",
            "Return this file unchanged except that f3 must return x * 3 "
            f"- 21. Reply with the whole file only.\n\n{source}",
        )
    ]
    draft = lookup_tokens(read_gguf(model), EngineSettings()) or 32
    engines = {
        label: LlamaEngine(model, LoadOptions(context_length=8192, lookup_draft=tokens))
        for label, tokens in (("without", 0), ("with", draft))
    }
    runs: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
    try:
        for engine in engines.values():
            list(
                engine.stream_chat(ChatCall.of(ask, GenerationParams(max_tokens=1)))
            )  # prefill once
        for _ in range(rounds):
            for label, engine in engines.items():
                before = engine.stats()
                chunks = list(
                    engine.stream_chat(
                        ChatCall.of(ask, GenerationParams(max_tokens=300, temperature=0.0))
                    )
                )
                after = engine.stats()
                runs[label].append(
                    {
                        "tokens_per_s": chunks[-1].tokens_per_s,
                        "steps": after.decode_steps - before.decode_steps,
                        "drafted": after.draft_tokens - before.draft_tokens,
                        "accepted": after.draft_accepted - before.draft_accepted,
                        "text": "".join(c.text for c in chunks),
                    }
                )
    finally:
        for engine in engines.values():
            engine.close()
    ratios = [
        w["tokens_per_s"] / o["tokens_per_s"] if o["tokens_per_s"] else 0.0
        for w, o in zip(runs["with"], runs["without"], strict=True)
    ]
    texts = {run["text"] for label in runs for run in runs[label]}
    return {
        "draft_tokens": draft,
        "without": statistics.median(r["tokens_per_s"] for r in runs["without"]),
        "with": statistics.median(r["tokens_per_s"] for r in runs["with"]),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "steps_without": runs["without"][0]["steps"],
        "steps_with": runs["with"][0]["steps"],
        "drafted": runs["with"][0]["drafted"],
        "accepted": runs["with"][0]["accepted"],
        "identical": len(texts) == 1,
    }


def _verdict(value: float, target: float, at_most: bool = True) -> str:
    met = value <= target if at_most else value >= target
    return f"{value:.2f} ({'<=' if at_most else '>='} {target}: {'met' if met else 'MISSED'})"


def report(results: dict[str, dict[str, Replay]], shape: Shape) -> list[str]:
    """The table of figures and ratios, as printed."""
    lines: list[str] = []
    for conversation in ("claude-code", "codex"):
        sides = {name: r[conversation] for name, r in results.items()}
        lines.append(
            f"{conversation} ({shape.turns} turns, then turn {shape.turns + 1} after a restart):"
        )
        for name, side in sides.items():
            lines.append(
                f"  {name:<12} TTFT s  "
                + " ".join(f"{t.ttft_s:7.2f}" for t in side.turns)
                + f" | restart {side.after_restart.ttft_s if side.after_restart else 0:7.2f}"
            )
            lines.append(
                f"  {'':<12} total s "
                + " ".join(f"{t.total_s:7.2f}" for t in side.turns)
                + f" | sum {side.total_s:7.2f}"
            )
            lines.append(
                f"  {'':<12} prompt  " + " ".join(f"{t.prompt_tokens:7d}" for t in side.turns)
            )
            lines.append(
                f"  {'':<12} cached  " + " ".join(f"{t.cached_tokens:7d}" for t in side.turns)
            )
        if "llama-server" in sides and "edgedesk" in sides and sides["llama-server"].total_s:
            ratio = sides["edgedesk"].total_s / sides["llama-server"].total_s
            lines.append(
                f"  total time EdgeDesk / llama-server: {_verdict(ratio, TARGETS['total'])}"
            )
        for name, side in sides.items():
            lines.append(
                f"  {name}: turn 2+ TTFT / turn 1: "
                f"{_verdict(side.follow_up_ratio, TARGETS['follow_up'])}; "
                f"after restart / turn 1: "
                f"{_verdict(side.restart_ratio, TARGETS['restart'])}"
            )
            lines += [f"  {name} {e}" for e in side.errors]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Replay both conversations on both servers; print the figures and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument(
        "--short",
        action="store_true",
        help="quick check: 2,000-token system prompt, 3 turns, 6 tools, no rewrite task",
    )
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--system-tokens", type=int, default=19000)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--llama-server", default=None, metavar="PATH")
    parser.add_argument("--no-rewrite", action="store_true", help="skip the rewrite task")
    parser.add_argument(
        "--rewrite-only", action="store_true", help="only the rewrite task (a minute or two)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rewrite task rounds")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE")
    parser.add_argument("--only", choices=["llama-server", "edgedesk"], default=None)
    parser.add_argument(
        "--protection",
        action="store_true",
        help="EdgeDesk plaintext vs sealed prompt cache vs memory only (no llama-server)",
    )
    parser.add_argument(
        "--worker",
        action="store_true",
        help="EdgeDesk with its model in a worker process vs in its own (no llama-server)",
    )
    args = parser.parse_args(argv)
    shape = Shape(**SHORT) if args.short else Shape(args.turns, args.system_tokens, args.tools)
    model = gemma_file()
    work = Path(tempfile.mkdtemp(prefix="edgedesk-agent-replay-"))
    starts: dict[str, Server] = {}
    peaks: dict[str, int] = {}
    peer = None
    try:
        if args.protection:
            args.only, args.no_rewrite = "edgedesk", True
            starts.update(protection_starts(model))
        if args.worker:
            args.only, args.no_rewrite = "edgedesk", True
            starts.update(worker_starts(model))
        if args.only != "edgedesk" and not args.rewrite_only:
            peer = peer_binary(args.llama_server, work / "peer", model)
            binary = peer.path
            print(f"llama-server: {peer.describe()}", flush=True)
            starts["llama-server"] = lambda w, pids: llama_server(
                binary, model, _fresh(w), slots=None, pids=pids
            )
        mixes = args.protection or args.worker  # EdgeDesk variants of their own
        if args.only != "llama-server" and not args.rewrite_only and not mixes:
            starts["edgedesk"] = lambda w, pids: edgedesk_server(model, _made(w), Path.cwd(), pids)
        results = replay(starts, work, shape, peaks) if starts else {}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\n{model.name}; {os.cpu_count()} CPUs (shared with other work); system prompt "
        f"{shape.system_tokens} tokens, {shape.tools} tools"
        + (f"; llama-server {peer.describe()}" if peer else "")
        + "\n"
    )
    if results:
        print("\n".join(report(results, shape)))
    if peaks:
        print(
            "peak resident memory: "
            + ", ".join(f"{name} {peak / 2**20:.0f} MiB" for name, peak in peaks.items())
            + (
                f"; EdgeDesk / llama-server {peaks['edgedesk'] / peaks['llama-server']:.2f}"
                if peaks.get("llama-server") and "edgedesk" in peaks
                else ""
            )
        )
    rewrite = {} if args.no_rewrite or args.short else rewrite_speed(model, args.rounds)
    if rewrite:
        print(
            f"\ncode rewrite: {rewrite['without']:.1f} tok/s without prompt lookup, "
            f"{rewrite['with']:.1f} with ({rewrite['draft_tokens']} tokens at most per "
            f"guess; median of {len(rewrite['ratios'])} rounds): ratio "
            f"{_verdict(rewrite['ratio'], TARGETS['rewrite'], at_most=False)}; per round "
            + ", ".join(f"{r:.2f}" for r in rewrite["ratios"])
            + f"\n  decode steps {rewrite['steps_without']} -> {rewrite['steps_with']}, "
            f"guesses taken {rewrite['accepted']}/{rewrite['drafted']}, answers "
            + ("identical" if rewrite["identical"] else "DIFFERENT")
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "shape": asdict(shape),
                    "llama-server": peer.describe() if peer else None,
                    "replays": {
                        s: {c: asdict(r) for c, r in v.items()} for s, v in results.items()
                    },
                    "rewrite": rewrite,
                    "peak_rss_bytes": peaks,
                },
                indent=2,
            )
        )
    return 0


def protection_starts(model: Path) -> dict[str, Server]:
    """EdgeDesk three ways: a plaintext install, an encrypted one (its prompt cache sealed)
    and an encrypted one keeping conversations in memory only (no disk prompt cache)."""
    # A passphrase, never a keyring entry of the machine's: a new install encrypts with it.
    sealed = {
        "EDGEDESK_PASSPHRASE": "agent replay benchmark",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }

    def memory_only(work: Path, pids: dict[str, int]) -> AbstractContextManager[tuple[str, str]]:
        config = _made(work / "home" / "config")
        (config / "settings.toml").write_text("[engine]\nprompt_cache_disk_mb = 0\n")
        return edgedesk_server(model, _made(work), Path.cwd(), pids, sealed)

    return {
        "edgedesk": lambda w, pids: edgedesk_server(model, _made(w), Path.cwd(), pids),
        "sealed": lambda w, pids: edgedesk_server(model, _made(w), Path.cwd(), pids, sealed),
        "memory": memory_only,
    }


def worker_starts(model: Path) -> dict[str, Server]:
    """EdgeDesk two ways: its model in a worker process (the default), and in its own."""

    def in_process(work: Path, pids: dict[str, int]) -> AbstractContextManager[tuple[str, str]]:
        config = _made(work / "home" / "config")
        (config / "settings.toml").write_text("[engine]\nworker_process = false\n")
        return edgedesk_server(model, _made(work), Path.cwd(), pids)

    return {
        "edgedesk": lambda w, pids: edgedesk_server(model, _made(w), Path.cwd(), pids),
        "in-process": in_process,
    }


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fresh(path: Path) -> Path:
    """A new folder for one llama-server start (its library links are made anew)."""
    path.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=path))


if __name__ == "__main__":
    sys.exit(main())
