"""tinycontext.testing.secrets: the scanner a save runs, asked alone, says what it would store."""

from __future__ import annotations

from tinycontext import TinyContextConfig, build_service
from tinycontext.testing import HashEmbedder, InMemoryStore, WordTokenizer
from tinycontext.testing.secrets import redact_secrets

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5"


def test_what_the_scanner_replaces_is_what_a_save_stores() -> None:
    text = f"Deploy with {TOKEN} on Fridays."
    found = redact_secrets(text)
    assert TOKEN not in found.text and found.kinds and "[redacted:" in found.text
    service = build_service(TinyContextConfig(), store=InMemoryStore(), embedder=HashEmbedder(),
                            tokenizer=WordTokenizer(), background=False)
    saved = service.save([{"content": text}]).to_dict()["saved"][0]
    assert service.detail(saved["id"]).to_dict()["content"] == found.text
    service.close()


def test_a_text_without_secrets_comes_back_as_it_was() -> None:
    found = redact_secrets("I forgot my password again")
    assert found.text == "I forgot my password again" and found.kinds == ()
