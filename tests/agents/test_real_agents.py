"""The real Codex CLI and Claude Code, set up as the docs say, complete turns on EdgeDesk.

``edgedesk serve`` runs as a child process with a key, over a tiny model with Gemma's
tokenizer and chat format (``tiny_agent_model``); each client runs
from ``scripts/agent-clients.sh``'s install (skipped, saying so, where npm is absent).
A turn completes when the client exits 0 having printed the model's answer. For the tool
turn a relay forces the first call (no CLI has a flag for ``tool_choice``): the client
must run the tool, send its result back, and finish on the model's next answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.clients import (
    ForcingProxy,
    Serving,
    claude_env,
    client_binary,
    codex_env,
    run_client,
)


@pytest.fixture(scope="session")
def codex() -> Path:
    """The Codex CLI binary (checked before the server starts, so a skip costs nothing)."""
    return client_binary("codex")


@pytest.fixture(scope="session")
def claude() -> Path:
    """The Claude Code binary."""
    return client_binary("claude")


def _codex(
    codex: Path, tmp_path: Path, url: str, served: Serving, prompt: str
) -> tuple[int, str, str]:
    env = codex_env(tmp_path / "home", url, served.model, served.key)
    done = run_client(
        [str(codex), "exec", "--skip-git-repo-check", "--sandbox", "read-only", prompt],
        env,
        tmp_path / "work",
    )
    return done.returncode, done.stdout, done.stderr


def _claude(
    claude: Path, tmp_path: Path, root: str, served: Serving, prompt: str
) -> tuple[int, str, str]:
    env = claude_env(tmp_path / "home", root, served.model, served.key)
    done = run_client([str(claude), "-p", prompt], env, tmp_path / "work")
    return done.returncode, done.stdout, done.stderr


def _why(out: str, err: str, served: Serving) -> str:
    """The client's last words and the server's, for a failure message."""
    return f"client:\n{(out + err)[-3000:]}\nserver:\n{served.tail()}"


def test_claude_code_print_completes_a_turn(claude: Path, served: Serving, tmp_path: Path) -> None:
    code, out, err = _claude(claude, tmp_path, served.root, served, "Say hello.")
    assert code == 0, _why(out, err, served)
    assert out.strip()


def test_claude_code_runs_a_forced_tool_and_answers_its_result(
    claude: Path, served: Serving, tmp_path: Path
) -> None:
    # Bash is forced; in -p mode without --allowedTools Claude Code refuses to run it and
    # sends that refusal back as the tool's result: a second turn, and nothing executed.
    relay = ForcingProxy(served.root, {"type": "tool", "name": "Bash"})
    with relay.running() as root:
        code, out, err = _claude(claude, tmp_path, root, served, "Run the command: echo hi")
    assert code == 0, _why(out, err, served)
    uses = [
        block
        for body in relay.seen
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_use"
    ]
    results = [
        block
        for body in relay.seen
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]
    assert uses and uses[0]["name"] == "Bash", _why(out, err, served)
    assert results and results[0]["tool_use_id"] == uses[0]["id"]
    assert out.strip()


def test_codex_exec_completes_a_turn(codex: Path, served: Serving, tmp_path: Path) -> None:
    code, out, err = _codex(codex, tmp_path, served.url, served, "Say hello.")
    assert code == 0, _why(out, err, served)
    assert out.strip(), _why(out, err, served)  # codex exec prints the final answer on stdout


def test_codex_exec_runs_a_forced_tool_and_answers_its_result(
    codex: Path, served: Serving, tmp_path: Path
) -> None:
    relay = ForcingProxy(served.root, {"type": "function", "name": "exec_command"})
    with relay.running() as root:
        code, out, err = _codex(codex, tmp_path, root + "/v1", served, "Run the command: echo hi")
    assert code == 0, _why(out, err, served)
    outputs = [
        item
        for body in relay.seen
        for item in body.get("input", [])
        if item.get("type") == "function_call_output"
    ]
    calls = [
        item
        for body in relay.seen
        for item in body.get("input", [])
        if item.get("type") == "function_call"
    ]
    assert calls and calls[0]["name"] == "exec_command", _why(out, err, served)
    assert outputs and outputs[0]["call_id"] == calls[0]["call_id"]
    assert out.strip()


def test_codex_calls_a_tool_in_a_namespace_and_routes_it(
    codex: Path, served: Serving, tmp_path: Path
) -> None:
    # Codex sends its sub-agent tools (like its MCP servers' tools) as a namespace and
    # routes a call by (namespace, name): the flattened tool's call must come back so.
    # Forced: close_agent in multi_agent_v1 (harmless: the tiny model names no real agent).
    relay = ForcingProxy(
        served.root, {"type": "function", "name": "close_agent", "namespace": "multi_agent_v1"}
    )
    with relay.running() as root:
        code, out, err = _codex(codex, tmp_path, root + "/v1", served, "Close the agent.")
    assert code == 0, _why(out, err, served)
    calls = [
        item
        for body in relay.seen
        for item in body.get("input", [])
        if item.get("type") == "function_call"
    ]
    outputs = [
        item
        for body in relay.seen
        for item in body.get("input", [])
        if item.get("type") == "function_call_output"
    ]
    assert calls, _why(out, err, served)
    assert (calls[0]["name"], calls[0].get("namespace")) == ("close_agent", "multi_agent_v1")
    assert outputs and outputs[0]["call_id"] == calls[0]["call_id"]
    # A call Codex could not route comes back as "unsupported call: ..."; this one ran.
    result = json.dumps(outputs[0]["output"])
    assert "unsupported call" not in result, result
