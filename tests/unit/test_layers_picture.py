"""docs/img/layers.svg (the picture in docs/reference/architecture.md) is drawn by
docs/layers.py from the layers contract and the real import graph: the committed picture must
be the code's, and an upward import shows as one."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_layers", ROOT / "docs" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_picture_is_the_codes() -> None:
    assert _layers().main(["--check"]) == 0, "run: python docs/layers.py"


def test_the_picture_follows_the_contract_and_the_graph() -> None:
    layers = _layers()
    contract, exceptions = layers.contract_layers(ROOT / "pyproject.toml")
    assert contract[0][0] == "tinycontext.entry" and ["tinycontext.domain"] in contract
    graph = layers.import_graph()
    assert "tinycontext.domain.recall" in graph["tinycontext.app.recalling"]  # the real graph
    assert any(m.startswith("tinycontext.adapters.sqlite.") for m in graph)
    mapping = {"tinycontext": "tinycontext"}
    down = layers.render([["a"], ["b"]], [], {"a.x": {"b.y"}, "b.y": set()}, mapping)
    assert "#d9534f" not in down and "no upward imports" in down
    up = layers.render([["a"], ["b"]], ["b.y -> a.x"], {"a.x": set(), "b.y": {"a.x"}}, mapping)
    assert "#d9534f" in up and "b.y -&gt; a.x" in up


def test_check_fails_on_a_stale_picture(tmp_path: Path) -> None:
    layers = _layers()
    out = tmp_path / "layers.svg"
    out.write_text("<svg/>\n")
    assert layers.main(["--check", "--out", str(out)]) == 1
    assert layers.main(["--out", str(out)]) == 0
    assert layers.main(["--check", "--out", str(out)]) == 0
