"""Supersede/delete chain rules (domain/lifecycle.py) and the error codes (domain/errors.py)."""

from __future__ import annotations

import pytest

from tinycontext.domain import errors
from tinycontext.domain.errors import ERROR_CODES, MemoryAlreadySupersededError, TinyContextError
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


def test_every_error_class_has_a_code_and_no_transport_status():
    """The domain names what went wrong; each transport maps the code (test_error_tables)."""
    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, TinyContextError)]
    # The root and StoreError (the family of store failures) are not codes of their own.
    assert {c.code for c in classes if c not in (TinyContextError, errors.StoreError)} == set(
        ERROR_CODES)
    assert len(set(ERROR_CODES)) == len(ERROR_CODES) == 17
    for cls in classes:
        assert not hasattr(cls, "status"), cls
        err = cls("why it failed")
        assert str(err) == err.message == "why it failed"
    assert not hasattr(errors, "ERROR_STATUS")
