"""The Server screen shows each API key's scope and last use."""

from __future__ import annotations

import json

import pytest

from desktop.root.context import AppContext
from desktop.ui.server.key_scope import ScopeChoice
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


def test_key_list_shows_scopes_and_last_use(qtbot, context: AppContext) -> None:  # type: ignore[no-untyped-def]
    ctx = context
    ctx.key_store.create("vscode", models=["qwen"], endpoints=["chat"], rate_per_min=30)
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    panel = win.server
    panel.create_key("plain")
    texts = sorted(panel.key_list.item(i).text() for i in range(panel.key_list.count()))
    assert "any model, any endpoint" in texts[0] and "never used" in texts[0]
    assert "endpoints: chat; models: qwen; 30 requests a minute" in texts[1]
    win.close()


def _left():  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def _entries(ctx: AppContext) -> list[dict[str, object]]:
    from desktop.base.audit import AuditLog

    audit = ctx.audit
    assert isinstance(audit, AuditLog)
    return audit.entries()


def test_a_key_made_and_edited_in_the_window_is_scoped(qtbot) -> None:  # type: ignore[no-untyped-def]
    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context

    ctx = build_context(policy=NoPolicy(), cli_settings={"audit_log": True})
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    panel = win.server
    qtbot.mouseClick(panel.new_key_button, _left())
    dialog = panel.scope_dialog
    assert dialog is not None and dialog.expiry.value() == 0  # never, by default
    dialog.name.setText("ide")
    dialog.models.setText("qwen, gemma")
    dialog.endpoints["embeddings"].setChecked(False)
    dialog.endpoints["documents"].setChecked(False)
    dialog.expiry.setValue(30)
    dialog.rate.setValue(20)
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), _left())
    key = panel.key_field.text()
    assert key and panel.key_row.isVisibleTo(panel)
    found = ctx.key_store.check(key)
    assert found is not None and found.name == "ide"
    assert found.scope.models == ("qwen", "gemma") and found.scope.endpoints == ("chat",)
    assert found.scope.rate_per_min == 20 and found.scope.expires is not None
    shown = panel.key_list.item(0).text()
    assert "endpoints: chat; models: qwen, gemma; 20 requests a minute; expires" in shown

    # Edit: the dialog opens with the key's scope; widen it; the same key keeps working.
    panel.key_list.setCurrentRow(0)
    qtbot.mouseClick(panel.edit_button, _left())
    edit = panel.scope_dialog
    assert edit is not None and edit.name.text() == "ide" and edit.name.isReadOnly()
    assert edit.models.text() == "qwen,gemma" and edit.rate.value() == 20
    assert edit.expiry.value() == 30 and not edit.endpoints["documents"].isChecked()
    edit.models.clear()
    edit.endpoints["embeddings"].setChecked(True)
    edit.expiry.setValue(0)  # never
    edit.rate.setValue(0)  # no limit
    qtbot.mouseClick(edit.buttons.button(edit.buttons.StandardButton.Ok), _left())
    widened = ctx.key_store.check(key)
    assert widened is not None and widened.name == "ide"
    assert widened.scope.models is None and widened.scope.endpoints == ("chat", "embeddings")
    assert widened.scope.rate_per_min is None and widened.scope.expires is None
    assert panel.key_list.count() == 1
    assert panel.key_list.item(0).text().endswith(" · endpoints: chat, embeddings")
    events = _entries(ctx)
    assert [e["event"] for e in events] == ["key.created", "key.scope_changed"]
    assert events[1]["key"] == "ide" and events[1]["scope"] == "endpoints chat,embeddings"
    assert key not in json.dumps(events)
    win.close()


def test_the_policy_caps_a_window_keys_expiry(qtbot) -> None:  # type: ignore[no-untyped-def]
    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context
    from desktop.server._security import DAY_S

    ctx = build_context(policy=NoPolicy(), cli_settings={"server.max_key_lifetime_days": 7})
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    panel = win.server
    dialog = panel._ask_key()
    # No "never" under the cap, and no more days than it allows.
    assert dialog.expiry.minimum() == 1 and dialog.expiry.maximum() == 7
    assert dialog.expiry.value() == 7
    dialog.name.setText("capped")
    dialog.expiry.setValue(30)
    assert dialog.expiry.value() == 7
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), _left())
    found = ctx.key_store.check(panel.key_field.text())
    assert found is not None and found.scope.expires is not None
    assert found.scope.expires <= ctx.key_store.clock() + 7 * DAY_S + 1
    # Editing past the cap through the store is refused, as `keys create --expires` is.
    assert not panel.edit_scope("capped", ScopeChoice(expires_in_s=30 * DAY_S))
    assert "MaxKeyLifetimeDays" in panel.notice.text()
    # A key that may call no endpoint at all is refused, not made useless.
    assert not panel.edit_scope("capped", ScopeChoice(endpoints=()))
    assert panel.create_key("none", ScopeChoice(endpoints=())) is None
    assert [i.name for i in ctx.key_store.list()] == ["capped"]
    win.close()
