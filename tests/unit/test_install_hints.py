"""An extra that is missing is named with the command that installs it into this very
environment: from a checkout, `pip install -e '<its folder>[extra]'`, which a user can paste
(a placeholder such as '<this checkout>' is one more thing to work out at the worst moment)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tinycontext import version
from tinycontext.adapters.sqlite import driver

REPO = Path(__file__).resolve().parents[2]


def test_the_install_command_names_this_checkout() -> None:
    assert version.install_command("encryption") == f"pip install -e '{REPO}[encryption]'"


def test_asking_for_encryption_without_the_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sqlcipher3", None)  # import fails as if not installed
    with pytest.raises(driver.EncryptionUnavailableError) as caught:
        driver._import_cipher()
    message = str(caught.value)
    assert f"pip install -e '{REPO}[encryption]'" in message and "<" not in message
    assert "TINYCONTEXT_ENCRYPTION_KEY_FILE" in message  # or how to go without
