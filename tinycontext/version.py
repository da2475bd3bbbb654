"""The package version and how to add an extra to this install, in a module of its own:
adapters read them without importing the package's public API (tinycontext/__init__ names
the composition, which imports adapters)."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"


def checkout() -> str | None:
    """The source checkout this package runs from (an editable install), if it is one."""
    root = Path(__file__).resolve().parents[1]
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return str(root) if 'name = "tinysuite-context"' in project else None


def install_command(extra: str) -> str:
    """The pip command that adds `extra` to this environment. The PyPI name is not this
    codebase until it is released (it fetches an older, different project), so the command
    names where this copy came from."""
    root = checkout()
    if root is not None:
        return f"pip install -e '{root}[{extra}]'"
    return f"pip install '<the checkout folder or wheel file you installed from>[{extra}]'"
