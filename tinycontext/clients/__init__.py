"""Agent clients' config files: where each client keeps its MCP servers, their formats, and
merging TinyContext's entry (and Claude Code's hooks) into them (`tinycontext setup`)."""
