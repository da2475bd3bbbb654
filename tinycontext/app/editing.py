"""Changing one memory: update (a new version that supersedes it) and delete (SPEC section 2)."""

from __future__ import annotations

from tinycontext.domain.errors import EmptyMemoryError
from tinycontext.domain.lifecycle import check_updatable, plan_deletion
from tinycontext.domain.memory import Memory, clean_content, ref_of
from tinycontext.domain.secrets import Redaction
from tinycontext.ports.store import NewMemory

from .core import Core, written_notice
from .redacting import checked_labels, redact_content
from .results import DeleteResult, RefPair, UpdateResult, metadata_of


def update(
    core: Core, memory_id: object, content: object, tags: object = None,
    metadata: object = None,
) -> UpdateResult:
    """A new version with `content` (None: the old content, for a change of tags or
    metadata only); tags and metadata left out are the old version's. The old version is
    kept, hidden, and linked both ways."""
    old = core.resolve(memory_id)
    check_updatable(old)
    new_tags, new_meta, secrets = checked_labels(core.config, tags, metadata)
    if tags is None:
        new_tags = old.tags
    if metadata is None:
        new_meta = old.metadata
    if content is None:
        if tags is None and metadata is None:
            raise EmptyMemoryError(
                "update_memory needs new content, tags or metadata: pass what changes."
            )
        content = old.content
    redaction = redact_content(core.config, clean_content(content))
    redaction = Redaction(redaction.text, redaction.kinds + secrets)
    text = redaction.text
    tokens = core.measure(text)
    [(vector, bits)] = core.embed_documents([text])
    now = core.now()
    new = Memory(
        id=core.new_id(), content=text, kind=old.kind, session_id=old.session_id,
        created_at=now, content_tokens=tokens, supersedes=old.id,
        embedding_model=core.model_key, tags=new_tags, metadata=new_meta,
    )
    core.store.supersede(old.id, NewMemory(new, vector, tokens=bits), now)
    return UpdateResult(
        id=new.id, ref=new.ref, session_id=new.session_id, kind=new.kind,
        content_tokens=tokens, created_at=now, supersedes=RefPair(id=old.id, ref=old.ref),
        notice=written_notice(core.config, tokens, redaction.notice),
        tags=new.tags, metadata=metadata_of(new.metadata),
    )


def delete(core: Core, memory_id: object) -> DeleteResult:
    """Delete for good; an older version it replaced becomes current again."""
    target = core.resolve(memory_id)
    predecessor = None
    if target.supersedes:
        found = core.store.find(target.supersedes, is_ref=False)
        predecessor = found[0] if found else None
    plan = plan_deletion(target, predecessor)
    core.store.delete(plan.target_id, plan.predecessor_id, plan.successor_id)
    restored = None
    if plan.predecessor_id and plan.successor_id is None:
        restored = RefPair(id=plan.predecessor_id, ref=ref_of(plan.predecessor_id))
    return DeleteResult(id=target.id, ref=target.ref, restored=restored)
