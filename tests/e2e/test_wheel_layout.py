"""Installed, only the `tinycontext` namespace exists: build the wheel, install it in a fresh
venv, import every module from it, and check no top-level domain/ports/adapters appeared."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_installs_only_the_tinycontext_namespace(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(dist), str(REPO)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    # The README's install prints whatever the build warns: data folders (templates, static,
    # the tokenizer) must not read as undeclared packages to setuptools.
    assert "absent from the `packages` configuration" not in built.stderr + built.stdout
    wheel = next(dist.glob("tinysuite_context-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"tinycontext"}
    assert "tinycontext/adapters/embedding/data/minilm-tokenizer.json" in names
    assert "tinycontext/adapters/mcp/handshake.json" in names  # the stdio front's answers
    assert "tinycontext/domain/recall.py" in names and "tinycontext/ports/store.py" in names
    # Every module of the checkout is in the wheel (a package missing from pyproject's list
    # would be left out silently).
    folders = {"tinycontext": "tinycontext", "domain": "tinycontext/domain",
               "ports": "tinycontext/ports", "adapters": "tinycontext/adapters"}
    checkout = {
        f"{installed}/{path.relative_to(REPO / folder).as_posix()}"
        for folder, installed in folders.items() for path in (REPO / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert checkout - set(names) == set()

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    with zipfile.ZipFile(wheel) as archive:  # a wheel install is an unzip into purelib
        archive.extractall(target)
    installed = {p.name for p in Path(target).iterdir()}
    assert not installed & {"domain", "ports", "adapters"}

    modules = sorted(
        n[:-3].replace("/", ".").removesuffix(".__init__")
        for n in names if n.endswith(".py") and not n.endswith("__main__.py")  # runs the CLI
    )
    check = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    module = importlib.import_module(name)\n"
        f"    assert module.__file__.startswith({target!r}), (name, module.__file__)\n"
        "print('ok', len(sys.modules))\n"
    )
    env = dict(os.environ)
    # Dependencies come from the test venv; PYTHONPATH does not run its .pth files, so the
    # editable install of the checkout cannot shadow the wheel.
    env["PYTHONPATH"] = os.pathsep.join(site.getsitepackages())
    out = subprocess.run(
        [str(python), "-c", check], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")


def test_a_checkout_imports_every_package_after_the_readme_install() -> None:
    # Run from the checkout's root, where its tinycontext/ folder comes first on sys.path: the
    # editable install still maps domain/, ports/ and adapters/ under it.
    code = ("import tinycontext.domain.memory, tinycontext.ports.store, "
            "tinycontext.adapters.sqlite.store, tinycontext.app.service, "
            "tinycontext.entry.cli; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
