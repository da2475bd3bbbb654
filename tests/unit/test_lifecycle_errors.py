"""Supersede/delete chain rules (domain/lifecycle.py) and the error table (domain/errors.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tinycontext.domain import errors
from tinycontext.domain.errors import ERROR_STATUS, MemoryAlreadySupersededError, TinyContextError
from tinycontext.domain.lifecycle import DeletionPlan, check_updatable, plan_deletion
from tinycontext.domain.memory import Memory

Y_ID = "11111111-1111-4111-8111-111111111111"
X_ID = "22222222-2222-4222-8222-222222222222"
Z_ID = "33333333-3333-4333-8333-333333333333"


def mem(mid: str, superseded_by: str | None = None, supersedes: str | None = None) -> Memory:
    return Memory(mid, "c", "episodic", None, "2026-07-31T10:15:00Z", 1,
                  superseded_by=superseded_by, supersedes=supersedes)


def test_check_updatable():
    check_updatable(mem(X_ID))
    with pytest.raises(MemoryAlreadySupersededError) as info:
        check_updatable(mem(Y_ID, superseded_by=X_ID))
    assert info.value.code == "memory_already_superseded"
    assert "111111111111" in info.value.message and "222222222222" in info.value.message


def test_delete_live_head_restores_predecessor():
    # Y <- X (X replaced Y, X is live): deleting X makes Y live again.
    y, x = mem(Y_ID, superseded_by=X_ID), mem(X_ID, supersedes=Y_ID)
    assert plan_deletion(x, y) == DeletionPlan(X_ID, Y_ID, None)


def test_delete_middle_relinks_predecessor_to_successor():
    # Y <- X <- Z: deleting X points Y at Z; Y stays superseded.
    y = mem(Y_ID, superseded_by=X_ID)
    x = mem(X_ID, superseded_by=Z_ID, supersedes=Y_ID)
    assert plan_deletion(x, y) == DeletionPlan(X_ID, Y_ID, Z_ID)


def test_delete_when_predecessor_no_longer_points_at_target():
    y = mem(Y_ID, superseded_by=Z_ID)  # Y was re-linked elsewhere
    x = mem(X_ID, superseded_by=Z_ID, supersedes=Y_ID)
    assert plan_deletion(x, y) == DeletionPlan(X_ID, None, None)
    assert plan_deletion(mem(X_ID, supersedes=Y_ID), mem(Y_ID)) == DeletionPlan(X_ID, None, None)


def test_delete_without_predecessor():
    assert plan_deletion(mem(X_ID), None) == DeletionPlan(X_ID, None, None)
    # The oldest of a chain: nothing to repair on its own side.
    assert plan_deletion(mem(Y_ID, superseded_by=X_ID), None) == DeletionPlan(Y_ID, None, None)


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
    "internal_error": 500,
}


def test_error_table_matches_spec():
    assert ERROR_STATUS == SPEC_TABLE


def test_every_error_class_has_a_code_in_the_table():
    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, TinyContextError)]
    # The root and StoreError (the family of store failures) are not codes of their own.
    assert {c.code for c in classes if c not in (TinyContextError, errors.StoreError)} == set(
        SPEC_TABLE)
    for cls in classes:
        assert SPEC_TABLE[cls.code] == cls.status
        err = cls("why it failed")
        assert str(err) == err.message == "why it failed"


def test_the_documented_error_table_matches_the_code() -> None:
    """docs/rest.md's table (code, HTTP status) is the one the transports use."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rest.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", doc, flags=re.MULTILINE)
    assert {code: int(status) for code, status in rows} == ERROR_STATUS
