"""The relay in front of the real agents forces a tool call only on a turn without one.

``clients._has_tool_result`` decides whether the relay adds a forced ``tool_choice``: it
must see a tool's result in every protocol's shape, or the turn after the tool ran is
forced to call again and the conversation never ends.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.clients import _has_tool_result

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_requests"


@pytest.mark.parametrize(
    "name", ["codex-responses", "claude-code-messages", "opencode-chat", "continue-chat"]
)
def test_a_captured_turn_after_a_tool_ran_is_seen_as_one(name: str) -> None:
    requests = json.loads((FIXTURES / f"{name}.json").read_text())["requests"]
    assert _has_tool_result(requests[-1])  # each capture's last turn carries the result
    assert not _has_tool_result(requests[-2])


def test_chat_completions_tool_messages_count_as_results() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}
        ],
    }
    asked = {"messages": [{"role": "user", "content": "run it"}, call]}
    assert not _has_tool_result(asked)
    answered = {
        "messages": [*asked["messages"], {"role": "tool", "tool_call_id": "c1", "content": "hi"}]
    }
    assert _has_tool_result(answered)
