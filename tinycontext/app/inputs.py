"""Input types both transports validate: REST request bodies and MCP tool arguments.

Types are checked here (a wrong type or a missing field is refused by the transport); values
are checked by the engine, so every transport gets the same error code for a blank content or
a top_k below 1. The JSON schema still states those value rules (taken from the domain's own
constants) so a client reading it knows them. Only pydantic and the pure domain are imported.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from tinycontext.domain.labels import MAX_KEY_CHARS, MAX_METADATA_BYTES, MAX_TAGS, TAG_PATTERN
from tinycontext.domain.limits import MAX_INTEGER
from tinycontext.domain.memory import KINDS, VISIBLE_PATTERN

KIND = '"episodic" (default) or "profile" (durable facts about the user, attached to every recall).'


def stated(schema: dict[str, Any]) -> Any:
    """A JSON schema the OpenAPI document shows; validation stays with the engine."""
    return WithJsonSchema(schema)


def whole_number(minimum: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": MAX_INTEGER}


def _json_number(value: object) -> object:
    # pydantic would read true as 1 and "5" as 5; in a JSON body or MCP arguments they are a
    # boolean and a string, which the schema says an integer is not.
    if isinstance(value, bool | str):
        raise ValueError("Input should be a JSON number, not a string or boolean")
    return value


# Whole numbers up to 2**53 - 1 (the engine's bound). JSON bodies and MCP arguments take JSON
# numbers only; query strings are text, so their forms parse digits.
AtLeastOne = Annotated[int, BeforeValidator(_json_number), stated(whole_number(1))]
AtLeastZero = Annotated[int, BeforeValidator(_json_number), stated(whole_number(0))]
# Text with at least one visible character (not only whitespace, zero-width or control ones).
Content = Annotated[str, stated({"type": "string", "minLength": 1, "pattern": VISIBLE_PATTERN})]
Kind = Annotated[str, stated({"type": "string", "enum": list(KINDS)})]


# Tags and metadata: the engine normalises and checks them (invalid_request naming the bad
# one); the schema states the rules.
Tags = Annotated[list[str], stated({
    "type": "array", "maxItems": MAX_TAGS,
    "items": {"type": "string", "maxLength": 64, "pattern": TAG_PATTERN.replace("a-z", "a-zA-Z")},
})]
MetadataValue = str | bool | int | float
Metadata = Annotated[dict[str, MetadataValue], stated({
    "type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]},
    "propertyNames": {"maxLength": MAX_KEY_CHARS,
                      "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*\\S"
                                 "[^\\u0000-\\u001f\\u007f-\\u009f]*$"},
    "description": f"Flat: string keys to strings, numbers or booleans; at most "
    f"{MAX_METADATA_BYTES} bytes as JSON.",
})]
TAGS = ("Up to 16 short labels (letters, digits, . _ : / -; lower-cased), e.g. "
        "['project:billing', 'decision'].")
METADATA = "Flat object of string keys to strings, numbers or booleans (at most 1 KB)."
TAGS_FILTER = "Only memories carrying every one of these tags."
METADATA_FILTER = "Only memories whose metadata has each of these key/value pairs."
AS_OF = ("ISO-8601 date or datetime: the versions that were current then (a date means the "
         "end of that day); deleted memories are gone.")


class MemoryItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: Content = Field(
        description="The fact to remember, one self-contained statement: at most "
        "max_memory_tokens tokens (default 8000; larger content is refused with "
        "memory_too_large). Control characters other than tab and line breaks are removed."
    )
    kind: Kind | None = Field(default=None, description=KIND)
    tags: Tags | None = Field(default=None, description=TAGS)
    metadata: Metadata | None = Field(default=None, description=METADATA)
