"""Suite-wide: model files the tests prepare go to a throwaway cache, not the user's."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # The integer rewrite of the default model is cached under the per-user cache dir
    # (XDG_CACHE_HOME); one throwaway dir per run, shared by every test and subprocess.
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


def pytest_configure(config: pytest.Config) -> None:
    # One SQLite build per process: with TINYCONTEXT_TEST_SQLCIPHER=1 (.ci/run's encrypted
    # pass) SQLCipher is chosen before any store opens, so the contract suites also run on
    # encrypted stores (tests/contract/conftest.py) and the encryption tests run in process.
    if os.environ.get("TINYCONTEXT_TEST_SQLCIPHER") == "1":
        from tinycontext.adapters.sqlite.driver import use_sqlcipher

        use_sqlcipher()
