"""Configuration: defaults, immutability, file + environment layering, errors naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tinycontext.config.engine import ConfigError, TinyContextConfig
from tinycontext.config.settings import load_config


def test_defaults_match_the_spec() -> None:
    c = TinyContextConfig()
    assert (c.embedding_model, c.embedding_batch_size, c.recall_top_k) == ("balanced", 32, 10)
    assert (c.recall_max_tokens, c.profile_max_tokens, c.recall_rrf_cutoff) == (2000, 500, 0.0)
    assert (c.recall_dense_weight, c.recall_rrf_k, c.recall_access_weight) == (0.5, 60, 0.0)
    assert (c.dedup_similarity_threshold, c.dedup_review_similarity_threshold) == (0.95, 0.80)
    assert c.save_length_notice_tokens == 800 and c.token_encoding == "o200k_base"
    assert c.memory_db_path.endswith("memories.db") and c.models_dir.endswith("models")


def test_programmatic_config_ignores_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINYCONTEXT_RECALL_TOP_K", "3")
    assert TinyContextConfig().recall_top_k == 10


def test_config_is_immutable_and_hashable() -> None:
    c = TinyContextConfig(recall_top_k=4)
    with pytest.raises(ValidationError):
        c.recall_top_k = 5  # type: ignore[misc]
    assert hash(c) == hash(TinyContextConfig(recall_top_k=4, memory_db_path=c.memory_db_path))


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"recall_top_k": 0}, "recall_top_k"),
        ({"recall_dense_weight": 0.0}, "recall_dense_weight"),
        ({"recall_dense_weight": 1.5}, "recall_dense_weight"),
        ({"token_encoding": "gpt2"}, "token_encoding"),
        ({"dedup_review_similarity_threshold": 0.99}, "dedup_review_similarity_threshold"),
    ],
)
def test_bad_values_are_rejected(values: dict[str, object], named: str) -> None:
    with pytest.raises(ValidationError) as err:
        TinyContextConfig(**values)  # type: ignore[arg-type]
    assert named in str(err.value)


def test_file_then_environment(tmp_path: Path) -> None:
    file = tmp_path / "context_config.json"
    file.write_text(json.dumps({"memory_db_path": "data/m.db", "recall_top_k": 7,
                                "recall_max_tokens": 900}))
    env = {"TINYCONTEXT_RECALL_TOP_K": "12", "TINYCONTEXT_PORT": "9000", "HOME": "/x"}
    c = load_config(env, file)
    assert c.recall_top_k == 12 and c.recall_max_tokens == 900
    assert c.memory_db_path == str(tmp_path / "data" / "m.db")


def test_config_file_named_by_environment(tmp_path: Path) -> None:
    file = tmp_path / "custom.json"
    file.write_text(json.dumps({"profile_max_tokens": 77}))
    c = load_config({"TINYCONTEXT_CONFIG_FILE": str(file)})
    assert c.profile_max_tokens == 77


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    assert load_config({}, tmp_path / "absent.json").recall_top_k == 10


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"recall_topk": 3}', "recall_topk"),
        ("[1, 2]", "JSON object"),
        ("{not json", "not valid JSON"),
        ('{"recall_top_k": "many"}', "recall_top_k"),
    ],
)
def test_file_errors_name_the_problem(tmp_path: Path, content: str, message: str) -> None:
    file = tmp_path / "c.json"
    file.write_text(content)
    with pytest.raises(ConfigError) as err:
        load_config({}, file)
    assert message in str(err.value) and err.value.code == "invalid_request"


def test_unknown_environment_name_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TINYCONTEXT_RECAL_TOP_K"):
        load_config({"TINYCONTEXT_RECAL_TOP_K": "3"}, tmp_path / "none.json")
    with pytest.raises(ConfigError, match="recall_max_tokens"):
        load_config({"TINYCONTEXT_RECALL_MAX_TOKENS": "-5"}, tmp_path / "none.json")
