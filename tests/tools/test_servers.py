"""mcp.json as other MCP hosts write it, the policy allow-list, and ``edgedesk tools``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from desktop.base.errors import ConfigError
from desktop.cli import main
from desktop.tools._servers import McpPolicy, ServerConfig, ServerList
from tests.tools.conftest import SERVERS

PASTED = {
    "mcpServers": {  # as LM Studio / Cursor / Claude Desktop write it
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"],
            "env": {"DEBUG": "1"},
        },
        "wiki": {"url": "https://wiki.example.com/mcp", "headers": {"X-Team": "ops"}},
    }
}


def test_a_pasted_mcp_json_is_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(PASTED), encoding="utf-8")
    files, wiki = ServerList(path).all()
    assert (files.command, files.args, files.env) == (
        "npx",
        ("-y", "@modelcontextprotocol/server-filesystem", "/home/me"),
        {"DEBUG": "1"},
    )
    assert (wiki.url, wiki.headers, wiki.is_http) == (
        "https://wiki.example.com/mcp",
        {"X-Team": "ops"},
        True,
    )


def test_a_damaged_mcp_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="mcp.json is damaged"):
        ServerList(path).all()


def test_without_user_servers_only_it_s_list_runs(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": PASTED["mcpServers"]["files"],
                    "time": {"command": "uvx", "args": ["mcp-server-time"]},
                }
            }
        ),
        encoding="utf-8",
    )
    servers = ServerList(
        path,
        McpPolicy(("time=uvx mcp-server-time", "search=https://search.corp/mcp"), allow_user=False),
    )
    by_name = {s.name: s for s in servers.all()}
    assert by_name["time"].source == "policy" and by_name["search"].is_http
    assert servers.refusal(by_name["time"]) is None
    reason = servers.refusal(by_name["files"])
    assert reason is not None and "AllowUserMcp is off" in reason and "'files'" in reason
    with pytest.raises(ConfigError, match="AllowUserMcp"):
        servers.add(ServerConfig("mine", command="my-server"))


def test_offline_refuses_http_servers_and_says_so(tmp_path: Path) -> None:
    servers = ServerList(
        tmp_path / "mcp.json",
        McpPolicy(("search=https://search.corp/mcp", "time=uvx mcp-server-time"), offline=True),
    )
    search, local = servers.all()
    reason = servers.refusal(search)
    assert reason is not None and "offline mode is on" in reason and "ForceOffline" in reason
    assert servers.refusal(local) is None


def test_tools_add_list_test_rm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "add", "calc", "--", sys.executable, str(SERVERS), "calc"]) == 0
    assert main(["tools", "add", "wiki", "https://wiki.example.com/mcp"]) == 0
    capsys.readouterr()
    assert main(["tools", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["name"], s["transport"], s["allowed"]) for s in listed["servers"]] == [
        ("calc", "stdio", True),
        ("wiki", "http", True),
    ]
    assert listed["builtin_tools"] == ["read_document_passage", "search_documents"]
    assert main(["tools", "test", "calc"]) == 0
    assert "add: Add two whole numbers." in capsys.readouterr().out
    assert main(["--offline", "tools", "test", "wiki"]) == 2
    assert "offline mode is on" in capsys.readouterr().err
    assert main(["tools", "log"]) == 0
    assert "no tool calls yet" in capsys.readouterr().out  # listing tools is not a call
    assert main(["tools", "rm", "wiki"]) == 0
    capsys.readouterr()
    assert main(["tools", "list"]) == 0
    assert "wiki" not in capsys.readouterr().out


def test_a_damaged_mcp_json_leaves_the_built_in_tools(tmp_path: Path) -> None:
    from desktop.tools._call_log import ToolAudit
    from desktop.tools._mcp_client import McpClients
    from desktop.tools._toolbox import BuiltinTool, ToolBox
    from desktop.tools._types import ToolResult, ToolSpec

    path = tmp_path / "mcp.json"
    path.write_text("{not json", encoding="utf-8")
    echo = BuiltinTool(
        ToolSpec("echo", "Echo.", needs_approval=False), lambda args: ToolResult(str(args))
    )
    toolbox = ToolBox(ServerList(path), McpClients(), ToolAudit(None), [echo])
    offered = toolbox.available()
    assert list(offered.specs) == ["echo"] and "mcp.json is damaged" in offered.problems[0]
