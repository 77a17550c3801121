"""Attachments through the conversation core: what reaches the engine, what is saved."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest
from desktop.chat import ChatSaver, Conversation
from desktop.chat import _attachments as attachments
from desktop.chat._session import CannotSee, ChatCore
from desktop.engine._types import Image
from desktop.store._chats import ChatStore
from tests.chat.scripted import Scripted
from tests.fixtures.pictures import bomb_png, png
from tests.retrieval.conftest import write_docx, write_pdf


def _core(
    streamer: Scripted,
    saver: ChatSaver | None = None,
    *,
    sees: bool = True,
    context: int | None = None,
) -> ChatCore:
    return ChatCore(streamer, saver, sees=lambda _model: sees, context_of=lambda _model: context)


def _saver() -> ChatSaver:
    return ChatSaver(ChatStore(Paths.from_env().database))


def test_a_picture_reaches_the_engine_and_comes_back_after_a_restart(tmp_path: Path) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(png(12, 7))
    streamer = Scripted("A red square.", "Still red.")
    saver = _saver()
    core = _core(streamer, saver)
    chat = Conversation(model="vision-model")
    core.run(
        core.ask(chat, "What is in this picture?", attachments=[attachments.from_path(picture)])
    )
    [question] = [m for m in streamer.prompts[0] if m.role == "user"]
    digest = hashlib.sha256(picture.read_bytes()).hexdigest()
    assert question.images == (Image(picture.read_bytes(), "image/png", digest),)
    assert question.content == "What is in this picture?"
    assert chat.title == "What is in this picture?"
    saver.store.close()

    again = _saver()
    [stored] = again.load_all()
    again.load_turns(stored)
    [kept] = stored.turns[0].attachments
    assert (kept.kind, kept.name, kept.mime, kept.data) == (
        "image",
        "chart.png",
        "image/png",
        picture.read_bytes(),
    )
    # The next question's history still shows the model the picture.
    core = _core(streamer, again)
    core.run(core.ask(stored, "And now?"))
    first, second = [m for m in streamer.prompts[1] if m.role == "user"]
    assert first.images[0].sha256 == digest and second.images == ()


def test_a_picture_for_a_model_that_cannot_see_is_refused_before_anything_changes(
    tmp_path: Path,
) -> None:
    streamer = Scripted("never")
    core = _core(streamer, sees=False)
    chat = Conversation(model="text-only")
    with pytest.raises(CannotSee) as refused:
        core.ask(chat, "look", attachments=[attachments.from_bytes("pasted.png", png())])
    assert "text-only cannot see pictures" in refused.value.message
    assert chat.turns == [] and streamer.prompts == []


def test_a_chat_with_pictures_refuses_to_go_on_with_a_model_that_cannot_see(tmp_path: Path) -> None:
    streamer = Scripted("ok")
    chat = Conversation(model="vision-model")
    core = _core(streamer)
    core.run(core.ask(chat, "look", attachments=[attachments.from_bytes("a.png", png())]))
    chat.model = "text-only"
    with pytest.raises(CannotSee):
        _core(streamer, sees=False).ask(chat, "and this?")
    assert len(chat.turns) == 2  # nothing added, nothing silently dropped


def test_a_short_document_is_quoted_under_its_name_before_the_question(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Budget\n\nThe kangaroo fund is 42 dollars.\n", encoding="utf-8")
    streamer = Scripted("42.")
    core = _core(streamer, context=4096)
    chat = Conversation(model="m")
    turn = core.run(
        core.ask(chat, "How big is the fund?", attachments=[attachments.from_path(notes)])
    )
    question = streamer.prompts[0][-1]
    assert question.content == (
        "Attached file notes.md:\n```\n# Budget\n\nThe kangaroo "
        "fund is 42 dollars.\n```\n\nHow big is the fund?"
    )
    assert question.images == () and turn.sources == []
    assert chat.turns[0].content == "How big is the fund?"  # the chat shows the words alone


def _long_report(path: Path) -> Path:
    paragraphs = [f"Paragraph {n} is about ordinary office matters number {n}." for n in range(60)]
    paragraphs[41] = "The kangaroo fund for the zoo is exactly 42 dollars this year."
    path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path


def test_a_long_document_goes_by_its_passages_and_the_answer_cites_them(tmp_path: Path) -> None:
    report = _long_report(tmp_path / "report.txt")
    streamer = Scripted("The fund is 42 dollars [1].")
    saver = _saver()
    core = _core(streamer, saver, context=512)  # 384 characters go inline, not 3.9k
    chat = Conversation(model="m")
    turn = core.run(
        core.ask(chat, "How big is the kangaroo fund?", attachments=[attachments.from_path(report)])
    )
    system, question = streamer.prompts[0]
    assert system.role == "system"
    assert "[1] report.txt, line 83\nThe kangaroo fund" in system.content
    assert "kangaroo" not in question.content.split("]")[-1].replace(
        "How big is the kangaroo fund?", ""
    )  # the file is not pasted whole
    assert "[Attached file report.txt: long" in question.content
    [cited] = turn.citations
    assert (cited.path, cited.line_start, cited.line_end) == ("report.txt", 83, 83)
    saver.store.close()
    again = _saver()
    [stored] = again.load_all()
    again.load_turns(stored)
    assert [c.location for c in stored.turns[1].citations] == ["report.txt line 83"]


def test_pdf_and_docx_attachments_are_read_by_the_documents_extractors(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "memo.pdf", ["Front page", "The walrus code is 7731."])
    word = write_docx(tmp_path / "plan.docx", ["Plan", "Ship the otter release."])
    pdf_item, word_item = attachments.from_path(pdf), attachments.from_path(word)
    assert pdf_item.kind == word_item.kind == "file"
    assert "The walrus code is 7731." in pdf_item.text.split("\f")[1]  # page 2 stays page 2
    assert "Ship the otter release." in word_item.text
    streamer = Scripted("ok")
    core = _core(streamer, context=20)  # both long (15 characters): passages are sources
    chat = Conversation(model="m")
    core.run(core.ask(chat, "What is the walrus code?", attachments=[pdf_item, word_item]))
    system = streamer.prompts[0][0].content
    assert "[1] memo.pdf, page 2, line 1\nThe walrus code is 7731." in system


@pytest.mark.parametrize(
    "data, why",
    [
        (bomb_png(50_000, 50_000), "decompression bomb"),
        (png()[:20], "truncated PNG"),
        (b"PK\x03\x04" + b"\x00" * 100, "a ZIP archive, not an image"),
        (png(0, 1), "damaged"),
    ],
)
def test_hostile_pictures_are_refused_from_their_header(data: bytes, why: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        attachments.from_bytes("x.png", data)
    assert why in refused.value.message


def test_a_zip_named_png_is_neither_a_picture_nor_a_document(tmp_path: Path) -> None:
    fake = tmp_path / "photo.png"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", "hello")
    fake.write_bytes(buffer.getvalue())
    with pytest.raises(InvalidRequest) as refused:
        attachments.from_path(fake)
    assert "photo.png" in refused.value.message


def test_a_model_sees_pictures_exactly_when_its_plan_has_a_projector(tmp_path: Path) -> None:
    from desktop.base.errors import ModelNotFound
    from desktop.chat import model_context, model_sees
    from desktop.engine._types import LocalPlan, ModelSpec, RemotePlan

    specs = {
        "kimi-vl": ModelSpec(
            tmp_path / "m.gguf",
            "kimi-vl",
            context_length=8192,
            plan=LocalPlan(projector=tmp_path / "mmproj.gguf"),
        ),
        "glm-text": ModelSpec(tmp_path / "t.gguf", "glm-text", context_length=4096),
        "org/remote": ModelSpec(
            None, "org/remote", plan=RemotePlan("org", "http://127.0.0.1:9/v1", "m")
        ),
    }

    def resolve(ref: str, **_: object) -> ModelSpec:
        if ref not in specs:
            raise ModelNotFound(f"no model {ref}")
        return specs[ref]

    resolver: Any = resolve
    assert model_sees(resolver, "kimi-vl") and not model_sees(resolver, "glm-text")
    assert model_sees(resolver, "org/remote")  # its server decides
    assert model_sees(resolver, "missing")  # left to fail with its own message
    assert (model_context(resolver, "kimi-vl"), model_context(resolver, "missing")) == (8192, None)


def test_a_picture_sent_without_words_titles_the_chat_by_its_name() -> None:
    streamer = Scripted("A square.")
    chat = Conversation(model="vision-model")
    core = _core(streamer)
    core.run(core.ask(chat, "  ", attachments=[attachments.from_bytes("whiteboard.png", png())]))
    assert chat.title == "whiteboard.png"
    assert streamer.prompts[0][-1].content == "" and len(streamer.prompts[0][-1].images) == 1
    with pytest.raises(InvalidRequest, match="empty"):
        core.ask(chat, "   ")


def test_the_chats_own_context_length_decides_what_is_quoted_whole(tmp_path: Path) -> None:
    report = _long_report(tmp_path / "report.txt")  # ~3.8k characters
    streamer = Scripted("42.", "42.")
    core = _core(streamer, context=32768)  # the model's own context: room to quote it all
    roomy = Conversation(model="m")
    core.run(
        core.ask(
            roomy, "How big is the kangaroo fund?", attachments=[attachments.from_path(report)]
        )
    )
    assert "Paragraph 59" in streamer.prompts[0][-1].content  # quoted whole
    tight = Conversation(model="m")
    tight.context_length = 2048  # the chat's Context setting: the model loads with 2048
    core.run(
        core.ask(
            tight, "How big is the kangaroo fund?", attachments=[attachments.from_path(report)]
        )
    )
    question = streamer.prompts[1][-1].content
    assert "Paragraph 59" not in question  # too long for 2048 tokens: cited by passages
    assert "exactly 42 dollars" in streamer.prompts[1][0].content
