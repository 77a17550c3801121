"""The Server screen's snippets name a chat model that is really here, or say there is none."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context
from desktop.ui.server.view import with_model
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


def test_without_a_chat_model_the_snippet_keeps_the_placeholder_and_says_why(
    qtbot, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("server")
    panel = win.server
    assert 'model="MODEL-ID"' in panel.snippet.toPlainText()
    assert "No chat model is installed yet" in panel.model_hint.text()
    win.close()


def test_the_snippets_name_the_installed_chat_model(
    qtbot, tiny_chat: Path, tiny_embed: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.models.import_file(tiny_embed)  # an embedding model is not what a chat client names
    chat_id = win.models.import_file(tiny_chat)
    win.show_page("server")  # shown after the import: the snippet names it
    panel = win.server
    assert f'model="{chat_id}"' in panel.snippet.toPlainText()
    assert "MODEL-ID" not in panel.snippet.toPlainText()
    assert chat_id in panel.model_hint.text()
    panel.client_picker.setCurrentText("Continue")
    continue_setup = panel.snippet.toPlainText()
    assert f"model: {chat_id}\n" in continue_setup
    assert "model: CODE-MODEL-ID" in continue_setup  # the autocomplete model is another one
    panel.client_picker.setCurrentText("Claude Code")
    assert f"ANTHROPIC_MODEL={chat_id}\n" in panel.snippet.toPlainText()
    win.close()


def test_with_model_replaces_only_the_chat_placeholder() -> None:
    text = 'model="MODEL-ID"\nmodel: CODE-MODEL-ID\n--model MODEL\n'
    assert with_model(text, "glm-4-9b") == 'model="glm-4-9b"\nmodel: CODE-MODEL-ID\n--model MODEL\n'
    assert with_model(text, None) == text


def test_claude_codes_snippet_compacts_at_the_models_context(
    qtbot, tiny_chat: Path, edgedesk_home: Path, context: AppContext
) -> None:
    # Claude Code assumes 200k tokens; told the local model's context it compacts first.
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    chat_id = win.models.import_file(tiny_chat)
    context.scheduler.load(chat_id)
    [loaded] = context.scheduler.loaded()
    win.show_page("server")
    win.server.client_picker.setCurrentText("Claude Code")
    assert (
        f"CLAUDE_CODE_AUTO_COMPACT_WINDOW={loaded.report.context_length} "
        in win.server.snippet.toPlainText()
    )
    win.close()


def test_without_a_known_context_the_placeholder_stays_or_the_setting_is_used(
    qtbot, edgedesk_home: Path, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("server")
    win.server.client_picker.setCurrentText("Claude Code")
    assert "CLAUDE_CODE_AUTO_COMPACT_WINDOW=MODEL-CONTEXT " in win.server.snippet.toPlainText()
    win.close()
    (edgedesk_home / "config").mkdir(parents=True, exist_ok=True)
    (edgedesk_home / "config" / "settings.toml").write_text(
        "[engine]\ncontext_length = 6144\n", encoding="utf-8"
    )
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    win.show_page("server")
    win.server.client_picker.setCurrentText("Claude Code")
    assert "CLAUDE_CODE_AUTO_COMPACT_WINDOW=6144 " in win.server.snippet.toPlainText()
    win.close()
