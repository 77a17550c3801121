"""The Tools page shows the kept "Always for this tool" answers and forgets one."""

from __future__ import annotations

from PySide6.QtCore import Qt

from desktop.root.context import AppContext
from desktop.ui.common.workers import WorkerPool
from desktop.ui.tools.view import ToolsView


def test_kept_always_answers_are_shown_and_forgotten(qtbot, context: AppContext) -> None:
    approvals = context.toolbox.approvals
    assert approvals is not None
    approvals.add("calc", "add")
    approvals.add("calc", "divide")
    view = ToolsView(context, WorkerPool())
    qtbot.addWidget(view)
    tree = view.tree
    [always] = [
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "Always allowed"
    ]
    assert [always.child(i).text(0) for i in range(always.childCount())] == [
        "calc/add",
        "calc/divide",
    ]
    tree.setCurrentItem(always.child(0))
    qtbot.mouseClick(view.forget_button, Qt.MouseButton.LeftButton)
    assert approvals.all() == [("calc", "divide")]
    [always] = [
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "Always allowed"
    ]
    assert [always.child(i).text(0) for i in range(always.childCount())] == ["calc/divide"]
