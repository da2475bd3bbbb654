"""Only the settings read the process environment; everything else is handed what it needs.

One place knows which variables exist (unknown TINYCONTEXT_* names are refused there) and a
library user's process environment never changes what a service built in code does.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("tinycontext", "domain", "ports", "adapters")
ALLOWED = {
    # pydantic-settings sources over os.environ: the one reader (the bootstrap asks it).
    "tinycontext/config/settings.py",
    # Writes ORT_DISABLE_TELEMETRY (unless set) right before onnxruntime's lazy first import:
    # onnxruntime reads it only from the process environment, and an embedder built directly
    # by a library user, with no bootstrap, must get the default too.
    "tinycontext/native.py",
    # The per-prompt hook path imports no settings layer (it must start in milliseconds): it
    # keys the memory service by the TINYCONTEXT_* variables and hands them to the service,
    # whose settings read them as every server does.
    "tinycontext/hooks/command.py",
    # Asks whether OMP_NUM_THREADS is set, the OpenMP runtime's own variable, which the
    # quality model's engine reads from the process: set, the user's choice is left to
    # OpenMP; unset, the adapter pins one thread. Not a TinyContext setting to pass in.
    "adapters/embedding/e5_package.py",
}
NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def environment_uses(source: str) -> list[int]:
    """Lines that touch the process environment: os.environ/os.getenv/..., or importing them."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        read = (isinstance(node, ast.Attribute) and node.attr in NAMES
                and isinstance(node.value, ast.Name) and node.value.id == "os")
        imported = (isinstance(node, ast.ImportFrom) and node.module in ("os", "posix")
                    and any(alias.name in NAMES for alias in node.names))
        if read or imported:
            lines.append(node.lineno)  # type: ignore[attr-defined]
    return sorted(lines)


def test_the_finder_sees_every_way_of_reading_it() -> None:
    code = ("import os\nfrom os import getenv\nx = os.environ.get('A')\ny = os.getenv('B')\n"
            "s = 'os.environ in a string'  # os.environ in a comment\n")
    assert environment_uses(code) == [2, 3, 4]


def test_only_the_settings_read_the_environment() -> None:
    found = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in ALLOWED:
                continue
            found += [f"{relative}:{line}" for line in environment_uses(path.read_text("utf-8"))]
    assert found == [], "read the environment in tinycontext/config/settings.py, pass the value in"


def test_the_allowed_modules_still_need_their_exception() -> None:
    for relative in ALLOWED:
        assert environment_uses((ROOT / relative).read_text("utf-8")), relative
