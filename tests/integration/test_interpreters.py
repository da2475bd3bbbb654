"""The store works under this interpreter and under Debian's /usr/bin/python3.11, each with
the SQLite build it can load sqlite-vec into."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
import json, sys
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.adapters.sqlite import driver as sqlite_driver
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service
path = sys.argv[1]
store = SqliteStore(path)
svc = build_service(TinyContextConfig(memory_db_path=path), store=store, embedder=HashEmbedder(),
                    tokenizer=WordTokenizer(), clock=FixedClock(), background=False)
svc.save([{"content": "Café Zürich serves 東京 ramen 🍜 on Fridays"}])
hit = svc.recall("東京", top_k=3).to_dict()["memories"]
name = sqlite_driver.driver_name()
other = "sqlean" if name == "sqlite3" else "sqlite3"
print(json.dumps({"driver": name, "hits": len(hit), "other_loaded": other in sys.modules,
                  "vec": store.diagnostics()["sqlite_vec_version"]}))
"""


def _run(python: str, tmp_path: Path, extra_path: list[str]) -> dict[str, object]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, str(REPO)])
    out = subprocess.run(
        [python, "-c", SCRIPT, str(tmp_path / f"{Path(python).name}.db")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_current_interpreter(tmp_path: Path) -> None:
    result = _run(sys.executable, tmp_path, [])
    assert result["hits"] == 1 and str(result["vec"]).startswith("v")
    assert result["other_loaded"] is False


@pytest.mark.skipif(not Path("/usr/bin/python3.11").exists(), reason="no Debian python3.11 here")
def test_debian_python_uses_its_own_sqlite(tmp_path: Path) -> None:
    # The venv's packages are binary-compatible (same CPython 3.11 ABI); PYTHONPATH entries do
    # not run .pth files, so tinycontext comes from the repo via the source layout shim below.
    shim = tmp_path / "shim"
    (shim / "tinycontext").mkdir(parents=True)
    for name in ("domain", "ports", "adapters"):
        (shim / "tinycontext" / name).symlink_to(REPO / name)
    for item in (REPO / "tinycontext").iterdir():
        if item.name != "__pycache__":
            (shim / "tinycontext" / item.name).symlink_to(item)
    result = _run("/usr/bin/python3.11", tmp_path, [str(shim), *site.getsitepackages()])
    assert result["driver"] == "sqlite3"
    assert result["hits"] == 1 and result["other_loaded"] is False
