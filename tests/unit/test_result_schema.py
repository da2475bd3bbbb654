"""The application's typed results are the one schema: REST's response models describe
exactly their fields (same names, same optional ones), and `to_dict()` leaves out only the
optional fields that are absent."""

from __future__ import annotations

from dataclasses import fields

import pytest

from tinycontext.adapters.rest import responses as m
from tinycontext.app import results as r

PAIRS = [
    (m.SaveResponse, r.SaveResult), (m.SavedItem, r.SavedItem), (m.SkippedItem, r.SkippedItem),
    (m.SimilarTo, r.SimilarTo), (m.RecallResponse, r.RecallResult),
    (m.RecalledMemory, r.RecalledItem), (m.Scores, r.Scores), (m.ProfileMemory, r.ProfileItem),
    (m.ListResponse, r.ListPage), (m.ListedMemory, r.ListedItem),
    (m.MemoryDetail, r.MemoryDetail), (m.UpdateResponse, r.UpdateResult),
    (m.RefPair, r.RefPair), (m.DeleteResponse, r.DeleteResult),
]


@pytest.mark.parametrize(("model", "result"), PAIRS, ids=lambda t: t.__name__)
def test_rest_models_have_the_result_fields(model: type, result: type[r.Result]) -> None:
    assert set(model.model_fields) == {f.name for f in fields(result)}
    optional = {name for name, info in model.model_fields.items() if not info.is_required()}
    # What REST may leave out is what the result leaves out (MemoryDetail: REST keeps two
    # fields optional for older clients, the result always fills them).
    assert result.OPTIONAL.issubset(optional)


def test_to_dict_leaves_out_absent_optional_fields_only() -> None:
    saved = r.SavedItem(index=0, id="i", ref="r", session_id=None, kind="episodic",
                        content_tokens=3, created_at="t")
    result = r.SaveResult(saved=(saved,))
    assert result.to_dict() == {"saved": [{
        "index": 0, "id": "i", "ref": "r", "session_id": None, "kind": "episodic",
        "content_tokens": 3, "created_at": "t"}]}
    noted = result.with_notice("a").with_notice("b")
    assert noted.to_dict()["notice"] == "a b"
    recent = r.RecalledItem(rank=1, content_tokens=2, created_at="t", id="i", ref="r",
                            content="c")
    assert list(recent.to_dict()) == ["rank", "content_tokens", "created_at", "id", "ref",
                                      "content"]
    semantic = r.RecalledItem(rank=1, relevance="high", scores=r.Scores(fused=1.0, dense=None,
                              bm25=0.5), content_tokens=2, created_at="t", id="i", ref="r",
                              content="c")
    assert list(semantic.to_dict())[:3] == ["rank", "relevance", "scores"]
    assert r.DeleteResult(id="i", ref="r").to_dict() == {"id": "i", "ref": "r", "deleted": True}


def test_a_rest_model_must_document_exactly_its_result_fields() -> None:
    # The models are derived from the results: a description table that misses a field of
    # the result, or names one it does not have, fails when the module is built.
    with pytest.raises(TypeError, match="RefPair"):
        m._derive("RefPair", r.RefPair, {"id": m.ID})
    with pytest.raises(TypeError, match="RefPair"):
        m._derive("RefPair", r.RefPair, {"id": m.ID, "ref": m.REF, "extra": "x"})


def test_rest_models_keep_the_result_types() -> None:
    saved = m.SaveResponse.model_fields["saved"].annotation
    assert saved == list[m.SavedItem]
    assert m.SavedItem.model_fields["tags"].annotation == list[str] | None
    assert m.SavedItem.model_fields["similar_to"].annotation == m.SimilarTo | None
