"""The Tools screen and the approval asked before MCP tools run."""
