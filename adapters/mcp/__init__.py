"""The MCP server: tools, prompts, management resources, its text rendering and its stdio and
Streamable HTTP transports."""
