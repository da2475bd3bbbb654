"""Every TINYCONTEXT_* variable that help texts, messages and docs tell a user to set is one
something reads: a setting, a server variable, or a compose/CI variable defined where it is
used. A misspelt name in a help text sends an operator to a variable nothing reads."""

from __future__ import annotations

import re
from pathlib import Path

from tinycontext.config.engine import TinyContextConfig
from tinycontext.config.settings import ENV_PREFIX, ServerVariables

REPO = Path(__file__).resolve().parents[2]
NAME = r"TINYCONTEXT_[A-Z0-9_]*[A-Z0-9]"


def _files(*patterns: str) -> list[Path]:
    return [p for pattern in patterns for p in REPO.glob(pattern)
            if p.is_file() and "__pycache__" not in p.parts]


def _read_names() -> set[str]:
    names = {ENV_PREFIX + field.upper()
             for model in (TinyContextConfig, ServerVariables) for field in model.model_fields}
    for path in _files("tinycontext/**/*.py", "adapters/**/*.py", "tests/**/*.py", "deploy/**/*",
                       ".ci/*", "docs/**/*.md"):
        text = path.read_text(encoding="utf-8", errors="replace")
        names |= set(re.findall(rf"[\"']({NAME})[\"']", text))  # looked up by its literal name
        names |= set(re.findall(rf"\$\{{?({NAME})", text))  # a compose / shell variable
        names |= set(re.findall(rf"^\s*(?:export\s+)?({NAME})[=:]", text, flags=re.M))
    return names


def test_every_variable_users_are_told_about_is_read_somewhere() -> None:
    known = _read_names()
    unknown = []
    for path in _files("tinycontext/**/*.py", "adapters/**/*.py", "docs/**/*.md", "README.md"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(NAME, text):
            if match.group(0) not in known:
                line = text.count("\n", 0, match.start()) + 1
                unknown.append(f"{path.relative_to(REPO)}:{line} {match.group(0)}")
    assert not unknown, "variables nothing reads:\n" + "\n".join(unknown)
