"""Every relative link in the README and docs/ points at a file that exists, and every
#anchor at a heading of that file: the docs are reorganised often and a dead link is the
first thing a new reader hits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = sorted([REPO / "README.md", REPO / "benchmarks" / "README.md",
                REPO / "benchmarks" / "history.md",
                *(REPO / "docs").glob("**/*.md")])


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower-case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [m.group(1) for m in LINK.finditer(text)
            if not re.match(r"[a-z]+:", m.group(1))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for link in _links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        missing_anchor = anchor and target.suffix == ".md" and anchor not in _anchors(target)
        if not target.exists() or missing_anchor:
            broken.append(link)
    assert not broken, f"{page.relative_to(REPO)}: dead links {broken}"
