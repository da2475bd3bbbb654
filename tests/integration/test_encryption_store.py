"""Encrypted SQLite stores in process: keys that do and do not open a store, key files,
hosted users' keys kept apart, and no planted memory readable in any file left on disk.

These need this process's SQLite to be SQLCipher (TINYCONTEXT_TEST_SQLCIPHER=1, .ci/run's
encrypted pass); the key-file checks need nothing and run in every pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.encryption_support import found_in, needs_extra, planted, require_sqlcipher_process
from tinycontext import TinyContextConfig, build_service
from tinycontext.config.keys import (
    EncryptionKeyError,
    key_material,
    read_key_file,
    store_key,
    tenant_store_key,
    write_key_file,
)
from tinycontext.domain.errors import StoreLockedError
from tinycontext.testing import HashEmbedder, WordTokenizer

KEY = bytes(range(32))
OTHER = bytes(range(1, 33))


def _store(path: Path, key: bytes | None):  # noqa: ANN202 - a SqliteStore
    from tinycontext.adapters.sqlite.store import SqliteStore

    return SqliteStore(path, key=key)


def _service(path: Path, key: bytes | None):  # noqa: ANN202 - a MemoryService
    config = TinyContextConfig(memory_db_path=str(path), recall_late_interaction=False)
    return build_service(config, store=_store(path, key), embedder=HashEmbedder(),
                         tokenizer=WordTokenizer(), background=False)


def _fill(path: Path, key: bytes | None, count: int = 20) -> None:
    service = _service(path, key)
    try:
        service.save([{"content": f"remember {planted(i)[0]}"} for i in range(count)],
                     session_id="s")
    finally:
        service.close()


def _locked(path: Path, key: bytes | None) -> StoreLockedError:
    service = _service(path, key)
    try:
        with pytest.raises(StoreLockedError) as caught:
            service.list_page()
    finally:
        service.close()
    return caught.value


# -- key files (no SQLCipher needed) ------------------------------------------------------------
def test_keygen_file_is_owner_only_random_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "k"
    write_key_file(path)
    assert path.stat().st_mode & 0o777 == 0o600
    text = path.read_text()
    assert len(text) == 65 and int(text, 16) >= 0
    with pytest.raises(FileExistsError):
        write_key_file(path)
    assert path.read_text() == text
    write_key_file(tmp_path / "k2")
    assert (tmp_path / "k2").read_text() != text
    assert read_key_file(path) == text.strip().encode()


def test_key_file_readable_by_others_short_or_missing_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k"
    write_key_file(path)
    os.chmod(path, 0o640)
    with pytest.raises(EncryptionKeyError, match="chmod 600"):
        read_key_file(path)
    os.chmod(path, 0o604)
    with pytest.raises(EncryptionKeyError, match="other users"):
        read_key_file(path)
    short = tmp_path / "short"
    short.write_bytes(b"x" * 31 + b"\n")
    os.chmod(short, 0o600)
    with pytest.raises(EncryptionKeyError, match="fewer than 32"):
        read_key_file(short)
    with pytest.raises(EncryptionKeyError, match="does not exist"):
        read_key_file(tmp_path / "absent")
    with pytest.raises(EncryptionKeyError, match="only one"):
        key_material(TinyContextConfig(encryption_key_file=str(path), encryption_key="y" * 40))
    with pytest.raises(EncryptionKeyError, match="shorter than 32"):
        key_material(TinyContextConfig(encryption_key="y" * 31))


def test_the_key_never_shows_in_the_config_repr(tmp_path: Path) -> None:
    secret = "s3cr3t-" + "k" * 40
    config = TinyContextConfig(encryption_key=secret)
    assert secret not in repr(config) and secret not in str(config)


def test_hosted_users_keys_are_apart_and_bound_to_their_tenant_key() -> None:
    material = b"m" * 40
    a, b = tenant_store_key(material, "a" * 64), tenant_store_key(material, "b" * 64)
    assert len({a, b, store_key(material)}) == 3 and len(a) == 32
    assert tenant_store_key(material, "a" * 64) == a  # stable across restarts
    assert tenant_store_key(b"n" * 40, "a" * 64) != a  # the server's key matters too


# -- stores (SQLCipher in this process) ---------------------------------------------------------
@needs_extra
def test_wrong_key_no_key_and_key_on_plain_store_are_store_locked(tmp_path: Path) -> None:
    require_sqlcipher_process()
    encrypted, plain = tmp_path / "e.db", tmp_path / "p.db"
    _fill(encrypted, KEY)
    _fill(plain, None)
    wrong = _locked(encrypted, OTHER)
    missing = _locked(encrypted, None)
    for_plain = _locked(plain, KEY)
    assert "the configured key does not open it" in wrong.message
    assert "encrypted and no key is configured" in missing.message
    assert "not encrypted" in for_plain.message and "tinycontext encrypt" in for_plain.message
    for error in (wrong, missing, for_plain):
        assert error.code == "store_locked"
        assert "not a database" not in error.message
        assert KEY.hex() not in error.message and OTHER.hex() not in error.message
    # Nothing was changed by the refused opens: the right key still reads every memory.
    service = _service(encrypted, KEY)
    assert service.list_page(limit=1).to_dict()["total_count"] == 20
    service.close()
    assert (encrypted.read_bytes()[:16] != b"SQLite format 3\x00")


@needs_extra
def test_hosted_user_store_does_not_open_with_another_users_key(tmp_path: Path) -> None:
    require_sqlcipher_process()
    material = b"server-key-material-" * 3
    alice, bob = "a" * 64, "b" * 64
    _fill(tmp_path / f"{alice}.db", tenant_store_key(material, alice))
    _fill(tmp_path / f"{bob}.db", tenant_store_key(material, bob))
    _locked(tmp_path / f"{alice}.db", tenant_store_key(material, bob))
    _locked(tmp_path / f"{alice}.db", store_key(material))
    service = _service(tmp_path / f"{bob}.db", tenant_store_key(material, bob))
    assert service.list_page(limit=1).to_dict()["total_count"] == 20
    service.close()


@needs_extra
def test_hosted_serving_opens_each_user_with_a_derived_key(tmp_path: Path) -> None:
    require_sqlcipher_process()
    from tinycontext.entry.container import process_parts
    from tinycontext.hosted.settings import load_server_settings
    from tinycontext.hosted.stores import open_tenants

    store_dir = tmp_path / "tenants"
    store_dir.mkdir(mode=0o700)
    env = {"TINYCONTEXT_TENANCY": "proxy-header",
           "TINYCONTEXT_TENANT_SECRET": "Xq7vR2mK9pL4sT8wZ1cF6hJ3nB5dG0yA-secret",
           "TINYCONTEXT_TENANT_STORE_DIR": str(store_dir),
           "TINYCONTEXT_TRUSTED_PROXY_CIDRS": "127.0.0.1/32",
           "TINYCONTEXT_TRUSTED_PROXY_TOKEN": "Lm4Qz8Wn2Rv6Tx0Yb3Kc7Hd1Jf5Gs9Pa-token"}
    settings = load_server_settings(env, transport="http")
    material = b"hosted-server-key-material-1234567890"
    config = TinyContextConfig(encryption_key=material.decode(), recall_late_interaction=False)
    parts = process_parts(config, embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                          background=False)
    stores = open_tenants(config, settings, parts)
    try:
        for user in ("alice", "bob"):
            key, service = stores.acquire(user)
            try:
                service.save([{"content": f"{user} likes {planted(1)[0]}"}], session_id="s")
            finally:
                stores.release(key, service)
        alice, bob = stores.path_for("alice"), stores.path_for("bob")
    finally:
        stores.close()
    assert alice.read_bytes()[:16] != b"SQLite format 3\x00"
    assert found_in(store_dir, 2) == {}
    # Each file opens with its own derived key only.
    _locked(alice, tenant_store_key(material, bob.stem))
    service = _service(alice, tenant_store_key(material, alice.stem))
    assert service.list_page().to_dict()["memories"][0]["content"].startswith("alice")
    service.close()


@needs_extra
def test_no_planted_content_tag_or_session_id_in_any_file_on_disk(tmp_path: Path) -> None:
    require_sqlcipher_process()
    folder = tmp_path / "store"
    path = folder / "memories.db"
    service = _service(path, KEY)
    try:
        for i in range(1000):  # each memory in a session of its own: 1,000 distinct ids
            content, tag, session = planted(i)
            service.save([{"content": f"fact {content}", "tags": [tag]}], session_id=session)
        assert service.list_page(limit=1).to_dict()["total_count"] == 1000
        assert all(service.store.session_exists(planted(i)[2]) for i in range(1000))
        for i in (0, 5, 999):
            content, _, session = planted(i)
            recalled = service.recall(content, session_id=session).to_dict()
            assert content in recalled["memories"][0]["content"]
        tagged = service.list_page(tags=[planted(7)[1]]).to_dict()
        assert [m["content"] for m in tagged["memories"]] == [f"fact {planted(7)[0]}"]
        # While open: the store, its -wal and -shm hold every write so far.
        assert {p.name for p in folder.iterdir()} >= {"memories.db", "memories.db-wal"}
        assert found_in(folder, 1000) == {}
    finally:
        service.close()
    assert found_in(folder, 1000) == {}
    # Control: the same scan finds all three kinds of marker in a plain store.
    plain = tmp_path / "plain" / "memories.db"
    service = _service(plain, None)
    try:
        content, tag, session = planted(0)
        service.save([{"content": f"fact {content}", "tags": [tag]}], session_id=session)
    finally:
        service.close()
    found = {marker for hits in found_in(plain.parent, 1).values() for marker in hits}
    assert found == set(planted(0)), found


def test_an_overwritten_plain_header_is_damaged_not_encrypted(tmp_path: Path) -> None:
    from tinycontext.adapters.sqlite.cipher import file_state

    plain = tmp_path / "p.db"
    _fill_without_driver = b"SQLite format 3\x00" + bytes(84) + b"CREATE TABLE memories" * 40
    plain.write_bytes(_fill_without_driver)
    assert file_state(plain) == "plain"
    plain.write_bytes(b"\x00not sqlite any more" * 5 + _fill_without_driver[100:])
    assert file_state(plain) == "damaged"
    plain.write_bytes(bytes(range(256)) * 16)
    assert file_state(plain) == "damaged"
    plain.write_bytes(os.urandom(4096))
    assert file_state(plain) == "encrypted"
    plain.write_bytes(b"")
    assert file_state(plain) == "empty" and file_state(tmp_path / "none") == "missing"
