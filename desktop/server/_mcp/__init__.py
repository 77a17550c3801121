"""MCP on the server's side: EdgeDesk's documents as an MCP server, and the hosted MCP
tools an API request names.
"""
