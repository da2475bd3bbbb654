"""`tinycontext setup` on real files in a temporary home: backups (owner-only), modes kept,
symlinks written through, new files owner-only, --dry-run writes nothing, a malformed file is
left as it was with an error naming it and its line, --list reports each client."""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
from pathlib import Path

import pytest

from tinycontext.entry import setup_command


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(project)
    return home


def setup(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    setup_command.add_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    code = setup_command.run(parser.parse_args(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.tinycontext-backup"))


def test_new_files_and_folders_are_owner_only(home: Path) -> None:
    code, out, _ = setup("codex")
    assert code == 0 and "added Codex CLI MCP server" in out
    config = home / ".codex" / "config.toml"
    assert _mode(config) == 0o600 and _mode(config.parent) == 0o700
    assert _backups(config.parent) == []


def test_existing_file_gets_a_backup_and_keeps_its_mode(home: Path) -> None:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    original = '{\n  "mcpServers": {\n    "other": {"command": "o"}\n  }\n}\n'
    config.write_text(original)
    config.chmod(0o644)
    code, out, _ = setup("cursor")
    assert code == 0
    assert _mode(config) == 0o644
    [backup] = _backups(config.parent)
    assert backup.read_text() == original and _mode(backup) == 0o600
    assert str(backup) in out
    # A second run: already configured, no new backup, no change.
    before = config.read_text()
    code, out, _ = setup("cursor")
    assert code == 0 and "already configured" in out
    assert config.read_text() == before and len(_backups(config.parent)) == 1


def test_dry_run_prints_a_diff_and_writes_nothing(home: Path) -> None:
    config = home / ".gemini" / "settings.json"
    config.parent.mkdir()
    config.write_text('{\n  "theme": "GitHub"\n}\n')
    code, out, _ = setup("gemini", "--dry-run")
    assert code == 0
    assert f"--- {config} (before)" in out and '+  "mcpServers": {' in out
    assert "dry run: nothing was written" in out and "would add Gemini CLI" in out
    assert config.read_text() == '{\n  "theme": "GitHub"\n}\n'
    assert _backups(config.parent) == []
    code, out, _ = setup("windsurf", "--dry-run")
    assert code == 0 and "/dev/null" in out
    assert not (home / ".codeium").exists()


def test_a_malformed_file_is_left_alone_and_named_with_its_line(home: Path) -> None:
    config = home / ".claude.json"
    broken = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "a": {"command": "x"}\n  \n}\n'
    config.write_text(broken)
    code, out, err = setup("claude-code", "--no-hooks")
    assert code == 2 and out == ""
    assert f"{config}: line 7 column 1" in err and "Nothing was changed" in err
    assert config.read_text() == broken and _backups(home) == []


def test_a_symlinked_config_is_edited_where_it_lives(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text("{}\n")
    link = home / ".gemini" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    assert setup("gemini")[0] == 0
    assert link.is_symlink()
    assert "tinycontext" in json.loads(dotfiles.read_text())["mcpServers"]


def test_project_scope_and_remove_touch_only_our_parts(home: Path) -> None:
    project = Path.cwd()
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    settings.write_text(json.dumps(mine, indent=2) + "\n")
    code, out, _ = setup("claude-code", "--scope", "project")
    assert code == 0
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["tinycontext"]
    assert list(json.loads(settings.read_text())["hooks"]) == [
        "Stop", "SessionStart", "UserPromptSubmit"]
    code, out, _ = setup("claude-code", "--scope", "project", "--remove")
    assert code == 0 and "held nothing else and was deleted" in out
    assert not (project / ".mcp.json").exists()
    assert json.loads(settings.read_text()) == mine
    code, out, _ = setup("claude-code", "--scope", "project", "--remove")
    assert code == 0 and out.count("nothing to remove") == 2


def test_list_shows_configured_clients_and_hooks(home: Path) -> None:
    assert setup("claude-code")[0] == 0
    assert setup("vscode", "--http", "http://127.0.0.1:8000")[0] == 0
    code, out, _ = setup("--list")
    assert code == 0
    claude = out.split("claude-code     user")[1].split("\n")[1]
    assert "configured: stdio" in claude and "hooks SessionStart, UserPromptSubmit" in claude
    assert "configured: http http://127.0.0.1:8000/mcp" in out
    assert "cursor          user     " in out and "no file" in out


def test_bad_requests_exit_2_with_what_to_do(home: Path) -> None:
    assert setup("notaclient")[0] == 2
    code, _, err = setup()
    assert code == 2 and "name a client" in err
    code, _, err = setup("windsurf", "--scope", "project")
    assert code == 2 and "no project scope" in err
    code, _, err = setup("claude-desktop", "--http", "http://127.0.0.1:8000/mcp")
    assert code == 2 and "only stdio" in err
    code, _, err = setup("cursor", "--http", "ftp://x")
    assert code == 2 and "http:// or https://" in err
    assert not any(home.iterdir())


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_an_unreadable_file_is_reported_not_overwritten(home: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    config = home / ".lmstudio" / "mcp.json"
    config.parent.mkdir()
    config.write_text("{}")
    config.chmod(0)
    code, _, err = setup("lmstudio")
    assert code == 2 and str(config) in err


def test_a_file_changed_after_it_was_read_is_not_overwritten(home: Path) -> None:
    from tinycontext.clients import files

    config = home / "c.json"
    config.write_text('{"a": 1}')
    with pytest.raises(files.ConfigFileError, match="changed while setup"):
        files.write(config, '{"a": 2}', expected='{"a": 0}')
    with pytest.raises(files.ConfigFileError, match="changed while setup"):
        files.write(config, '{"a": 2}', expected=None)  # it appeared meanwhile
    assert config.read_text() == '{"a": 1}' and _backups(home) == []
    assert files.write(config, '{"a": 2}', expected='{"a": 1}') is not None
    assert config.read_text() == '{"a": 2}'


def test_no_hooks_leaves_the_settings_alone_both_ways(home: Path) -> None:
    assert setup("claude-code")[0] == 0
    settings = home / ".claude" / "settings.json"
    before = settings.read_text()
    code, out, _ = setup("claude-code", "--remove", "--no-hooks")
    assert code == 0 and "Claude Code hooks" not in out
    assert settings.read_text() == before
    assert not (home / ".claude.json").exists()  # it held only our entry
