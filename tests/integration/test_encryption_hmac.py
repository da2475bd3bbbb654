"""Page HMACs of encrypted stores: new stores and converted copies use SHA-256, a store
written with SQLCipher's earlier default (SHA-512) still opens, reads, takes writes, checks
and converts; a wrong key is store_locked whichever HMAC the file uses.

These need this process's SQLite to be SQLCipher (TINYCONTEXT_TEST_SQLCIPHER=1, .ci/run's
encrypted pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.store_support import mem, mid, new
from tests.encryption_support import require_sqlcipher_process
from tinycontext.domain.errors import StoreLockedError

KEY = bytes(range(32))
OTHER = bytes(range(1, 33))


def _opens_with(path: Path, key: bytes, hmac: str) -> bool:
    """Whether the file's pages check out under `hmac` (a raw SQLCipher connection)."""
    from tinycontext.adapters.sqlite import cipher
    from tinycontext.adapters.sqlite.driver import sqlite_module

    sqlite = sqlite_module()
    conn = sqlite.connect(str(path))
    try:
        cipher.apply_key(conn, key, hmac)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except sqlite.DatabaseError:
        return False
    finally:
        conn.close()


def _earlier_store(path: Path) -> None:
    """A store as the earlier release wrote it: SHA-512 page HMACs."""
    from tinycontext.adapters.sqlite import cipher
    from tinycontext.adapters.sqlite.store import SqliteStore

    real = cipher.HMAC
    cipher.HMAC = cipher.HMAC_EARLIER
    try:
        store = SqliteStore(path, key=KEY)
        store.add([new(mem(1, "tea in Berlin")), new(mem(2, "coffee in Paris"))])
        store.close()
    finally:
        cipher.HMAC = real


@pytest.fixture(autouse=True)
def _sqlcipher() -> None:
    require_sqlcipher_process()


def test_a_new_store_uses_sha256(tmp_path: Path) -> None:
    from tinycontext.adapters.sqlite import cipher
    from tinycontext.adapters.sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "m.db", key=KEY)
    store.add([new(mem(1, "tea in Berlin"))])
    store.close()
    assert _opens_with(tmp_path / "m.db", KEY, cipher.HMAC)
    assert not _opens_with(tmp_path / "m.db", KEY, cipher.HMAC_EARLIER)


def test_an_earlier_store_opens_reads_and_takes_writes(tmp_path: Path) -> None:
    from tinycontext.adapters.sqlite import cipher
    from tinycontext.adapters.sqlite.store import SqliteStore

    path = tmp_path / "m.db"
    _earlier_store(path)
    assert _opens_with(path, KEY, cipher.HMAC_EARLIER)
    assert not _opens_with(path, KEY, cipher.HMAC)
    store = SqliteStore(path, key=KEY)
    assert store.find(mid(1), False)[0].content == "tea in Berlin"
    store.add([new(mem(3, "a walk"))])
    store.close()
    assert _opens_with(path, KEY, cipher.HMAC_EARLIER)  # still the earlier format
    store = SqliteStore(path, key=OTHER)
    with pytest.raises(StoreLockedError) as caught:
        store.find(mid(1), False)
    store.close()
    assert "the configured key does not open it" in caught.value.message


def test_an_earlier_store_checks_and_rekeys_to_sha256(tmp_path: Path) -> None:
    from tinycontext.adapters.sqlite import cipher
    from tinycontext.adapters.sqlite.convert import check_pages, convert
    from tinycontext.adapters.sqlite.store import SqliteStore

    path = tmp_path / "m.db"
    _earlier_store(path)
    assert check_pages(path, KEY) == []
    assert check_pages(path, OTHER) == ["the configured key does not open it"]
    convert(path, KEY, OTHER)
    assert _opens_with(path, OTHER, cipher.HMAC)
    store = SqliteStore(path, key=OTHER)
    assert [m.id for m in store.find(mid(2), False)] == [mid(2)]
    store.close()
