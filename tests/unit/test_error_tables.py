"""Errors are mapped at the edge: the domain raises codes, and each transport has one table
from code to what it answers (REST: HTTP status, SPEC section 2 and docs/reference/rest.md; MCP: the
`code: message` text and a JSON-RPC kind)."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from tinycontext.adapters.mcp import errors as mcp_errors
from tinycontext.adapters.rest import errors as rest_errors
from tinycontext.domain.errors import (
    ERROR_CODES,
    InternalError,
    MemoryTooLargeError,
    StoreFullError,
    UnauthorizedError,
)

REPO = Path(__file__).resolve().parents[2]
SPEC_TABLE = {
    "empty_memory": 400,
    "invalid_memory_kind": 400,
    "invalid_sort": 400,
    "recall_budget": 400,
    "invalid_request": 400,
    "session_not_found": 404,
    "memory_not_found": 404,
    "ambiguous_memory_reference": 409,
    "memory_already_superseded": 409,
    "memory_too_large": 413,
    "unauthorized": 401,
    "store_unavailable": 503,
    "store_read_only": 503,
    "store_full": 507,
    "store_corrupt": 500,
    "store_locked": 503,
    "internal_error": 500,
}


def test_rest_table_is_the_spec_table_for_every_domain_code() -> None:
    assert list(SPEC_TABLE) == list(ERROR_CODES)
    assert {code: status for code, (status, _) in rest_errors.ERRORS.items()} == SPEC_TABLE
    assert all(when for _, when in rest_errors.ERRORS.values())


def test_the_documented_error_table_is_the_rest_table() -> None:
    doc = (REPO / "docs" / "reference" / "rest.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", doc, flags=re.MULTILINE)
    assert {code: int(status) for code, status in rows} == SPEC_TABLE


def test_rest_answers_a_domain_error_with_its_status_and_the_documented_shape() -> None:
    response = rest_errors.error_response(MemoryTooLargeError("Split it."))
    assert response.status_code == 413
    assert response.body == b'{"detail":{"code":"memory_too_large","message":"Split it."}}'
    unexpected = rest_errors.error_response(InternalError("Unexpected server error."))
    assert unexpected.status_code == 500


def test_mcp_table_covers_every_code_and_blames_the_server_only_for_its_own_failures() -> None:
    assert set(mcp_errors.KIND) == set(ERROR_CODES)
    server = {code for code, kind in mcp_errors.KIND.items() if kind == INTERNAL_ERROR}
    assert server == {code for code, status in SPEC_TABLE.items() if status >= 500}
    assert set(mcp_errors.KIND.values()) == {INTERNAL_ERROR, INVALID_PARAMS}


def test_mcp_text_and_json_rpc_errors() -> None:
    assert mcp_errors.error_text(StoreFullError("Free disk space.")) == (
        "store_full: Free disk space.")
    assert str(mcp_errors.tool_error(MemoryTooLargeError("Split it."))) == (
        "memory_too_large: Split it.")
    full = mcp_errors.rpc_error(StoreFullError("Free disk space."))
    assert (full.error.code, full.error.message, full.error.data) == (
        INTERNAL_ERROR, "store_full: Free disk space.", {"code": "store_full"})
    refused = mcp_errors.rpc_error(UnauthorizedError("Prove it."), mcp_errors.UNAUTHORIZED)
    assert (refused.error.code, refused.error.message) == (-32001, "unauthorized: Prove it.")
    assert mcp_errors.error_text(mcp_errors.UNEXPECTED).startswith("internal_error: ")
