"""Validated, immutable configuration (SPEC section 5): the engine config's model.

`TinyContextConfig(...)` built in code never reads the environment. Imported through
tinycontext.config, which also offers `load_config()` for server processes (the JSON file
and `TINYCONTEXT_*` layer, tinycontext/config/settings.py); this module never imports that layer, so
the settings can build on it without an import cycle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tinycontext.domain.context import (
    DEFAULT_WINDOW_MINUTES,
    DENSE_CONTEXT_WEIGHT,
    KEYWORD_CONTEXT_WEIGHT,
)
from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.moments import MOMENT_LIFTED
from tinycontext.domain.recall import DATE_CUE_WEIGHT, DENSE_LEAD_WEIGHT

APP_NAME = "tinycontext"
# e5's query marker: the quality preset's default dense_query_prefix (a package model that
# embeds a text starting with it as a query, adapters/embedding/e5_package.py).
QUALITY_QUERY_PREFIX = "query: "
CONFIG_FILE_NAME = "context_config.json"
ENV_PREFIX = "TINYCONTEXT_"


class ConfigError(InvalidRequestError):
    """A configuration value or key is wrong; the message names it."""


def user_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


class TinyContextConfig(BaseModel):
    """Every engine setting with its default; frozen once built."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, hide_input_in_errors=True
    )

    memory_db_path: str = Field(default="", description="SQLite file; default data dir/memories.db")
    models_dir: str = Field(default="", description="Downloaded models; default: data dir/models")
    embedding_model: str = Field(default="balanced", min_length=1)
    embedding_batch_size: int = Field(default=32, ge=1, le=1024)
    recall_top_k: int = Field(default=10, ge=1, le=1000)
    recall_max_tokens: int = Field(default=2000, ge=1)
    profile_max_tokens: int = Field(default=500, ge=0)
    recall_rrf_cutoff: float = Field(default=0.0, ge=0.0, le=1.0)
    recall_dense_weight: float = Field(default=0.5, gt=0.0, le=1.0)
    recall_rrf_k: int = Field(default=60, ge=1)
    recall_access_weight: float = Field(default=0.0, ge=0.0)
    recall_fusion: Literal["score", "rrf"] = "score"
    recall_keyword_weight: float = Field(default=0.4, ge=0.0, le=1.0)
    # The keyword side's weight of a memory's save-time context against its own words.
    recall_keyword_context_weight: float = Field(default=KEYWORD_CONTEXT_WEIGHT, ge=0.0, le=1.0)
    save_context_minutes: int = Field(default=DEFAULT_WINDOW_MINUTES, ge=0, le=10_080)
    # How much of that context's vector a memory's stored vector takes (0: none; a change
    # re-embeds, as the model key says).
    save_context_dense_weight: float = Field(default=DENSE_CONTEXT_WEIGHT, ge=0.0, le=1.0)
    recall_late_interaction: bool = True
    # SQLite past ~430,000 memories: the share of the vectors in scope a dense search probes
    # by IVF cells (None: the store's own default); higher finds more of the exact nearest.
    dense_probe_share: float | None = Field(default=None, gt=0.0, le=1.0)
    # Coverage step after fusion (0 = off): later slots favour other sessions/moments.
    recall_spread_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    recall_spread_minutes: int = Field(default=60, ge=0, le=10_080)
    # Moment prior (0 = off): candidates lose this much times how far their moment's best
    # candidate falls below the best of all, so the sittings the question is about rise.
    recall_moment_weight: float = Field(default=0.0, ge=0.0, le=2.0)
    # How many of each moment's best candidates take its lift (0: all of them).
    recall_moment_lifted: int = Field(default=MOMENT_LIFTED, ge=0, le=1000)
    # Facet coverage (0 = off): after the first slot, candidates from moments not yet chosen
    # earn this much times the share of the question's rarity in words no chosen one holds.
    recall_facet_weight: float = Field(default=0.0, ge=0.0, le=2.0)
    # Pseudo-relevance feedback (0 = off): a second keyword query from the best results' words.
    recall_feedback_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # Feedback in hand (0 = off): the best candidates re-weighed by the share of the question's
    # and the best results' rare words they hold; no second query.
    recall_feedback_inhand_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # Questions about the order of two events or the time between them ("which came first, X
    # or Y"): each event is looked up on its own and its best memory joins the first slots.
    recall_event_pairs: bool = False
    # Score fusion: the clear dense winner's bonus and the named period's (0 turns each off).
    recall_dense_lead_weight: float = Field(default=DENSE_LEAD_WEIGHT, ge=0.0, le=10.0)
    recall_date_cue_weight: float = Field(default=DATE_CUE_WEIGHT, ge=0.0, le=1.0)
    dense_query_prefix: str = ""
    dense_document_prefix: str = ""
    dedup_similarity_threshold: float = Field(default=0.95, gt=0.0, le=1.0)
    dedup_review_similarity_threshold: float = Field(default=0.80, gt=0.0, le=1.0)
    save_length_notice_tokens: int = Field(default=800, ge=1)
    # Hard limit: larger content is refused (memory_too_large); the notice above is the soft one.
    max_memory_tokens: int = Field(default=8000, ge=1, le=1_000_000)
    # Recognisable secrets in saved, updated and imported content become [redacted:<type>].
    redact_secrets: bool = True
    token_encoding: str = Field(default="o200k_base", pattern=r"^(o200k_base|cl100k_base)$")
    # Agent hooks (docs/guides/hooks.md): what one prompt may receive, the cosine similarity a
    # memory needs to be injected, whether explicit "remember that ..." intents are saved, the
    # session id of a project's memories ("" = the project folder's name) and how long the
    # memory service stays up with nothing to do.
    hook_max_tokens: int = Field(default=300, ge=0, le=100_000)
    hook_relevance_floor: float = Field(default=0.40, ge=-1.0, le=1.0)
    hook_capture: bool = True
    hook_session_id: str = Field(default="", max_length=200)
    service_idle_minutes: float = Field(default=30.0, gt=0.0, le=10_080.0)
    store_url: str = Field(
        default="",
        description="empty: the SQLite file at memory_db_path; postgresql://...: PostgreSQL",
        repr=False,  # may carry a password
    )

    # Encryption at rest (docs/guides/encryption.md): a key file of 32+ random bytes, or the key
    # itself (containers, secrets managers); set at most one. Needs the `encryption` extra.
    encryption_key_file: str = Field(default="", description="owner-only key file; encrypts "
                                     "the SQLite store (tinycontext keygen)")
    encryption_key: str = Field(default="", repr=False, description="the key itself (32+ "
                                "bytes); prefer encryption_key_file")

    @field_validator("store_url")
    @classmethod
    def _check_store_url(cls, value: str) -> str:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("store_url must be empty (SQLite) or a postgresql:// URL")
        return value

    @field_validator("memory_db_path", "models_dir", "encryption_key_file")
    @classmethod
    def _expand(cls, value: str) -> str:
        return str(Path(value).expanduser()) if value else value

    @model_validator(mode="before")
    @classmethod
    def _preset_prefix(cls, data: Any) -> Any:
        # The quality preset's package model (e5) embeds queries as "query: ..."; an explicit
        # dense_query_prefix still wins.
        if (isinstance(data, dict) and str(data.get("embedding_model", "")).strip() == "quality"
                and "dense_query_prefix" not in data):
            return {**data, "dense_query_prefix": QUALITY_QUERY_PREFIX}
        return data

    @model_validator(mode="after")
    def _fill_paths(self) -> TinyContextConfig:
        if self.dedup_review_similarity_threshold > self.dedup_similarity_threshold:
            raise ValueError(
                "dedup_review_similarity_threshold must not exceed dedup_similarity_threshold"
            )
        # Frozen model: defaults that depend on the platform are filled in once, here.
        if not self.memory_db_path:
            object.__setattr__(self, "memory_db_path", str(user_data_dir() / "memories.db"))
        if not self.models_dir:
            object.__setattr__(self, "models_dir", str(user_data_dir() / "models"))
        return self


def describe_error(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"]) or "config"
        if item["type"] == "extra_forbidden":
            parts.append(f"unknown key {key!r}")
        else:
            parts.append(f"{key}: {item['msg']}")
    return "; ".join(parts)


def build_config(values: dict[str, Any], source: str = "configuration") -> TinyContextConfig:
    """Validate a mapping into a config; errors name the bad key and where it came from."""
    try:
        return TinyContextConfig(**values)
    except ValidationError as exc:
        raise ConfigError(f"Invalid {source}: {describe_error(exc)}.") from exc


def read_config_file(path: Path) -> dict[str, Any]:
    """Keys of a JSON config file; a relative memory_db_path/models_dir resolves against it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"{path} cannot be read ({exc.strerror}): make it readable by this user, or point "
            "TINYCONTEXT_CONFIG_FILE at another file."
        ) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8 JSON."
        ) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON (line {exc.lineno}): fix or remove it."
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object of settings.")
    unknown = sorted(set(data) - set(TinyContextConfig.model_fields))
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r}; the known keys are listed in "
            "docs/reference/configuration.md."
        )
    for key in ("memory_db_path", "models_dir", "encryption_key_file"):
        value = data.get(key)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            data[key] = str((path.parent / value).resolve())
    return data
