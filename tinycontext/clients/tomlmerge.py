"""Our server entry merged into (or taken out of) a TOML config (Codex's `[mcp_servers.NAME]`)
with tomlkit, which keeps the rest of the document byte for byte: comments, order, spacing.
Pure: text in, text out."""

from __future__ import annotations

from typing import Any

from tinycontext.clients.jsontext import ConfigSyntaxError


def _parse(text: str) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:  # tomlkit counts columns from 0
        reason = str(exc).split(" at line ")[0]
        if reason in ("Unexpected character: '\\x00'", "Unexpected end of file"):
            reason = "the file ends too early (unexpected end of the file)"  # tomlkit's EOF
        raise ConfigSyntaxError(reason, exc.line, exc.col + 1) from None


def _servers(doc: Any, key: str) -> Any:
    servers = doc.get(key)
    if servers is not None and not isinstance(servers, dict):
        from tinycontext.clients.jsonmerge import ConfigShapeError

        raise ConfigShapeError(f"{key} should be a table, found {type(servers).__name__}", 1, 1)
    return servers


def _tidy(old: str, new: str) -> str:
    """tomlkit spaces a table it adds at the end with blank lines the file did not have."""
    if new.endswith("\n\n") and not old.endswith("\n\n"):
        new = new.rstrip("\n") + "\n"
    return new


def lookup(text: str, key: str, name: str) -> Any:
    servers = _servers(_parse(text), key)
    if servers is None or name not in servers:
        return None
    entry = servers[name]
    return entry.unwrap() if hasattr(entry, "unwrap") else entry


def set_entry(text: str, key: str, name: str, entry: dict[str, Any]) -> str:
    """Text whose `[key.name]` table is exactly `entry` (existing keys updated in place)."""
    import tomlkit
    from tomlkit.items import InlineTable

    doc = _parse(text)
    servers = _servers(doc, key)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc[key] = servers
    current = servers.get(name)
    if isinstance(current, dict):
        for field in [k for k in current if k not in entry]:
            del current[field]
        for field, value in entry.items():
            if current.get(field) != value:
                current[field] = value
    else:
        table: Any = tomlkit.inline_table() if isinstance(servers, InlineTable) else \
            tomlkit.table()
        table.update(entry)
        if not isinstance(servers, InlineTable):
            table.add(tomlkit.nl())
        servers[name] = table
    return _tidy(text, doc.as_string())


def delete(text: str, key: str, name: str) -> str:
    """Text without `[key.name]`; an emptied `key` table goes too."""
    doc = _parse(text)
    servers = _servers(doc, key)
    if servers is None or name not in servers:
        return text
    del servers[name]
    if not servers:
        del doc[key]
    return _tidy(text, doc.as_string())
