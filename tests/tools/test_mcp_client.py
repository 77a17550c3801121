"""Real MCP servers over stdio through the blocking client: calls, crashes, hangs, size."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from desktop.tools._mcp_client import MAX_RESULT_CHARS, McpClients
from desktop.tools._servers import ServerConfig
from desktop.tools._types import ToolError
from tests.conftest import wait_until
from tests.tools.conftest import server


def test_a_calculator_lists_its_tools_and_answers(clients: McpClients) -> None:
    calc = server("calc")
    tools = {t.name: t for t in clients.tools(calc)}
    assert set(tools) == {"add", "divide"}
    assert tools["add"].description == "Add two whole numbers."
    assert tools["add"].parameters["required"] == ["a", "b"]
    assert tools["add"].server == "calc" and tools["add"].needs_approval
    assert clients.call(calc, "add", {"a": 2, "b": 40}).text == "42"
    failed = clients.call(calc, "divide", {"a": 1, "b": 0})
    assert failed.is_error  # the tool's own failure reaches the model as an error result


def test_a_crashing_server_is_a_clear_error_and_starts_again(clients: McpClients) -> None:
    crash = server("crash")
    with pytest.raises(ToolError, match="'crash' failed while running 'explode'.*exited"):
        clients.call(crash, "explode", {})
    assert "crash" not in clients.running()
    assert [t.name for t in clients.tools(crash)] == ["explode"]  # a fresh process


def test_a_hanging_server_times_out_and_is_stopped(clients: McpClients) -> None:
    hang = server("hang")
    clients.tools(hang)
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"'hang' did not answer 'wait_forever' within 3 s"):
        clients.call(hang, "wait_forever", {})
    assert time.monotonic() - started < 10
    wait_until(lambda: "hang" not in clients.running(), 20, "the hung server stopped")
    calc = server("calc")
    assert clients.call(calc, "add", {"a": 1, "b": 1}).text == "2"  # the loop still serves


def test_a_megabyte_answer_is_cut_for_the_model_and_says_so(clients: McpClients) -> None:
    result = clients.call(server("big"), "megabyte", {})
    assert len(result.text) < MAX_RESULT_CHARS + 200
    assert result.text.endswith(
        f"[… cut: {1024 * 1024 - MAX_RESULT_CHARS} more characters the tool returned]"
    )


def test_a_server_that_cannot_start_names_its_command(clients: McpClients) -> None:
    missing = ServerConfig("ghost", command="/nonexistent/mcp-server")
    with pytest.raises(ToolError, match="'ghost' could not start.*/nonexistent/mcp-server"):
        clients.tools(missing)


def test_an_idle_server_is_stopped_and_starts_on_next_use(tmp_path: Path) -> None:
    clients = McpClients(log_dir=tmp_path, token=lambda _n: None, idle_s=1.0)
    try:
        calc = server("calc")
        clients.tools(calc)
        wait_until(lambda: clients.running() == [], 20, "every server stopped")
        assert clients.call(calc, "add", {"a": 3, "b": 4}).text == "7"
    finally:
        clients.close()
    assert clients.running() == []


def test_a_published_server_from_pypi_runs_as_a_user_would(clients: McpClients) -> None:
    # mcp-server-time (the MCP project's reference time server), started the way its
    # README's mcp.json entry starts it with pip: python -m mcp_server_time.
    time_server = ServerConfig(
        "time", command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC")
    )
    names = {t.name for t in clients.tools(time_server)}
    assert {"get_current_time", "convert_time"} <= names
    answer = clients.call(time_server, "get_current_time", {"timezone": "Asia/Tokyo"})
    assert not answer.is_error
    assert json.loads(answer.text)["timezone"] == "Asia/Tokyo"


def test_a_server_that_hangs_at_start_costs_one_timeout_not_one_per_turn(tmp_path: Path) -> None:
    clients = McpClients(log_dir=tmp_path, token=lambda _n: None, start_timeout_s=2.0)
    mute = ServerConfig("mute", command=sys.executable, args=("-c", "import time; time.sleep(120)"))
    try:
        with pytest.raises(ToolError, match="'mute' did not start within 2 s"):
            clients.tools(mute)
        started = time.monotonic()
        with pytest.raises(ToolError, match="'mute' did not start within 2 s"):
            clients.tools(mute)  # the next turn: told at once, not after 2 s more
        assert time.monotonic() - started < 2.0  # a second start would wait 2 s more
    finally:
        clients.close()


def test_stop_abandons_a_call_waiting_for_its_server(clients: McpClients) -> None:
    import threading

    hang = server("hang")
    clients.tools(hang)
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    started = time.monotonic()
    with pytest.raises(ToolError, match="stopped before the tool server answered"):
        clients.call(hang, "wait_forever", {}, timeout_s=60, cancel=cancel)
    assert time.monotonic() - started < 10  # not the 60 s the call may take
    timer.join()
