"""A link whose text is a path (`[docs/<page>.md](...)`) names the file it opens: after docs/ was
split into guides/ and reference/, labels naming the old places sent readers looking for
files that no longer exist."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PATH_LINK = re.compile(r"\[`?((?:docs|benchmarks)/[\w./-]*)`?\]\(([^)\s#]*)(?:#[^)\s]*)?\)")
PAGES = sorted([REPO / "README.md", REPO / "benchmarks" / "README.md",
                REPO / "benchmarks" / "history.md", *(REPO / "docs").glob("**/*.md")])


def test_path_labels_name_their_targets() -> None:
    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in PATH_LINK.finditer(text):
            label, target = match.group(1), match.group(2)
            if not target or re.match(r"[a-z]+:", target):
                continue
            opened = (page.parent / target).resolve()
            named = (REPO / label).resolve()
            if opened not in {named, named / "README.md"}:  # a folder opens its README
                line = text.count("\n", 0, match.start()) + 1
                wrong.append(f"{page.relative_to(REPO)}:{line} [{label}] opens "
                             f"{opened.relative_to(REPO)}")
    assert not wrong, "link labels naming another file:\n" + "\n".join(wrong)
