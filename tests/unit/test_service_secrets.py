"""Secrets never reach the store: save and update replace them, say so, and embed and dedup
the replaced text."""

from __future__ import annotations

import pytest

from tests.fakes import HashEmbedder
from tinycontext.domain.errors import InvalidRequestError
from tinycontext.ports.embedder import Vector

TOKEN_A = "ghp_5FWqS0UW13SlKKby36dyp5qaOveMCPvenqsV"
TOKEN_B = "ghp_WRkz9wuO8RVYmhQjzgAh7yEGTle3SORsusMm"
NOTICE_ONE = "1 secret (1 github-token) was replaced by [redacted:<type>] before saving"


class RecordingEmbedder(HashEmbedder):
    """HashEmbedder that remembers every text it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def _one(self, text: str) -> Vector:  # every vector, with or without token rows
        self.seen.append(text)
        return super()._one(text)


def test_save_stores_and_embeds_the_placeholder_and_says_so(make):
    embedder = RecordingEmbedder()
    svc = make(embedder=embedder)
    result = svc.save([
        {"content": f"CI pushes with the token {TOKEN_A}"},
        {"content": "Deploys happen on Fridays."},
    ]).to_dict()
    first, second = result["saved"]
    assert first["notice"].startswith(NOTICE_ONE) and "notice" not in second
    assert TOKEN_A not in str(result)
    stored = svc.detail(first["id"]).to_dict()["content"]
    assert stored == "CI pushes with the token [redacted:github-token]"
    assert first["content_tokens"] == len(stored.split())
    assert embedder.seen and all(TOKEN_A not in text for text in embedder.seen)
    recalled = svc.recall("CI token").to_dict()["memories"]
    assert [m["content"] for m in recalled][:1] == [stored]


def test_dedup_compares_the_redacted_texts(svc):
    svc.save([{"content": f"CI pushes with the token {TOKEN_A}"}])
    again = svc.save([{"content": f"CI pushes with the token {TOKEN_B}"}]).to_dict()
    # Both say the same once the secret is gone: nothing new to keep.
    assert again["saved"] == [] and len(again["skipped_duplicates"]) == 1


def test_update_replaces_secrets_too(svc):
    saved = svc.save([{"content": "The staging database is db.internal"}]).to_dict()["saved"][0]
    updated = svc.update(saved["ref"], "Staging: postgresql://app:Sup3r-S3cret@db/app").to_dict()
    assert updated["notice"].startswith("1 secret (1 password) was replaced")
    assert "Sup3r-S3cret" not in str(updated)
    assert svc.detail(updated["id"]).to_dict()["content"] == (
        "Staging: postgresql://app:[redacted:password]@db/app")


def test_long_content_keeps_both_notices(make):
    svc = make(save_length_notice_tokens=5)
    entry = svc.save([{"content": "one two three four five six password=hunter2"}]).to_dict()
    notice = entry["saved"][0]["notice"]
    assert "consider splitting" in notice and "1 secret (1 password) was replaced" in notice
    assert "hunter2" not in notice


def test_redaction_can_be_switched_off(make):
    svc = make(redact_secrets=False)
    entry = svc.save([{"content": f"token {TOKEN_A}"}]).to_dict()["saved"][0]
    assert "notice" not in entry
    assert svc.detail(entry["id"]).to_dict()["content"] == f"token {TOKEN_A}"
    updated = svc.update(entry["id"], "password=hunter2").to_dict()
    assert "notice" not in updated
    assert svc.detail(updated["id"]).to_dict()["content"] == "password=hunter2"


def test_the_setting_comes_from_the_environment(tmp_path):
    from tinycontext.config.settings import load_config

    def load(**env: str) -> bool:
        return load_config(env, config_file=tmp_path / "none.json").redact_secrets

    assert load() is True
    assert load(TINYCONTEXT_REDACT_SECRETS="false") is False
    assert load(TINYCONTEXT_REDACT_SECRETS="off") is False


@pytest.mark.parametrize("session", [
    TOKEN_A, f"run-{TOKEN_A}", "postgres://app:Sup3r-S3cret@db/app", "password=hunter2",
    "4111 1111 1111 1111",
])
def test_a_session_id_that_looks_like_a_secret_is_refused(make, session):
    svc = make()
    for call in (
        lambda: svc.save([{"content": "Deploys happen on Fridays."}], session_id=session).to_dict(),
        lambda: svc.recall("deploys", session_id=session).to_dict(),
        lambda: svc.recall(session_id=session).to_dict(),
        lambda: svc.list_page(session_id=session).to_dict(),
    ):
        with pytest.raises(InvalidRequestError) as caught:
            call()
        assert "session_id looks like a secret (a " in caught.value.message
        assert session not in caught.value.message
    assert svc.list_page().to_dict()["total_count"] == 0


@pytest.mark.parametrize("session", [
    "project-a", "550e8400-e29b-41d4-a716-446655440000", "chat 2026-07-31", "password-reset-flow",
    "token-budget-work", "pin-4821", "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c", "Secret Santa",
])
def test_ordinary_session_ids_are_kept(make, session):
    svc = make()
    saved = svc.save([{"content": "Deploys happen on Fridays."}], session_id=session).to_dict()
    assert saved["saved"][0]["session_id"] == session
