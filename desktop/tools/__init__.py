"""Tools a model may call: MCP servers (stdio or Streamable HTTP) under the machine policy,
beside the built-in document tools the conversation core adds. See ``ToolBox``.

The face: ``__all__`` is the tools' contract, and code outside ``desktop.tools`` imports
only these names (an import-linter contract in pyproject.toml). The insides, whose names
start with ``_``, are free to change: ``_servers`` (``mcp.json`` and the policy),
``_mcp_client``, ``_toolbox``, ``_approvals``, ``_call_log``, ``_types``. A name is
imported from its inside module on first use, so importing the face starts nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.tools._approvals import APPROVALS_FILE, Approvals
    from desktop.tools._call_log import LOG_NAME, ToolAudit
    from desktop.tools._mcp_client import McpClients
    from desktop.tools._servers import (
        SERVERS_FILE,
        McpPolicy,
        ServerConfig,
        ServerList,
        check_url,
        pasted_servers,
        token_get,
        token_set,
    )
    from desktop.tools._toolbox import BuiltinTool, ServerState, ToolBox, ToolSet
    from desktop.tools._types import BUILTIN, ToolResult, ToolSpec

__all__ = [
    "APPROVALS_FILE",
    "BUILTIN",
    "LOG_NAME",
    "SERVERS_FILE",
    "Approvals",
    "BuiltinTool",
    "McpClients",
    "McpPolicy",
    "ServerConfig",
    "ServerList",
    "ServerState",
    "ToolAudit",
    "ToolBox",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "check_url",
    "pasted_servers",
    "token_get",
    "token_set",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "APPROVALS_FILE": "_approvals",
    "Approvals": "_approvals",
    "LOG_NAME": "_call_log",
    "ToolAudit": "_call_log",
    "McpClients": "_mcp_client",
    "McpPolicy": "_servers",
    "SERVERS_FILE": "_servers",
    "ServerConfig": "_servers",
    "ServerList": "_servers",
    "check_url": "_servers",
    "pasted_servers": "_servers",
    "token_get": "_servers",
    "token_set": "_servers",
    "BuiltinTool": "_toolbox",
    "ServerState": "_toolbox",
    "ToolBox": "_toolbox",
    "ToolSet": "_toolbox",
    "BUILTIN": "_types",
    "ToolResult": "_types",
    "ToolSpec": "_types",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
