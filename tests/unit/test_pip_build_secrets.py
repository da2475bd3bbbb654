"""deploy/pip-build-secrets.py: this machine's pip settings as build secrets, keeping only
what a build can use and pip's precedence (PIP_* variables over [install] over [global])."""

from __future__ import annotations

import importlib.util
import stat
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "pip-build-secrets.py"

LISTED = """\
:env:.cert='{cert}'
:env:.default-timeout='180'
:env:.find-links='/opt/wheels'
global.constraint='/etc/xdg/pip/constraints.txt'
global.default-timeout='15'
global.extra-index-url='file:///opt/pypi/simple https://mirror.example/extra'
global.index-url='https://global.example/simple'
install.index-url='https://install.example/simple'
global.trusted-host='mirror.example'
"""


@pytest.fixture()
def module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pip_build_secrets", SCRIPT)
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def fake_python(tmp_path: Path, listed: str) -> Path:
    """A stand-in interpreter whose `-m pip config list` prints `listed`."""
    (tmp_path / "listed.txt").write_text(listed)
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\ncat {tmp_path / 'listed.txt'}\n")
    exe.chmod(0o755)
    return exe


def test_portable_settings_with_pips_precedence(module: ModuleType, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "proxy-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("PYTHON", str(fake_python(tmp_path, LISTED.format(cert=bundle))))
    out = tmp_path / "secrets"
    assert module.main(["pip-build-secrets.py", str(out)]) == 0
    conf = (out / "pip.conf").read_text().splitlines()
    assert conf == ["[global]", "index-url = https://install.example/simple",
                    "extra-index-url = https://mirror.example/extra",
                    "trusted-host = mirror.example", "default-timeout = 180"]
    assert (out / "pip-cert").read_text() == bundle.read_text()
    for name in ("pip.conf", "pip-cert"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600
    assert capsys.readouterr().out.splitlines() == [
        f"--secret=id=pip.conf,src={out / 'pip.conf'}",
        f"--secret=id=pip-cert,src={out / 'pip-cert'}"]


def test_nothing_when_pip_runs_on_defaults(module: ModuleType, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PYTHON", str(fake_python(tmp_path, "global.find-links='/opt/w'\n")))
    monkeypatch.delenv("PIP_CERT", raising=False)
    assert module.main(["pip-build-secrets.py", str(tmp_path / "s")]) == 0
    assert capsys.readouterr().out == "" and not list((tmp_path / "s").iterdir())


def test_usage(module: ModuleType) -> None:
    assert module.main(["pip-build-secrets.py"]) == 2
