"""The SPEC's Python API snippet runs exactly as written, in a fresh process, no server extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SNIPPET = '''
from pathlib import Path
from tinycontext import MemoryInput, TinyContextConfig, recall_memories, save_memories

config = TinyContextConfig(memory_db_path=str(Path("agent-memory.db").resolve()),
                           recall_max_tokens=800)
save_memories([MemoryInput(content="The project uses SQLite for local state.")],
              session_id="project-a", config=config)
result = recall_memories("How does the project store state?", session_id="project-a", config=config)
for memory in result["memories"]:
    print(memory["content"])
recent = recall_memories(session_id="project-a", config=config)
'''


def test_spec_snippet_runs_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TINYCONTEXT_", "XDG_"))}
    env["HOME"] = str(tmp_path / "home")  # the default data dir must not be touched
    # Block the server extra so the snippet provably needs none of it.
    blocker = tmp_path / "block"
    blocker.mkdir()
    for name in ("mcp", "fastapi", "uvicorn"):
        (blocker / f"{name}.py").write_text("raise ImportError('server extra blocked')\n")
    env["PYTHONPATH"] = str(blocker)
    out = subprocess.run(
        [sys.executable, "-c", SNIPPET], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines() == ["The project uses SQLite for local state."]
    assert (tmp_path / "agent-memory.db").exists()
    # Nothing of ours under the per-user data dir (onnxruntime may keep its own cache there);
    # the only file of ours outside the given paths is the rebuildable model in the cache dir.
    home = tmp_path / "home"
    ours = [p for p in home.rglob("*") if "tinycontext" in p.parts and p.is_file()]
    assert [p.relative_to(home).parts[:3] for p in ours] == [
        (".cache", "tinycontext", "prepared-models")
    ]
