"""The argument parser of the `tinycontext` command (cli.py runs what it parses). Each
command's own options come from its module, imported only when the parser is built: the
bare command (the stdio server) and a hook call never build it."""

from __future__ import annotations

import argparse

from tinycontext.hooks.command import add_commands as add_hook_commands

DEFAULT_HOST, DEFAULT_PORT, DEFAULT_REST_PORT = "127.0.0.1", 8000, 8001


def build_parser() -> argparse.ArgumentParser:
    from tinycontext.entry.exporting import REPAIR_HELP
    from tinycontext.version import __version__

    parser = argparse.ArgumentParser(
        prog="tinycontext",
        description="Token-light, local-first memory for AI agents. Without a command, runs the "
        "MCP server on stdio. Settings come from context_config.json and TINYCONTEXT_* "
        "variables (see `tinycontext doctor`).",
        epilog="Start here: `tinycontext setup claude-code` (or another client: `tinycontext "
        "setup --help`) connects your agent; `tinycontext doctor` checks that the store, "
        "SQLite and the model are ready and says what to fix. Each command's options: "
        "`tinycontext COMMAND --help`. Guides and reference: docs/README.md in the repository.",
    )
    parser.add_argument("--version", action="version", version=f"tinycontext {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    sub.add_parser("mcp", help="MCP server on stdio (the default)",
                   description="Serve MCP on stdin/stdout for a local agent client. "
                   "Clients start it themselves: `tinycontext setup CLIENT` adds it to "
                   "a client's config (see `tinycontext setup --help`).")
    for name, what, port in (("serve", "Streamable HTTP MCP at /mcp", DEFAULT_PORT),
                             ("rest", "the REST API (FastAPI)", DEFAULT_REST_PORT)):
        p = sub.add_parser(name, help=f"serve {what}", description=f"Serve {what}. Hosted "
                           "multi-user mode behind an authenticating proxy: "
                           "TINYCONTEXT_TENANCY=proxy-header (see docs/guides/hosted.md).")
        p.add_argument("--host", help=f"address to bind (TINYCONTEXT_HOST, default {DEFAULT_HOST})")
        p.add_argument("--port", type=int,
                       help=f"port (TINYCONTEXT_PORT, default {port})")
    sub.choices["rest"].add_argument("--with-mcp", action="store_true",
                                     help="also serve Streamable HTTP MCP at /mcp")
    # Streamable HTTP options of the MCP SDK (docs/reference/mcp.md, "HTTP response modes").
    # One JSON body per request is the default: the tools send nothing mid-call, every MCP
    # client must accept application/json, and it costs the server less CPU a call than an SSE
    # stream, which matters most to hosted mode under load (docs/benchmarks.md).
    modes = sub.choices["serve"].add_mutually_exclusive_group()
    modes.add_argument(
        "--json-response", dest="sse", action="store_false",
        help="answer each MCP request with one JSON body (the default)")
    modes.add_argument(
        "--sse", dest="sse", action="store_true",
        help="answer each MCP request with an SSE stream instead of one JSON body")
    sub.choices["serve"].set_defaults(sse=False)
    sub.choices["serve"].add_argument(
        "--stateless", action="store_true",
        help="keep no MCP session between requests (no server-to-client stream)")
    from tinycontext.entry.ui_command import UI_HELP, add_ui_arguments

    for name in ("serve", "rest"):
        sub.choices[name].add_argument("--ui", action="store_true", help="also serve the "
                                       "memory browser at /ui (prints its link)")
    add_ui_arguments(sub.add_parser("ui", help="open the memory browser in a web browser",
                                    description=UI_HELP))
    doctor = sub.add_parser("doctor", help="show the configuration and check readiness",
                            description="Print the resolved configuration and check storage, "
                            "SQLite/FTS5, sqlite-vec and the embedding model. Exit 0 when ready.")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    export = sub.add_parser("export", help="write the store as JSON Lines",
                            description="Export every memory (or one session's) as JSON Lines. "
                            "The file is created owner-only (0600) and only once complete.")
    repair = sub.add_parser("repair", help="salvage a damaged store as JSON Lines",
                            description=REPAIR_HELP)
    for p in (export, repair):
        p.add_argument("-o", "--output", default="-", help="file to write (default stdout): "
                       "owner-only (0600), in place only once complete")
        p.add_argument("--session", help="only this session's memories")
        p.add_argument("--no-embeddings", action="store_true",
                       help="leave vectors out (smaller file; import re-embeds)")
        p.add_argument("--encrypt", action="store_true", help="encrypt the file with the "
                       "configured key (AES-256-GCM; docs/guides/encryption.md); import reads it")
    from tinycontext.entry.import_command import IMPORT_HELP, add_arguments

    add_arguments(sub.add_parser("import", help="import an export (ours, ChatGPT, Claude, "
                                 "MCP memory, Mem0, Markdown ...)", description=IMPORT_HELP))
    from tinycontext.entry.setup_command import register as register_setup

    register_setup(sub)
    add_hook_commands(sub)
    from tinycontext.entry.encryption_command import add_parsers

    add_parsers(sub)
    return parser
