"""docs/README.md is the way in: every guide and reference page is listed there, so a page
that exists but is linked from nowhere a reader starts cannot be missed."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_docs_index_lists_every_guide_and_reference_page() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {link.partition("#")[0] for link in re.findall(r"\]\(([^)\s]+)\)", index)}
    pages = {p.relative_to(DOCS).as_posix()
             for folder in ("guides", "reference") for p in (DOCS / folder).glob("*.md")}
    assert pages - linked == set()


def test_the_benchmarks_readme_names_every_benchmark_script() -> None:
    folder = DOCS.parent / "benchmarks"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    scripts = {p.name for p in folder.glob("benchmark_*.py")}
    assert {name for name in scripts if f"`{name}`" not in readme} == set()
