"""An IDE's mix of requests on `edgedesk serve` and on llama-server, each at its defaults.

Run: .venv/bin/python -m tests.benchmarks.bench_ide_mix [--seconds 60] [--rounds 1]
     [--llama-server PATH] [--json FILE]

What an editor with an assistant sends a local server at once (issue 47), for
``--seconds`` on each server, three clients together:

- an agent: streamed chats one after another, a conversation that grows by a turn each
  time (its answer and a new question) and starts afresh after a few turns;
- autocomplete: ``/v1/completions`` on a ~300-token code prefix that grows as if typed,
  ``max_tokens`` 16, greedy, one request after another;
- embeddings: ``/v1/embeddings`` of one short text, one after another.

Models: Gemma 3 270M Q4_K_M (PyPI) for chat and autocomplete, all-MiniLM-L6-v2 Q8_0
(``/work/shared/models``, tests/benchmarks/bench_retrieval_quality.py ``minilm_path``)
for embeddings. The peer is two llama-servers at their defaults (llama-server serves one
model a process): one on Gemma, one with ``--embeddings`` on MiniLM; EdgeDesk serves
both from one ``edgedesk serve --model GEMMA --model MINILM``. The llama-server binary
is found as bench_vs_llama_server finds it (``--llama-server``, else the first
candidate that serves Gemma on this CPU: tests/benchmarks/llama_server_peer.py).

It prints, per server, p50/p90 of each kind's latency (autocomplete and embeddings:
the whole request; chat: time to first token), the chat's decode speed (tokens streamed
after the first ÷ the time they took), the requests done, errors and peak resident
memory (all of a side's processes), then a Markdown table of ratios EdgeDesk ÷
llama-server. With ``--rounds N`` the servers stay up and take turns, N times; the
figures pool every round's requests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from desktop.machine._bench_clients import percentile
from tests.benchmarks.bench_vs_llama_server import (
    FRESH,
    _chat,
    _mk,
    _system_prompt,
    edgedesk_server,
    gemma_file,
    llama_server,
    peak_rss_bytes,
    peer_binary,
)

MINILM_NAME = "all-minilm-l6-v2-q8_0.gguf"
CHAT_TOKENS = 64  # each agent turn's answer
TURNS = 4  # agent turns before it starts a new conversation
COMPLETION_TOKENS = 16
WARM_UP = 2  # requests of each kind before the clock starts

# About 300 tokens of Python with Gemma's tokenizer: the file an autocomplete request sends
# as its prefix (an editor sends the text before the cursor).
CODE_PREFIX = '''import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass
class Invoice:
    """One customer invoice: its lines, its currency and whether it was paid."""

    number: str
    customer: str
    currency: str = "EUR"
    lines: list[tuple[str, int, float]] = field(default_factory=list)
    paid: bool = False

    def total(self) -> float:
        """The sum of every line's quantity times its unit price."""
        return sum(quantity * price for _, quantity, price in self.lines)

    def add_line(self, item: str, quantity: int, price: float) -> None:
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, not {quantity}")
        self.lines.append((item, quantity, price))


def load_invoices(folder: Path) -> list[Invoice]:
    """Every invoice saved as JSON in ``folder``, oldest first."""
    invoices = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        invoice = Invoice(data["number"], data["customer"], data.get("currency", "EUR"))
        for line in data.get("lines", []):
            invoice.add_line(line["item"], line["quantity"], line["price"])
        invoices.append(invoice)
    log.info("loaded %d invoices from %s", len(invoices), folder)
    return invoices


def unpaid_total(invoices: list[Invoice], currency: str) -> float:
'''
# What the user goes on typing after the prefix: each request sends a few more characters.
TYPED = '''    """The amount still owed in ``currency``."""
    return sum(i.total() for i in invoices if not i.paid and i.currency == currency)
'''
TYPED_STEP = 4  # characters typed between two requests
QUESTIONS = [
    "Explain what this function does and what could go wrong with it.",
    "How would you test it?",
    "Rewrite it to handle invoices in several currencies.",
    "Summarise the changes in two lines.",
]
TOPICS = "invoice customer currency payment refund ledger report tax discount account".split()


@dataclass
class Side:
    """The requests of one server: latencies by kind, the chat's tokens, errors, memory."""

    name: str
    autocomplete_s: list[float] = field(default_factory=list)
    embedding_s: list[float] = field(default_factory=list)
    chat_ttft_s: list[float] = field(default_factory=list)
    chat_tokens: int = 0  # streamed after each chat's first token
    chat_decode_s: float = 0.0  # the time those took
    errors: list[str] = field(default_factory=list)
    peak_rss_bytes: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def chat_tokens_per_s(self) -> float:
        """Decode speed of the agent's chats while the other two clients run."""
        return self.chat_tokens / self.chat_decode_s if self.chat_decode_s else 0.0

    def summary(self) -> dict[str, float]:
        """p50/p90 of each kind (seconds), chat tok/s, request counts."""
        out: dict[str, float] = {}
        for kind, values in self._kinds().items():
            out[f"{kind}_n"] = len(values)
            if values:
                out[f"{kind}_p50"] = percentile(values, 0.5)
                out[f"{kind}_p90"] = percentile(values, 0.9)
        out["chat_tok_s"] = self.chat_tokens_per_s
        return out

    def _kinds(self) -> dict[str, list[float]]:
        return {
            "autocomplete": self.autocomplete_s,
            "embeddings": self.embedding_s,
            "chat_ttft": self.chat_ttft_s,
        }


@dataclass(frozen=True)
class Endpoints:
    """Where each kind of request goes on one side (llama-server: two processes)."""

    chat_url: str
    chat_model: str
    embed_url: str
    embed_model: str
    pids: tuple[int, ...]


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 GGUF: ../shared/models beside the checkout, else /work/shared."""
    beside = Path(__file__).resolve().parents[2].parent / "shared" / "models" / MINILM_NAME
    for candidate in (beside, Path("/work/shared/models") / MINILM_NAME):
        if candidate.exists():
            return candidate
    sys.exit(f"the embedding model {MINILM_NAME} is not in ../shared/models or /work/shared")


# ------------------------------------------------------------------------ the clients
async def agent(side: Side, ends: Endpoints, until: _Until, record: bool) -> None:
    """Streamed chats one after another: a conversation growing turn by turn."""
    async with httpx.AsyncClient(timeout=600, limits=FRESH) as client:
        talk: list[dict[str, str]] = []
        turn = 0
        while until.more():
            if turn % TURNS == 0:
                # A new conversation: ~400 tokens of instructions, new each time.
                talk = [
                    {"role": "system", "content": _system_prompt(f"agent{time.time_ns()}", 400)}
                ]
            question = QUESTIONS[turn % len(QUESTIONS)]
            talk.append({"role": "user", "content": f"{CODE_PREFIX}{TYPED}\n{question}"})
            turn += 1
            try:
                latency, ttft, pieces, text = await _chat(
                    client, ends.chat_url, ends.chat_model, talk, CHAT_TOKENS
                )
            except Exception as exc:
                side.errors.append(f"chat: {exc!r}"[:300])
                talk.pop()
                continue
            talk.append({"role": "assistant", "content": text})
            if record:
                side.chat_ttft_s.append(ttft)
                side.chat_tokens += max(0, pieces - 1)
                side.chat_decode_s += latency - ttft


async def autocomplete(side: Side, ends: Endpoints, until: _Until, record: bool) -> None:
    """``/v1/completions`` on the code typed so far, one after another."""
    async with httpx.AsyncClient(timeout=600, limits=FRESH) as client:
        typed = 0
        while until.more():
            typed = typed + TYPED_STEP if typed + TYPED_STEP <= len(TYPED) else 0
            body = {
                "model": ends.chat_model,
                "prompt": CODE_PREFIX + TYPED[:typed],
                "max_tokens": COMPLETION_TOKENS,
                "temperature": 0.0,
            }
            started = time.perf_counter()
            try:
                response = await client.post(f"{ends.chat_url}/v1/completions", json=body)
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
                if "text" not in response.json()["choices"][0]:
                    raise RuntimeError(f"no completion text: {response.text[:200]}")
            except Exception as exc:
                side.errors.append(f"autocomplete: {exc!r}"[:300])
                continue
            if record:
                side.autocomplete_s.append(time.perf_counter() - started)


async def embeddings(side: Side, ends: Endpoints, until: _Until, record: bool) -> None:
    """``/v1/embeddings`` of one short text, one after another."""
    async with httpx.AsyncClient(timeout=600, limits=FRESH) as client:
        index = 0
        while until.more():
            index += 1
            topic = TOPICS[index % len(TOPICS)]
            text = f"def {topic}_{index}(records): return the {topic} totals grouped by month"
            started = time.perf_counter()
            try:
                response = await client.post(
                    f"{ends.embed_url}/v1/embeddings",
                    json={"model": ends.embed_model, "input": text},
                )
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
                if not response.json()["data"][0]["embedding"]:
                    raise RuntimeError("an empty embedding")
            except Exception as exc:
                side.errors.append(f"embeddings: {exc!r}"[:300])
                continue
            if record:
                side.embedding_s.append(time.perf_counter() - started)


class _Until:
    """A client's loop condition: until ``seconds`` have passed and at least ``requests``
    were sent (a request under way at the deadline finishes)."""

    def __init__(self, seconds: float, requests: int = 0) -> None:
        self._deadline = time.monotonic() + seconds
        self._left = requests

    def more(self) -> bool:
        """Whether to send another request (counted as sent)."""
        self._left -= 1
        return self._left >= 0 or time.monotonic() < self._deadline


async def mix(side: Side, ends: Endpoints, seconds: float, record: bool = True) -> None:
    """The three clients together for ``seconds``."""
    await asyncio.gather(
        agent(side, ends, _Until(seconds), record),
        autocomplete(side, ends, _Until(seconds), record),
        embeddings(side, ends, _Until(seconds), record),
    )


async def warm_up(ends: Endpoints) -> None:
    """Each kind a few times: models loaded, first-request costs paid, nothing recorded."""
    scratch = Side("warm-up")
    await asyncio.gather(
        agent(scratch, ends, _Until(0, WARM_UP), False),
        autocomplete(scratch, ends, _Until(0, WARM_UP), False),
        embeddings(scratch, ends, _Until(0, WARM_UP), False),
    )
    if scratch.errors:
        raise RuntimeError(f"warm-up failed: {scratch.errors[:3]}")


# ------------------------------------------------------------------------ the servers
@contextmanager
def llama_servers(binary: Path, chat: Path, embed: Path, work: Path) -> Iterator[Endpoints]:
    """Two llama-servers at their defaults: Gemma, and MiniLM with ``--embeddings``."""
    chat_pid: dict[str, int] = {}
    embed_pid: dict[str, int] = {}
    with (
        llama_server(binary, chat, _mk(work / "chat"), slots=None, pids=chat_pid) as (c_url, c),
        llama_server(
            binary,
            embed,
            _mk(work / "embed"),
            slots=None,
            pids=embed_pid,
            extra_args=["--embeddings"],
        ) as (e_url, e),
    ):
        yield Endpoints(c_url, c, e_url, e, (chat_pid["pid"], embed_pid["pid"]))


@contextmanager
def edgedesk(chat: Path, embed: Path, work: Path, src: Path) -> Iterator[Endpoints]:
    """One ``edgedesk serve`` with both models."""
    pid: dict[str, int] = {}
    serving = edgedesk_server(chat, _mk(work), src, pids=pid, extra_args=["--model", str(embed)])
    with serving as (url, model):
        yield Endpoints(url, model, url, embed.name.removesuffix(".gguf"), (pid["pid"],))


def _peak(ends: Endpoints) -> int:
    return sum(peak_rss_bytes(pid) for pid in ends.pids)


def measure(
    sides: dict[str, Side],
    starts: dict[str, Callable[[Path], Any]],
    work: Path,
    seconds: float,
    rounds: int,
) -> None:
    """The mix on each server in turn (llama-server first), ``rounds`` times.

    With one round each side runs alone (the other is stopped); with more, all stay up
    (an idle server takes next to no CPU) and take turns, so both see the same minutes
    of a machine whose load drifts.
    """
    if rounds <= 1:
        for name, start in starts.items():
            with start(work / name) as ends:
                asyncio.run(warm_up(ends))
                _one_round(sides[name], ends, seconds, 1, 1)
                sides[name].peak_rss_bytes = _peak(ends)
        return
    with ExitStack() as stack:
        up = {name: stack.enter_context(start(work / name)) for name, start in starts.items()}
        for ends in up.values():
            asyncio.run(warm_up(ends))
        for index in range(rounds):
            for name, ends in up.items():
                _one_round(sides[name], ends, seconds, index + 1, rounds)
        for name, ends in up.items():
            sides[name].peak_rss_bytes = _peak(ends)


def _one_round(side: Side, ends: Endpoints, seconds: float, index: int, rounds: int) -> None:
    print(f"--- round {index} of {rounds}: {side.name}, {seconds:.0f} s", flush=True)
    asyncio.run(mix(side, ends, seconds))
    got = side.summary()
    print(
        f"{side.name:>12}: autocomplete {got['autocomplete_n']:.0f}, embeddings "
        f"{got['embeddings_n']:.0f}, chats {got['chat_ttft_n']:.0f} so far; "
        f"{len(side.errors)} errors",
        flush=True,
    )


# ------------------------------------------------------------------------ the table
def _pair(side: Side, kind: str) -> str:
    got = side.summary()
    if f"{kind}_p50" not in got:
        return "—"
    return f"{got[f'{kind}_p50']:.3f} / {got[f'{kind}_p90']:.3f}"


def _ratio(ours: float | None, ref: float | None) -> str:
    return f"{ours / ref:.2f}×" if ours and ref else "—"


def table(ref: Side, ours: Side) -> str:
    """The Markdown table: each figure for both servers and EdgeDesk ÷ llama-server."""
    r, o = ref.summary(), ours.summary()
    rows = [
        f"| work | {ref.name} | {ours.name} | ratio ({ours.name} ÷ {ref.name}) |",
        "|---|---|---|---|",
    ]
    for kind, label in (
        ("autocomplete", "autocomplete p50 / p90, s"),
        ("embeddings", "embeddings p50 / p90, s"),
        ("chat_ttft", "chat time to first token p50 / p90, s"),
    ):
        ratios = " / ".join(
            _ratio(o.get(f"{kind}_{q}"), r.get(f"{kind}_{q}")) for q in ("p50", "p90")
        )
        rows.append(f"| {label} | {_pair(ref, kind)} | {_pair(ours, kind)} | {ratios} |")
    rows.append(
        f"| chat decode, tok/s (higher is better) | {ref.chat_tokens_per_s:.1f} | "
        f"{ours.chat_tokens_per_s:.1f} | {_ratio(ours.chat_tokens_per_s, ref.chat_tokens_per_s)} |"
    )
    counts = "{autocomplete_n:.0f} / {embeddings_n:.0f} / {chat_ttft_n:.0f}"
    rows.append(
        f"| requests done (autocomplete / embeddings / chats) | {counts.format(**r)} | "
        f"{counts.format(**o)} | |"
    )
    rows.append(f"| errors | {len(ref.errors)} | {len(ours.errors)} | |")
    rows.append(
        f"| peak RSS, MiB (all its processes) | {ref.peak_rss_bytes / 2**20:.0f} | "
        f"{ours.peak_rss_bytes / 2**20:.0f} | {_ratio(ours.peak_rss_bytes, ref.peak_rss_bytes)} |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Start the servers, run the mix on each, print the table (and JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--seconds", type=float, default=60.0, help="the mix's length a round")
    parser.add_argument(
        "--rounds", type=int, default=1, help="alternate the servers this many times"
    )
    parser.add_argument("--llama-server", default=None, metavar="PATH")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be positive and --rounds at least 1")
    chat, embed = gemma_file(), minilm_path()
    work = Path(tempfile.mkdtemp(prefix="edgedesk-ide-mix-"))
    sides = {"llama-server": Side("llama-server"), "edgedesk": Side("EdgeDesk")}
    try:
        peer = peer_binary(args.llama_server, work / "peer", chat)
        print(f"llama-server: {peer.describe()}", flush=True)
        sides["llama-server"].details.update(
            binary=str(peer.path), origin=peer.origin, build=peer.build
        )
        src = Path(__file__).resolve().parents[2]
        starts: dict[str, Callable[[Path], Any]] = {
            "llama-server": lambda w: llama_servers(peer.path, chat, embed, _mk(w)),
            "edgedesk": lambda w: edgedesk(chat, embed, w, src),
        }
        measure(sides, starts, work, args.seconds, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ref, ours = sides["llama-server"], sides["edgedesk"]
    for side in (ref, ours):
        for message in side.errors[:5]:
            print(f"{side.name:>12}: error {message}", flush=True)
    print(
        f"\nIDE mix: {chat.name} (chat, autocomplete) + {embed.name} (embeddings), "
        f"{args.seconds:.0f} s x {args.rounds} round(s) a server, {os.cpu_count()} CPUs; "
        f"latencies in seconds, lower is better (ratio < 1: EdgeDesk faster)"
    )
    print(f"llama-server: {peer.describe()}\n")
    print(table(ref, ours))
    if args.json:
        args.json.write_text(
            json.dumps({k: {**asdict(v), **v.summary()} for k, v in sides.items()}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
