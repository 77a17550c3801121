"""``edgedesk chat`` driven through standard input, with the tiny chat and embedding models."""

from __future__ import annotations

import io
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from desktop.base.config import Paths
from desktop.cli import main
from desktop.cli.terminal_input import CtrlC, prompted
from desktop.store._atrest import NEW_KEY_NOTE, AtRest
from desktop.store._chats import ChatStore
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.tiny_gguf import TINY_TEMPLATE, write_tiny_llama
from tests.remote.conftest import MemoryKeyring, fake, memory_keyring  # noqa: F401
from tests.remote.fake_openai import FAILURE, Fake

if TYPE_CHECKING:
    from desktop.root.context import AppContext


def chat(monkeypatch: pytest.MonkeyPatch, script: str, *args: str) -> int:
    """Run ``edgedesk chat ARGS`` reading ``script`` from a (non-terminal) stdin."""
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    return main(["chat", *args, "--max-tokens", "8"])


def saved_store() -> ChatStore:
    """The saved conversations as the app opens them (its memory keyring encrypts them)."""
    path = Paths.from_env().database
    return ChatStore(path, key=AtRest(path).key())


def stored() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every saved conversation (oldest first): its title and its messages."""
    store = saved_store()
    try:
        return [
            (c.title, [(m.role, m.content) for m in store.get_messages(c.id)])
            for c in reversed(store.list_conversations())
        ]
    finally:
        store.close()


@pytest.fixture
def handbook(tmp_path: Path, tiny_embed: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text(
        "# Leave\n\nStaff get 25 days of paid leave a year.\n", encoding="utf-8"
    )
    assert (
        main(["docs", "add", str(docs), "--collection", "hb", "--embedding-model", str(tiny_embed)])
        == 0
    )
    capsys.readouterr()
    return docs / "leave.md"


def test_a_grounded_answer_cites_its_file_and_the_chat_is_listed(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tiny_chat: Path,
    handbook: Path,
) -> None:
    code = chat(
        monkeypatch,
        "How many days of leave?\n",
        str(tiny_chat),
        "--collection",
        "hb",
        "--system",
        "Be brief.",
    )
    assert code == 0
    out = capsys.readouterr().out
    assert f"[1] {handbook} lines 1-3" in out.splitlines()
    [(title, messages)] = stored()
    assert title == "How many days of leave?"
    assert [role for role, _ in messages] == ["user", "assistant"]
    store = saved_store()
    [conv] = store.list_conversations()
    assert conv.collection == "hb"
    assert [s.path for s in store.get_messages(conv.id)[1].sources] == [str(handbook)]
    store.close()

    assert main(["chats", "list"]) == 0
    assert "How many days of leave?" in capsys.readouterr().out


def test_new_regenerate_and_model_commands(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tiny_chat: Path,
) -> None:
    other = write_tiny_llama(tmp_path / "other-chat.gguf", seed=11)
    script = f"first\n/regenerate\n/new\nsecond\n/model {other}\nthird\n/quit\nnever sent\n"
    assert chat(monkeypatch, script, str(tiny_chat)) == 0
    err = capsys.readouterr().err
    assert "(new chat)" in err and f"(model: {other})" in err
    [(first, one), (second, two)] = stored()
    assert first == "first" and [r for r, _ in one] == ["user", "assistant"]  # replaced
    assert second == "second" and [c for r, c in two if r == "user"] == ["second", "third"]
    store = saved_store()
    newest = store.list_conversations()[0]
    models = [m.model for m in store.get_messages(newest.id) if m.role == "assistant"]
    store.close()
    assert models == [str(tiny_chat), str(other)]


def test_an_ephemeral_chat_is_saved_only_by_save(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_chat: Path
) -> None:
    assert chat(monkeypatch, "secret pineapple\n", str(tiny_chat), "--ephemeral") == 0
    assert stored() == []
    assert b"pineapple" not in Paths.from_env().database.read_bytes()

    assert chat(monkeypatch, "kept mango\n/save\n", str(tiny_chat), "--ephemeral") == 0
    assert "(saved as chat 1: kept mango" in capsys.readouterr().err
    [(title, messages)] = stored()
    assert title == "kept mango" and messages[0] == ("user", "kept mango")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown model 'nope'"),
        (["{embed}"], "is not a chat model (it is for embedding)"),
        (["{chat}", "--collection", "nope"], "no collection named 'nope' (collections: none yet"),
        ([], "no chat model is installed; name one as MODEL"),
    ],
)
def test_a_model_or_collection_that_cannot_be_used_exits_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tiny_chat: Path,
    tiny_embed: Path,
    args: list[str],
    message: str,
) -> None:
    given = [a.format(embed=tiny_embed, chat=tiny_chat) for a in args]
    assert chat(monkeypatch, "hello\n", *given) == 2
    err = capsys.readouterr().err
    # The first command to open a new install's database also says, once, how to back
    # up the key it just made; the refusal itself is one line.
    said = [line for line in err.strip().splitlines() if NEW_KEY_NOTE not in line]
    assert message in err and len(said) == 1
    assert stored() == []


def test_model_defaults_to_the_installed_chat_model(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tiny_chat: Path,
    tiny_embed: Path,
) -> None:
    assert main(["models", "import", str(tiny_embed)]) == 0
    assert main(["models", "import", str(tiny_chat)]) == 0
    capsys.readouterr()
    assert chat(monkeypatch, "hello\n") == 0
    [(_title, messages)] = stored()
    assert messages[0] == ("user", "hello")
    assert capsys.readouterr().out == messages[1][1] + "\n"  # the answer, as it was saved


def test_bad_lines_are_said_and_the_chat_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_chat: Path
) -> None:
    script = "/bogus\n/model nope\n/collection nope\n/regenerate\n//slash\n"
    assert chat(monkeypatch, script, str(tiny_chat)) == 0
    err = capsys.readouterr().err
    assert "unknown command /bogus" in err and "unknown model 'nope'" in err
    assert "no collection named 'nope'" in err and "no question to answer again" in err
    [(_title, messages)] = stored()
    assert messages[0] == ("user", "/slash")


class CtrlCOnFirstToken(io.StringIO):
    """A terminal whose user presses Ctrl-C as soon as the answer starts to appear."""

    pressed = False

    def write(self, text: str) -> int:
        if text.strip() and not self.pressed:
            self.pressed = True
            signal.raise_signal(signal.SIGINT)
        return super().write(text)


def test_ctrl_c_stops_the_answer_not_the_chat(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_chat: Path
) -> None:
    terminal = CtrlCOnFirstToken()
    monkeypatch.setattr("sys.stdin", io.StringIO("tell me a long story\nand then?\n"))
    monkeypatch.setattr("sys.stdout", terminal)
    assert main(["chat", str(tiny_chat), "--max-tokens", "1900"]) == 0
    assert "(stopped)" in capsys.readouterr().err
    [(_title, messages)] = stored()
    assert [r for r, _ in messages] == ["user", "assistant", "user", "assistant"]
    store = saved_store()
    [conv] = store.list_conversations()
    stopped = store.get_messages(conv.id)[1]
    store.close()
    assert stopped.content and stopped.completion_tokens is not None
    assert stopped.completion_tokens < 1900
    assert stopped.finish_reason == "cancelled"  # reopened or exported, it says "stopped"


def test_a_second_ctrl_c_at_the_prompt_quits(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tiny_chat: Path,
    context: AppContext,
) -> None:
    from desktop.chat import Conversation
    from desktop.cli.chat import TerminalChat

    terminal = TerminalChat(context, Conversation(model=str(tiny_chat), max_tokens=4))
    terminal.loop(iter([None, "hello", None, None, "never sent"]))
    context.close()
    assert capsys.readouterr().err.count("Ctrl-C again or /quit to leave") == 2
    assert [t.content for t in terminal.chat.turns if t.role == "user"] == ["hello"]


def test_a_remote_model_chats_too(
    fake: Fake,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-remote\n"))
    assert main(["remotes", "add", "gpu", fake.url, "--api-key-stdin"]) == 0
    capsys.readouterr()
    assert chat(monkeypatch, "hello from the terminal\n", "gpu/echo") == 0
    assert capsys.readouterr().out.strip() == "hello from the terminal"
    [(_title, messages)] = stored()
    assert messages[1][1].strip() == "hello from the terminal"


def test_a_ctrl_c_between_an_answer_and_the_prompt_is_a_ctrl_c_at_the_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctrl_c, cancel = CtrlC(), threading.Event()
    ctrl_c.cancel = cancel
    ctrl_c(signal.SIGINT, None)  # while an answer streams: it stops the answer
    assert cancel.is_set() and not ctrl_c.pending
    ctrl_c.cancel = None
    ctrl_c(signal.SIGINT, None)  # after the answer, before the prompt: kept, never fatal
    typed = iter(["hello"])
    monkeypatch.setattr("builtins.input", lambda _prompt: next(typed))
    lines = prompted(ctrl_c)
    assert next(lines) is None  # the kept Ctrl-C counts as one at the prompt
    assert next(lines) == "hello"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_at_a_terminal_ctrl_c_stops_the_answer_and_twice_at_the_prompt_quits(
    tiny_chat: Path, edgedesk_home: Path
) -> None:
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: edgedesk chat at a real (pseudo) terminal
        try:
            os.execv(
                sys.executable,
                [sys.executable, "-m", "desktop", "chat", str(tiny_chat), "--max-tokens", "1900"],
            )
        finally:
            os._exit(127)  # never run the rest of the test suite in the child
    seen = bytearray()

    def until(text: bytes) -> bytes:
        """Read the terminal until ``text`` appears (the deadline only guards a hang)."""
        deadline = time.monotonic() + 60
        while text not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            if select.select([fd], [], [], 1)[0]:
                seen.extend(os.read(fd, 4096))
        return bytes(seen)

    until(b"> ")
    os.write(fd, b"tell me a long story\r")
    before = len(until(b"tell me a long story\r\n"))
    deadline = time.monotonic() + 60
    while len(seen) < before + 40:  # some of the answer is on the screen
        assert time.monotonic() < deadline, seen.decode(errors="replace")
        if select.select([fd], [], [], 1)[0]:
            seen.extend(os.read(fd, 4096))
    os.write(fd, b"\x03")
    until(b"(stopped)\r\n> ")
    os.write(fd, b"\x03")
    until(b"Ctrl-C again or /quit to leave")
    os.write(fd, b"\x03")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    store = saved_store()
    [conv] = store.list_conversations()
    [question, answer] = store.get_messages(conv.id)
    store.close()
    assert question.content == "tell me a long story" and answer.content
    assert answer.completion_tokens is not None and answer.completion_tokens < 1900


def test_an_answer_that_breaks_off_is_shown_saved_and_exported_as_such(
    fake: Fake,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-remote\n"))
    assert main(["remotes", "add", "gpu", fake.url, "--api-key-stdin"]) == 0
    capsys.readouterr()
    assert chat(monkeypatch, "hi\n/model gpu/echo\nstill there?\n", "gpu/fails") == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[:2] == ["hi again ", "still there? "]
    assert "(broken off)" in err and FAILURE in err
    [(_title, messages)] = stored()
    assert messages[:2] == [("user", "hi"), ("assistant", "hi again ")]
    assert main(["chats", "export", "-o", str(tmp_path / "out.md")]) == 0
    assert f"*(broken off: remote 'gpu' failed mid-answer: {FAILURE})*" in (
        tmp_path / "out.md"
    ).read_text(encoding="utf-8")


# Like GLM's, this template writes more of the prompt when thinking is switched off.
THINKING_TEMPLATE = TINY_TEMPLATE + (
    "{% if enable_thinking is defined and not enable_thinking %}"
    "<think></think>the cat is the dog of the world{% endif %}"
)


def test_no_think_and_the_think_command_reach_the_template_and_are_kept(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    thinker = write_tiny_llama(tmp_path / "thinker.gguf", chat_template=THINKING_TEMPLATE)
    script = "hello\n/new\n/think on\nhello!\n/think off\n/think\n/think maybe\n/help\n"
    assert chat(monkeypatch, script, str(thinker), "--no-think") == 0
    err = capsys.readouterr().err
    assert "(thinking on)" in err and err.count("(thinking off (answers at once))") == 2
    assert "/think takes on or off, not 'maybe'" in err
    assert "/think on|off" in err  # /help lists it
    store = saved_store()
    quiet, thinking = reversed(store.list_conversations())
    # The second chat was switched off after its answer: kept for its next answers.
    assert (quiet.think, thinking.think) == (False, False)
    asked = [store.get_messages(c.id)[1].prompt_tokens or 0 for c in (quiet, thinking)]
    assert asked[0] > asked[1] + 5  # without thinking, the template wrote more

    exported = store.export_json([quiet.id])
    store.close()
    assert main(["chats", "export", str(quiet.id), "-o", str(tmp_path / "quiet.md")]) == 0
    assert "Thinking: off" in (tmp_path / "quiet.md").read_text(encoding="utf-8")
    (tmp_path / "quiet.json").write_text(exported, encoding="utf-8")
    assert main(["chats", "import", str(tmp_path / "quiet.json")]) == 0
    store = saved_store()
    assert [c.think for c in store.list_conversations() if c.title == quiet.title] == [
        False,
        False,
    ]  # the original and its imported copy
    store.close()


def test_the_think_command_says_when_the_model_does_not_think(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_chat: Path
) -> None:
    assert chat(monkeypatch, "/think off\n", str(tiny_chat)) == 0
    assert "does not think first anyway" in capsys.readouterr().err


@pytest.fixture
def bge_hub(hub: FakeHub, tiny_embed: Path) -> FakeHub:
    """The shared fake Hub (tests/conftest.py) serving the tiny embedding model as the
    catalog's BGE small EN."""
    hub.add_repo(
        "CompendiumLabs/bge-small-en-v1.5-gguf",
        {"bge-small-en-v1.5-q8_0.gguf": tiny_embed.read_bytes()},
        downloads=10,
    )
    return hub


def test_a_collection_whose_embedding_model_is_missing_names_the_pull_to_run(
    bge_hub: FakeHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tiny_chat: Path,
    tmp_path: Path,
) -> None:
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("Staff get 25 days of paid leave a year.\n")
    assert main(["models", "pull", "bge-small-en-v1.5"]) == 0
    assert (
        main(
            [
                "docs",
                "add",
                str(docs),
                "--collection",
                "hb",
                "--embedding-model",
                "bge-small-en-v1.5",
            ]
        )
        == 0
    )
    assert main(["models", "rm", "bge-small-en-v1.5"]) == 0
    capsys.readouterr()
    pull = "run 'edgedesk models pull bge-small-en-v1.5' first"
    assert chat(monkeypatch, "hello\n", str(tiny_chat), "--collection", "hb") == 2
    assert pull in capsys.readouterr().err
    assert chat(monkeypatch, "/collection hb\nhello\n", str(tiny_chat)) == 0
    err = capsys.readouterr().err
    assert "the collection 'hb' needs the embedding model bge-small-en-v1.5" in err
    assert pull in err
