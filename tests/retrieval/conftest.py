"""A real scheduler over the tiny BERT GGUF, a counting embedder, and a small corpus."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import docx
import pytest
from fpdf import FPDF

from desktop.base.config import Paths
from desktop.engine._loader import load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from desktop.retrieval._indexer import Library, SchedulerEmbedder
from desktop.retrieval._search import Searcher
from desktop.store._db import Database, open_database

MODEL = "tiny-embed"


class CountingEmbedder(SchedulerEmbedder):
    """The real embedder, counting the texts it sends to the model."""

    embedded: list[str]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return super().embed(texts)


@pytest.fixture(scope="module")
def scheduler(tiny_embed: Path) -> Iterator[Scheduler]:
    specs = {
        MODEL: ModelSpec(tiny_embed, MODEL, kind="embedding", context_length=512),
        "other-embed": ModelSpec(tiny_embed, "other-embed", kind="embedding", context_length=512),
    }
    sched = Scheduler(load_engine, specs.__getitem__)
    yield sched
    sched.close()


@pytest.fixture
def database() -> Iterator[Database]:
    db = open_database(Paths.from_env().database)
    yield db
    db.close()


@pytest.fixture
def embedders(scheduler: Scheduler) -> dict[str, CountingEmbedder]:
    return {}


@pytest.fixture
def library(
    database: Database, scheduler: Scheduler, embedders: dict[str, CountingEmbedder]
) -> Library:
    def embedder_for(model: str) -> CountingEmbedder:
        if model not in embedders:
            embedders[model] = CountingEmbedder(scheduler, model)
            embedders[model].embedded = []
        return embedders[model]

    return Library(database, embedder_for, default_model=MODEL, max_tokens=64, overlap_tokens=12)


@pytest.fixture
def searcher(database: Database, scheduler: Scheduler) -> Searcher:
    return Searcher(database, scheduler.embed)


def write_pdf(path: Path, pages: Sequence[str]) -> Path:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        for line in text.split("\n"):
            pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def write_docx(path: Path, paragraphs: Sequence[str]) -> Path:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "animals.txt").write_text(
        "The cat sat on the mat.\n\nA dog chased the cat around the garden.\n\n"
        "Giraffes have long necks.\n",
        encoding="utf-8",
    )
    (root / "notes" / "zh.md").write_text(
        "# 向量检索\n\n向量检索是文档问答的基础。\n\n模型把文档变成向量。\n", encoding="utf-8"
    )
    (root / "code.py").write_text(
        "def quicksort(items):\n    return sorted(items)\n", encoding="utf-8"
    )
    (root / "page.html").write_text(
        "<html><head><style>p {color: red}</style></head><body>\n<h1>Volcano guide</h1>\n"
        "<p>Lava flows from the volcano.</p>\n<script>var hidden = 1;</script></body></html>\n",
        encoding="utf-8",
    )
    write_pdf(
        root / "report.pdf",
        ["First page about penguins.", "Second page mentions walruses.\nAnd seals too."],
    )
    write_docx(root / "memo.docx", ["Quarterly memo.", "Budget for kangaroos approved."])
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n%%EOF\n")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 10)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.txt").write_text("never indexed", encoding="utf-8")
    return root
