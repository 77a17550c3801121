"""Asking the user about a round's tool calls: what is asked, and the two ways to ask.

A window asks once per round about every call that needs approval (a ``BatchApprover``);
a terminal asks about each distinct call in turn (an ``Approver``, made into a batch
approver by ``one_by_one``). The conversation core (``desktop.chat._session``) only ever
talks to a batch approver.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from desktop.engine import ToolCall
from desktop.tools import ToolSpec

Decision = Literal["once", "always", "deny"]
# Asked on the worker thread for each call that needs approval (blocks until answered).
Approver = Callable[[ToolSpec, ToolCall], Decision]


@dataclass(frozen=True)
class ApprovalAsk:
    """One distinct call waiting for approval: ``count`` identical calls of the round."""

    spec: ToolSpec
    call: ToolCall
    count: int = 1


@dataclass(frozen=True)
class ApprovalBatch:
    """Every call of one round that needs the user's word, asked together.

    ``step`` is the round (from 1) and ``max_steps`` how many rounds the answer may take
    before it must answer in words; ``always_offered`` is False under McpRequireApproval.
    """

    asks: tuple[ApprovalAsk, ...]
    step: int
    max_steps: int
    always_offered: bool = True


# Asked on the worker thread once per round: one Decision per ask, in order (a window).
BatchApprover = Callable[[ApprovalBatch], Sequence[Decision]]


def call_key(call: ToolCall) -> tuple[str, str]:
    """What makes two calls identical: the tool and its arguments (JSON key order aside)."""
    try:
        arguments = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except ValueError:
        arguments = call.arguments
    return call.name, arguments


def one_by_one(approve: Approver) -> BatchApprover:
    """A batch approver that asks ``approve`` about each call in turn (a terminal); an
    "always" answers the round's later calls of that tool without asking again."""

    def ask(batch: ApprovalBatch) -> list[Decision]:
        always: set[str] = set()
        decisions: list[Decision] = []
        for item in batch.asks:
            if item.spec.name in always:
                decisions.append("once")
                continue
            decision = approve(item.spec, item.call)
            if decision == "always" and batch.always_offered:
                always.add(item.spec.name)
            decisions.append(decision)
        return decisions

    return ask
