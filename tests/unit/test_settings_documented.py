"""Every setting of the engine config has a row in the settings reference
(docs/reference/configuration.md), the page every "unknown key" and "bad value" message
points to: a key missing there is one a user cannot look up."""

from __future__ import annotations

import re
from pathlib import Path

from tinycontext.config.engine import TinyContextConfig

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "configuration.md"


def test_every_setting_has_a_row_in_the_reference() -> None:
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines()
            if line.startswith("| `")]
    named = {key for row in rows for key in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert set(TinyContextConfig.model_fields) - named == set()
