"""The terminal's tool approval: the call shown with its arguments, the answer read."""

from __future__ import annotations

import pytest

from desktop.cli.tool_approval import terminal_approver
from desktop.engine._types import ToolCall
from desktop.tools._types import ToolSpec

SPEC = ToolSpec("add", "Add.", server="calc")
CALL = ToolCall("c1", "add", '{"a": 1}')


@pytest.mark.parametrize(
    ("typed", "decision"),
    [
        (["o"], "once"),
        (["always"], "always"),
        (["d"], "deny"),
        (["maybe", "a"], "always"),
        ([], "deny"),
    ],
)
def test_the_answer_comes_from_the_next_line(
    capsys: pytest.CaptureFixture[str], typed: list[str], decision: str
) -> None:
    lines = iter(typed)
    assert terminal_approver(lambda: lines)(SPEC, CALL) == decision
    err = capsys.readouterr().err
    assert 'add on calc wants to run with {"a": 1}' in err


def test_without_a_terminal_nothing_runs_unasked() -> None:
    assert terminal_approver(lambda: None)(SPEC, CALL) == "deny"
