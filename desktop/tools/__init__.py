"""Tools a model may call: MCP servers (stdio or Streamable HTTP) under the machine policy,
beside the built-in document tools the conversation core adds. See ``toolbox.ToolBox``."""
