"""What a guessed token costs: ``llama_decode`` of R rows on one sequence, raw llama.cpp.

Run: .venv/bin/python -m tests.benchmarks.bench_decode_rows [--model GGUF] [--reps 40]
     [--context 2000] [--gpu-layers N]

Prompt lookup decodes the next token plus R-1 guesses in one ``llama_decode``, each row
with its logits (verification needs the full row); it pays when that costs less than
the guesses taken would cost one by one. Printed, after a warm prompt of ``--context``
tokens, interleaved so the machine's load meets every shape alike (min / p25 / median
ms): a one-token decode with and without logits (the output head's share), and R rows
with logits on the last row only and on every row (what each guessed row adds, and how
much of it is the head), with the ceiling ``R / (cost of R rows / cost of one)``: the
speed-up if every guess were taken. Then, once, how far the logits of R tokens decoded
as one batch are from the same tokens decoded one by one (llama.cpp uses other kernels
for other batch sizes, so a greedy near-tie can go the other way). Default model: Gemma
3 270M Q4_K_M from its PyPI package. Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import llama_cpp
import numpy as np

from desktop.engine._native import LoadOptions, load_context
from tests.benchmarks.bench_vs_llama_server import gemma_file

SOURCE = "\n".join(f"def f{i}(x):\n    return x * {i} + {i * 7}\n" for i in range(400))


class Probe:
    """One llama context and a batch, decoding rows on sequence 0."""

    def __init__(self, model: Path, context: int, gpu_layers: int) -> None:
        self.model, self.ctx = load_context(
            model, LoadOptions(context_length=context + 256, parallel=1, gpu_layers=gpu_layers)
        )
        vocab = llama_cpp.llama_model_get_vocab(self.model.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(vocab))
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(512, 0, 1)
        text = SOURCE.encode()
        buffer = (llama_cpp.llama_token * (len(text) + 8))()
        count = llama_cpp.llama_tokenize(vocab, text, len(text), buffer, len(buffer), True, False)
        self.tokens = list(buffer[: min(count, context)])

    def decode(self, tokens: list[int], pos: int, logits: str) -> None:
        """Decode ``tokens`` at ``pos``; logits on "none", the "last" row or "all" rows."""
        batch = self.batch
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = pos + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = int(logits == "all")
        if logits == "last":
            batch.logits[len(tokens) - 1] = 1
        batch.n_tokens = len(tokens)
        if llama_cpp.llama_decode(self.ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    def row(self, index: int) -> np.ndarray:
        """A copy of the logits of batch row ``index`` of the last decode."""
        pointer = llama_cpp.llama_get_logits_ith(self.ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy()

    def prefill(self, end: int) -> None:
        """The cache holds exactly the first ``end`` tokens."""
        llama_cpp.llama_memory_clear(self.memory, True)
        for start in range(0, end, 512):
            self.decode(self.tokens[start : min(end, start + 512)], start, "last")

    def cut(self, end: int) -> None:
        llama_cpp.llama_memory_seq_rm(self.memory, 0, end, -1)


def costs(
    probe: Probe, reps: int, shapes: list[tuple[int, str]]
) -> dict[tuple[int, str], list[float]]:
    """Milliseconds of each (rows, logits) shape decoded after the prompt, interleaved."""
    end = len(probe.tokens) - 64
    probe.prefill(end)
    times: dict[tuple[int, str], list[float]] = {shape: [] for shape in shapes}
    for _ in range(reps):
        for rows, logits in shapes:
            start = time.perf_counter()
            probe.decode(probe.tokens[end : end + rows], end, logits)
            times[(rows, logits)].append((time.perf_counter() - start) * 1000)
            probe.cut(end)
    return times


def batch_gap(probe: Probe, rows: int) -> tuple[float, float, int, int]:
    """``rows`` tokens decoded one by one and as one batch: the largest difference of any
    logit, and of the top token's logit; how many rows differ at all, and in their argmax."""
    end = len(probe.tokens) - 64
    tail = probe.tokens[end : end + rows]
    probe.prefill(end)
    single = []
    for i, token in enumerate(tail):
        probe.decode([token], end + i, "last")
        single.append(probe.row(0))
    probe.cut(end)
    probe.decode(tail, end, "all")
    batched = [probe.row(i) for i in range(rows)]
    gaps = [float(np.abs(a - b).max()) for a, b in zip(single, batched, strict=True)]
    top = [abs(float(a.max() - b[a.argmax()])) for a, b in zip(single, batched, strict=True)]
    flips = sum(1 for a, b in zip(single, batched, strict=True) if a.argmax() != b.argmax())
    return max(gaps), max(top), sum(1 for gap in gaps if gap > 0), flips


def main(argv: list[str] | None = None) -> int:
    """Print the cost of each batch shape, the output head's share and the ceilings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--context", type=int, default=2000)
    parser.add_argument("--gpu-layers", type=int, default=0)
    args = parser.parse_args(argv)
    model = args.model or gemma_file()
    probe = Probe(model, args.context, args.gpu_layers)
    sizes = [2, 3, 5, 9, 17, 33]
    shapes = [(1, "last"), (1, "none")]
    shapes += [(r, mode) for r in sizes for mode in ("last", "all")]
    times = costs(probe, args.reps, shapes)

    def q(shape: tuple[int, str]) -> tuple[float, float, float]:
        values = sorted(times[shape])
        return values[0], values[len(values) // 4], statistics.median(values)

    one = q((1, "last"))
    print(
        f"{model.name}; {len(probe.tokens) - 64}-token context; {args.reps} interleaved "
        "reps; ms min / p25 / median"
    )
    head = q((1, "none"))
    print(f"1 row, logits       {one[0]:7.1f} {one[1]:7.1f} {one[2]:7.1f}")
    print(
        f"1 row, no logits    {head[0]:7.1f} {head[1]:7.1f} {head[2]:7.1f}   output head: "
        + " / ".join(f"{1 - h / o:.0%}" for h, o in zip(head, one, strict=True))
        + " of a one-token decode"
    )
    for rows in sizes:
        last, every = q((rows, "last")), q((rows, "all"))
        ceiling = " / ".join(f"{rows * o / e:.2f}" for o, e in zip(one, every, strict=True))
        print(
            f"{rows:2d} rows, last only {last[0]:7.1f} {last[1]:7.1f} {last[2]:7.1f}   "
            f"all {every[0]:7.1f} {every[1]:7.1f} {every[2]:7.1f}   every guess taken: {ceiling}x"
        )
    for rows in (2, 4, 8, 16, 32):
        gap, top, differing, flips = batch_gap(probe, rows)
        print(
            f"{rows:2d} rows as one batch vs one by one: logits up to {gap:.2f} apart "
            f"(the top token's up to {top:.2f}); {differing} of {rows} rows differ, "
            f"{flips} in their argmax"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
