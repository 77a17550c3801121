"""Pictures: ``edgedesk serve`` against llama-server ``--mmproj``, same model and images.

Run: .venv/bin/python -m tests.benchmarks.bench_vision [--rounds 8] [--llama-server PATH]
     [--image-size 224] [--photo 1024] [--json FILE]

The model is the suite's tiny random-weight chat model made wider (``n_embd`` 256, 4
layers) with a tiny random-weight CLIP projector (``--image-size`` pixels in 14 x 14
patches: 256 image tokens at 224; 4 ViT blocks of width 256), both written here with
``gguf``: there is no real projector on this machine. Figures are about the plumbing
(decode, resize, encode, embeddings into the KV cache, scheduling), not a real ViT.

Both servers are separate processes on loopback HTTP and get the same requests: a
streamed ``/v1/chat/completions`` whose user message is the question and an OpenAI
``image_url`` part with the picture as a data URL. EdgeDesk is ``edgedesk serve`` over
its own ``EDGEDESK_HOME`` (the model imported with ``models import --mmproj``; 4 slots,
context 8192, as llama-server's ``-np 4 -c 8192``), run from this checkout.

1. Time to first token of a one-picture chat request, a new picture each round (so
   neither side finds it in its prompt cache), the two servers taking turns request by
   request (both run throughout; the one not asked is idle). The pictures are small gradient PNGs
   (a few KiB), or with ``--photo W`` W x 3W/4 PNGs of noise (about 2.3 MiB at 1024,
   the size of a screenshot or a photo: what the servers do per byte then shows). The same text-only request is timed on
   both, so the fixed HTTP and scheduling share is visible.
2. Three long text streams' speed while a picture request is in flight (``--rounds``
   pictures, one after another with pauses), over their speed outside those windows.
   Speed is characters of streamed text per second (EdgeDesk's SSE coalesces tokens
   that come faster than one event per 5 ms, so events are not tokens; characters are
   proportional to tokens on both sides, and only ratios are reported).

llama-server is ``--llama-server PATH``, else the first candidate of
tests/benchmarks/llama_server_peer.py that runs here; its origin is printed.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from PIL import Image as PILImage

from desktop.base.config import Paths
from tests.benchmarks.bench_vs_llama_server import READY_TIMEOUT_S, peer_binary
from tests.benchmarks.llama_server_peer import library_links
from tests.fixtures.children import free_port, running, wait_answering
from tests.fixtures.tiny_gguf import write_tiny_llama, write_tiny_projector

QUESTION = "What is in this picture?"
N_EMBD = 256
TEXT_PROMPTS = ("hello world the cat", "the dog is a model", "edge desk chat")


def picture(index: int, size: int, photo: int = 0) -> bytes:
    """A distinct PNG per index: a gradient in a colour of its own, ``size`` pixels
    square; or with ``photo``, noise ``photo`` x 3/4 of it pixels (does not compress)."""
    if photo:
        shape = (photo, photo * 3 // 4)
        noise = random.Random(index).randbytes(shape[0] * shape[1] * 3)
        out = io.BytesIO()
        PILImage.frombytes("RGB", shape, noise).save(out, "PNG", compress_level=1)
        return out.getvalue()
    color = ((index * 47) % 256, (index * 91) % 256, (index * 13) % 256)
    image = PILImage.new("RGB", (size, size), color)
    for x in range(0, size, 7):
        image.putpixel((x, x), (255 - color[0], 255, 0))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


Arrivals = list[tuple[float, int]]  # (when, characters) of each streamed piece


# ------------------------------------------------------------------ both servers (HTTP)
def server_ttft(url: str, model: str, png: bytes | None) -> float:
    """Seconds to the first answer text of one streamed chat request (the same body to
    both servers; llama-server ignores ``model``, EdgeDesk ``cache_prompt``)."""
    content: Any = QUESTION
    if png is not None:
        content = [
            {"type": "text", "text": QUESTION},
            {"type": "image_url", "image_url": {"url": data_url(png)}},
        ]
    body = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": 4,
        "temperature": 0.0,
        "stream": True,
        "cache_prompt": True,
    }
    started = time.perf_counter()
    ttft = 0.0
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=120) as r:
        if r.status_code != 200:
            r.read()
            raise RuntimeError(f"{url}: HTTP {r.status_code}: {r.text[:300]}")
        for line in r.iter_lines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content") and not ttft:
                ttft = time.perf_counter() - started
    return ttft or time.perf_counter() - started


def server_text_stream(url: str, prompt: str, tokens: int) -> Arrivals:
    """llama-server's own ``/completion`` stream (one event per token)."""
    body = {"prompt": prompt, "n_predict": tokens, "temperature": 0.0, "stream": True}
    times: Arrivals = []
    with httpx.stream("POST", f"{url}/completion", json=body, timeout=300) as r:
        for line in r.iter_lines():
            if line.startswith("data: ") and (text := json.loads(line[6:]).get("content")):
                times.append((time.perf_counter(), len(text)))
    return times


def openai_text_stream(url: str, model: str, prompt: str, tokens: int) -> Arrivals:
    """A streamed ``/v1/completions`` request (EdgeDesk)."""
    body = {
        "model": model,
        "prompt": prompt,
        "max_tokens": tokens,
        "temperature": 0.0,
        "stream": True,
    }
    times: Arrivals = []
    with httpx.stream("POST", f"{url}/v1/completions", json=body, timeout=300) as r:
        for line in r.iter_lines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if text := choices[0].get("text"):
                times.append((time.perf_counter(), len(text)))
    return times


# ------------------------------------------------------------------ scenarios
Pictures = Callable[[int], bytes]  # index -> a PNG of its own


Ask = Callable[[bytes | None], float]  # a picture (None: text only) -> seconds to TTFT


def ttft_rounds(
    asks: dict[str, tuple[Ask, int]], rounds: int, make: Pictures
) -> dict[str, dict[str, float]]:
    """Median TTFT of a picture request and a text-only one, per server (name -> its
    ``ask`` and the offset of its pictures' indexes). The servers take turns request by
    request, in ABBA order, so load that comes and goes on a shared machine weighs on
    every side alike (one side's rounds after the other's differed by up to 1.7x)."""
    for ask, offset in asks.values():
        ask(make(offset + 999))  # warm-up: first encode allocates buffers
        ask(None)
    image: dict[str, list[float]] = {name: [] for name in asks}
    text: dict[str, list[float]] = {name: [] for name in asks}
    for index in range(rounds):
        order = list(asks) if index % 2 == 0 else list(reversed(asks))
        for name in order:
            ask, offset = asks[name]
            image[name].append(ask(make(offset + index)))
        for name in order:
            text[name].append(asks[name][0](None))
    return {
        name: {
            "image_ttft_s": statistics.median(image[name]),
            "text_ttft_s": statistics.median(text[name]),
        }
        for name in asks
    }


def text_speed(
    stream: Callable[[str, int], Arrivals],
    ask: Callable[[bytes | None], float],
    tokens: int,
    make: Pictures,
    pictures: int,
) -> tuple[float, float]:
    """Three text streams' aggregate characters/s while a picture request is in flight
    (sent one after another, ``pictures`` of them, once the streams run) and outside
    those windows: (beside, alone)."""
    arrivals: list[Arrivals] = []
    windows: list[tuple[float, float]] = []
    threads = [
        threading.Thread(target=lambda p=p: arrivals.append(stream(p, tokens)))
        for p in TEXT_PROMPTS
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the streams are generating by then, even on a loaded machine
    for index in range(pictures):
        started = time.perf_counter()
        ask(make(5000 + index))
        windows.append((started, time.perf_counter()))
        time.sleep(0.15)  # text alone between pictures
    for thread in threads:
        thread.join()
    stamps = sorted(piece for times in arrivals for piece in times)
    begin, end = stamps[0][0], stamps[-1][0]
    inside = sum(n for t, n in stamps if any(a <= t <= b for a, b in windows))
    total = sum(n for _t, n in stamps)
    inside_s = sum(min(b, end) - max(a, begin) for a, b in windows if b > begin and a < end)
    outside_s = (end - begin) - inside_s
    beside = inside / inside_s if inside_s > 0 else 0.0
    alone = (total - inside) / outside_s if outside_s > 0 else 0.0
    return beside, alone


def measure(
    name: str,
    stream: Callable[[str, int], Arrivals],
    ask: Ask,
    args: argparse.Namespace,
    make: Pictures,
    figures: dict[str, float],
) -> dict[str, float]:
    """``figures`` (this server's TTFTs) with its text speed beside pictures and alone."""
    beside, alone = text_speed(stream, ask, args.tokens, make, args.rounds)
    figures |= {
        "text_chars_s_alone": alone,
        "text_chars_s_beside_images": beside,
        "text_speed_ratio": beside / alone if alone else 0.0,
    }
    print(f"{name}: " + ", ".join(f"{k} {v:.4f}" for k, v in figures.items()), flush=True)
    return figures


def models(work: Path, image_size: int) -> tuple[Path, Path]:
    lm = write_tiny_llama(
        work / "tiny-vision-lm.gguf", n_embd=N_EMBD, n_layer=4, n_ctx=8192, name="tiny-vision-lm"
    )
    projector = write_tiny_projector(
        work / "tiny-vision-mmproj.gguf",
        n_embd_lm=N_EMBD,
        image_size=image_size,
        width=256,
        n_block=4,
    )
    return lm, projector


@contextmanager
def llama_server(
    binary: Path, lm: Path, projector: Path, work: Path, extra: list[str]
) -> Iterator[str]:
    """llama-server with the projector and 4 slots (as EdgeDesk's default); yields its URL."""
    port = free_port()
    links = work / "libs"
    links.mkdir(exist_ok=True)
    env = {**os.environ, "LD_LIBRARY_PATH": library_links(binary, links)}
    # On the CPU only, as EdgeDesk's engine here (the generic build would otherwise put
    # layers, large matmuls and the projector on a Vulkan software device).
    cmd = [
        str(binary),
        "-m",
        str(lm),
        "--mmproj",
        str(projector),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-np",
        "4",
        "-c",
        "8192",
        "-ngl",
        "0",
        "--device",
        "none",
        "--no-mmproj-offload",
        *extra,
    ]
    with running(cmd, env=env, log=work / "llama-server.log", grace_s=20) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_answering(f"{url}/v1/models", proc, timeout=READY_TIMEOUT_S)
        yield url


@contextmanager
def edgedesk_serve(lm: Path, projector: Path, work: Path) -> Iterator[tuple[str, str]]:
    """``edgedesk serve`` from this checkout over its own home, the model imported with
    its projector; yields (URL, model id)."""
    src = Path(__file__).resolve().parents[2]
    home = work / "home"
    env = {**os.environ, "EDGEDESK_HOME": str(home), "EDGEDESK_OFFLINE": "1"}
    paths = Paths.from_env({"EDGEDESK_HOME": str(home)})
    paths.ensure()
    paths.settings_file.write_text("[engine]\ncontext_length = 8192\nparallel = 4\n")
    subprocess.run(
        [sys.executable, "-m", "desktop", "models", "import", str(lm), "--mmproj", str(projector)],
        env=env,
        cwd=src,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    port = free_port()
    cmd = [sys.executable, "-m", "desktop", "serve", "--port", str(port), "--no-auth"]
    with running(cmd, env=env, log=work / "edgedesk.log", cwd=src) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_answering(f"{url}/v1/models", proc, timeout=READY_TIMEOUT_S)
        listed = httpx.get(f"{url}/v1/models", timeout=10).json()["data"]
        model = next(m["id"] for m in listed if "vision" in (m.get("capabilities") or []))
        yield url, model


def main(argv: list[str] | None = None) -> int:
    """Run both sides and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument(
        "--photo",
        type=int,
        default=0,
        help="send W x 3W/4 noise PNGs (photo-sized) instead of gradients",
    )
    parser.add_argument("--llama-server", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--server-args", default="", help="more llama-server flags")
    parser.add_argument("--only-server", action="store_true", help="skip EdgeDesk's side")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="edgedesk-bench-vision-"))
    results: dict[str, Any] = {}

    def make(index: int) -> bytes:
        return picture(index, args.image_size, args.photo)

    try:
        lm, projector = models(work, args.image_size)
        peer = peer_binary(args.llama_server, work, lm)
        results["llama_server_binary"] = peer.describe()
        with ExitStack() as running_servers:
            # Both servers run at once (the one not asked sits idle): TTFT rounds take
            # turns between them; text speed is measured on one at a time.
            sides: dict[str, tuple[Ask, Callable[[str, int], Arrivals], int]] = {}
            if not args.only_server:
                url, model = running_servers.enter_context(edgedesk_serve(lm, projector, work))
                sides["edgedesk"] = (
                    lambda png, u=url, m=model: server_ttft(u, m, png),
                    lambda p, n, u=url, m=model: openai_text_stream(u, m, p, n),
                    0,
                )
            peer_url = running_servers.enter_context(
                llama_server(peer.path, lm, projector, work, args.server_args.split())
            )
            sides["llama-server"] = (
                lambda png, u=peer_url: server_ttft(u, "", png),
                lambda p, n, u=peer_url: server_text_stream(u, p, n),
                100,
            )
            ttfts = ttft_rounds(
                {name: (ask, offset) for name, (ask, _, offset) in sides.items()}, args.rounds, make
            )
            for name, (ask, stream, _) in sides.items():
                results[name] = measure(name, stream, ask, args, make, ttfts[name])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.only_server:
        return 0
    ours, theirs = results["edgedesk"], results["llama-server"]
    sent = f"{args.photo} px noise PNGs" if args.photo else "small gradient PNGs"
    print(
        f"\n{os.cpu_count()} CPUs (shared: compare ratios), image {args.image_size} px "
        f"({sent}), "
        f"median of {args.rounds} rounds; llama-server: {results['llama_server_binary']}"
    )
    print(
        f"1-image TTFT over HTTP: EdgeDesk {ours['image_ttft_s'] * 1000:.1f} ms vs "
        f"llama-server {theirs['image_ttft_s'] * 1000:.1f} ms: "
        f"{ours['image_ttft_s'] / theirs['image_ttft_s']:.2f}x (target <= 1.1x)"
    )
    print(
        f"text-only TTFT: EdgeDesk {ours['text_ttft_s'] * 1000:.1f} ms vs llama-server "
        f"{theirs['text_ttft_s'] * 1000:.1f} ms"
    )
    print(
        f"text speed beside picture encodes / alone: EdgeDesk "
        f"{ours['text_speed_ratio']:.2f}x, llama-server {theirs['text_speed_ratio']:.2f}x "
        "(target >= 0.8x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
