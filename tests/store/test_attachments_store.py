"""Attachments in the chat database: encrypted with it, deleted with their conversation,
exported as files beside the Markdown/JSON and imported back."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest
from desktop.cli import main
from desktop.store import _cipher as cipher
from desktop.store._atrest import AtRest
from desktop.store._chat_records import Attachment, ChatMessage
from desktop.store._chats import DAY_S, ChatStore
from desktop.store._db import open_database
from tests.fixtures.pictures import png

pytestmark = pytest.mark.fast

MARK = b"quokka-pixels-7d1e"  # inside the picture's bytes, to find it in a file


def _picture() -> Attachment:
    data = png(4, 4) + MARK  # trailing bytes after IEND: still a PNG to every reader
    return Attachment("image", "photo one.png", "image/png", data, hashlib.sha256(data).hexdigest())


def _notes() -> Attachment:
    data = b"Minutes: the walrus budget is 9.\n"
    return Attachment(
        "file", "notes.md", "text/markdown", data, hashlib.sha256(data).hexdigest(), data.decode()
    )


def _chat(store: ChatStore) -> int:
    conv = store.create_conversation("with pictures", "m")
    store.add_message(
        conv.id, ChatMessage("user", "what is this?", attachments=(_picture(), _notes()))
    )
    store.add_message(conv.id, ChatMessage("assistant", "a square"))
    return conv.id


def _on_disk(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in [path, *cipher.sidecars(path)] if p.exists())


@pytest.fixture
def db_path() -> Path:
    path = Paths.from_env().database
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_attachments_read_back_in_order_with_their_bytes(db_path: Path) -> None:
    store = ChatStore(db_path)
    conv_id = _chat(store)
    store.close()
    question, answer = ChatStore(db_path).get_messages(conv_id)
    assert question.attachments == (_picture(), _notes())
    assert answer.attachments == ()


def test_picture_bytes_are_encrypted_with_the_database(db_path: Path, file_keyring: Path) -> None:
    plain = ChatStore(db_path.with_name("plain.db"))
    _chat(plain)
    plain.close()
    assert MARK in _on_disk(db_path.with_name("plain.db"))  # the check can see them

    key = AtRest(db_path).open_key(required=False, new_default=True)
    assert key is not None
    store = ChatStore(db_path, key=key)
    conv_id = _chat(store)
    assert MARK not in _on_disk(db_path)  # open, WAL and all
    store.close()
    assert MARK not in _on_disk(db_path)
    assert ChatStore(db_path, key=key).get_messages(conv_id)[0].attachments[0] == _picture()


def _rows(path: Path) -> int:
    database = open_database(path)
    try:
        return int(database.query("SELECT count(*) FROM attachments")[0][0])
    finally:
        database.close()


def test_chats_rm_deletes_the_attachments_and_their_bytes(db_path: Path) -> None:
    store = ChatStore(db_path)
    conv_id = _chat(store)
    kept = _chat(store)
    store.close()
    assert main(["chats", "rm", str(conv_id)]) == 0
    assert _rows(db_path) == 2  # only the other chat's
    assert main(["chats", "rm", str(kept)]) == 0
    assert _rows(db_path) == 0
    assert MARK not in _on_disk(db_path)  # zeroed (secure_delete), not just unlinked


def test_retention_deletes_old_chats_with_their_attachments(db_path: Path) -> None:
    store = ChatStore(db_path)
    _chat(store)
    assert store.apply_retention(30, now=time.time() + 31 * DAY_S) == 1
    store.close()
    assert _rows(db_path) == 0
    assert MARK not in _on_disk(db_path)


def test_export_writes_the_attachments_beside_markdown_and_json_and_imports_back(
    db_path: Path, tmp_path: Path
) -> None:
    store = ChatStore(db_path)
    conv_id = _chat(store)
    store.close()
    out = tmp_path / "out"
    out.mkdir()
    assert main(["chats", "export", str(conv_id), "-o", str(out / "chat.md")]) == 0
    folder = out / "chat-attachments"
    names = sorted(p.name for p in folder.iterdir())
    picture = next(n for n in names if n.endswith(".png"))
    assert picture.endswith("-photo_one.png") and (folder / picture).read_bytes() == _picture().data
    markdown = (out / "chat.md").read_text(encoding="utf-8")
    assert f"![photo one.png](<chat-attachments/{picture}>)" in markdown
    assert "[📎 notes.md](<chat-attachments/" in markdown

    assert (
        main(["chats", "export", str(conv_id), "--format", "json", "-o", str(out / "chat.json")])
        == 0
    )
    exported = json.loads((out / "chat.json").read_text(encoding="utf-8"))
    [item, _] = exported["conversations"][0]["messages"][0]["attachments"]
    assert item["file"] == f"chat-attachments/{picture}" and "data" not in item
    assert main(["chats", "import", str(out / "chat.json")]) == 0
    newest = ChatStore(db_path).list_conversations()[0]
    assert newest.id != conv_id
    question = ChatStore(db_path).get_messages(newest.id)[0]
    assert question.attachments == (_picture(), _notes())


def test_json_without_a_file_carries_the_bytes_and_imports_back(
    db_path: Path, tmp_path: Path
) -> None:
    store = ChatStore(db_path)
    conv_id = _chat(store)
    text = store.export_json([conv_id])
    assert not list(tmp_path.glob("*-attachments"))
    [added] = store.import_json(text)
    assert store.get_messages(added.id)[0].attachments == (_picture(), _notes())


def test_an_export_cannot_make_import_read_outside_its_folder(
    db_path: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    export = tmp_path / "in" / "chat.json"
    export.parent.mkdir()
    message = {
        "role": "user",
        "content": "hi",
        "attachments": [{"kind": "file", "name": "s.txt", "file": "../secret.txt"}],
    }
    export.write_text(
        json.dumps({"edgedesk_export": 1, "conversations": [{"title": "t", "messages": [message]}]})
    )
    with pytest.raises(InvalidRequest, match="missing beside the export"):
        from desktop.store._export_files import reader_beside

        ChatStore(db_path).import_json(export.read_text(), reader_beside(export))
    assert ChatStore(db_path).list_conversations() == []


def test_an_encrypted_export_keeps_the_attachments_inside_and_no_plain_copy_beside(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    store = ChatStore(db_path)
    conv_id = _chat(store)
    store.close()
    out = tmp_path / "chat.edgedesk-sealed"
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct horse\n"))
    assert (
        main(
            [
                "chats",
                "export",
                str(conv_id),
                "--format",
                "json",
                "--encrypt",
                "--passphrase-stdin",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert not list(tmp_path.glob("*-attachments"))  # no plain copy beside a sealed file
    assert MARK not in out.read_bytes()
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct horse\n"))
    assert main(["chats", "import", "--passphrase-stdin", str(out)]) == 0
    newest = ChatStore(db_path).list_conversations()[0]
    assert ChatStore(db_path).get_messages(newest.id)[0].attachments == (_picture(), _notes())


def test_markdown_without_a_folder_names_each_attachment(db_path: Path) -> None:
    store = ChatStore(db_path)
    conv_id = _chat(store)
    text = store.export_markdown([conv_id])
    size = len(_picture().data)
    assert f"*(attached: photo one.png, image/png, {size:,} bytes)*" in text
    assert "*(attached: notes.md, text/markdown, 33 bytes)*" in text
