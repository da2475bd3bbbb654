"""Help texts, error messages, doctor lines, comments and prose that name a page of docs/
name one that exists: the docs moved into guides/ and reference/, and a user told to read a missing
page is stuck at the moment they need help."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# A docs/ path not inside a URL or another path (a client's own docs are cited by URL), nor a
# Markdown link's target (test_doc_links resolves those relative to their page).
DOC_PATH = re.compile(r"(?<![\w/.-])(?<!\]\()docs/[\w./-]*\w\.md")
SOURCES = ("tinycontext", "domain", "ports", "adapters", "benchmarks", "deploy", ".ci", "tests")


def _files() -> list[Path]:
    found = [REPO / "pyproject.toml", REPO / "README.md", *(REPO / "docs").glob("**/*.md")]
    for folder in SOURCES:
        found += [p for p in (REPO / folder).rglob("*") if p.is_file()
                  and "__pycache__" not in p.parts
                  and (p.suffix in {".py", ".toml", ".sh", ".yaml", ".html", ".js", ".md"}
                       or p.name in {"Dockerfile", "run"})]
    return found


def test_every_docs_path_named_in_code_exists() -> None:
    missing = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in DOC_PATH.finditer(text):
            if not (REPO / match.group(0)).exists():
                line = text.count("\n", 0, match.start()) + 1
                missing.append(f"{path.relative_to(REPO)}:{line} {match.group(0)}")
    assert not missing, "pages named in code that docs/ does not have:\n" + "\n".join(missing)
