"""The rows one memory is written as: its memories row, labels, keyword row, token bits,
vector index entry and session (store.py writes them inside its own transactions)."""

from __future__ import annotations

from typing import Any

from tinycontext.domain.labels import metadata_json, tags_json
from tinycontext.domain.memory import Memory, ref_of
from tinycontext.domain.text import searchable_text, stemmed_terms
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import NewMemory

from .filtering import history_id, write_labels
from .ivf import IvfIndex
from .rows import padded
from .word_counts import Change


def model_id(conn: Any, key: str, known: dict[str, int] | None = None) -> int:
    """The id of an embedding model key, added on first use."""
    # Not cached across transactions: a rolled-back one would leave a cached id with no
    # row behind it. `known` holds what the current transaction already looked up.
    if known is not None and key in known:
        return known[key]
    conn.execute("INSERT OR IGNORE INTO embedding_models(key) VALUES (?)", (key,))
    row = conn.execute("SELECT id FROM embedding_models WHERE key = ?", (key,)).fetchone()
    if known is not None:
        known[key] = int(row[0])
    return int(row[0])


def index_vector(
    conn: Any, ivf: IvfIndex, seq: int, memory: Memory, vector: Vector,
    known: dict[str, int] | None = None,
) -> None:
    """The memory's vector index entry (sign bits, int8 codes, IVF cell), added or replaced."""
    model = model_id(conn, memory.embedding_model or "", known)
    # Replaced versions keep their vector under the model's negative id ("as of" reads
    # them through a mirror of their own): searches of live memories never see them.
    clustering = None
    if memory.superseded_by is not None:
        model = history_id(model)
    else:
        clustering = ivf.current(conn, model)
    conn.execute(
        "INSERT OR REPLACE INTO vector_index"
        "(seq, model_id, kind, session_id, bits, cell_key, codes)"
        " VALUES (?, ?, ?, ?, vec_quantize_binary(?), ?, vec_quantize_int8(?, 'unit'))",
        (
            seq, model, memory.kind, memory.session_id, padded(vector),
            clustering.tag(vector) if clustering else 0, vector,
        ),
    )


def insert(
    conn: Any, ivf: IvfIndex, change: Change, item: NewMemory,
    known: dict[str, int] | None = None, sessions: set[str] | None = None,
) -> None:
    """One memory's rows, its keyword row noted in `change`; `known` model ids and
    `sessions` already written in this transaction spare a batch three statements a
    memory."""
    m = item.memory
    cur = conn.execute(
        "INSERT INTO memories(id, ref, content, kind, session_id, created_at, content_tokens,"
        " recall_count, last_recalled_at, superseded_by, superseded_at, supersedes,"
        " embedding, embedding_model, context_id, tags, metadata)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            m.id, ref_of(m.id), m.content, m.kind, m.session_id, m.created_at,
            m.content_tokens, m.recall_count, m.last_recalled_at, m.superseded_by,
            m.superseded_at, m.supersedes, item.vector,
            m.embedding_model if item.vector is not None else None, item.context_id,
            tags_json(m.tags), metadata_json(m.metadata) if m.metadata else None,
        ),
    )
    seq = cur.lastrowid
    write_labels(conn, seq, m)
    row = (searchable_text(m.content), stemmed_terms(m.content),
           stemmed_terms(item.context) if item.context else "")
    conn.execute(
        "INSERT INTO memory_fts(rowid, terms, stems, context) VALUES (?, ?, ?, ?)",
        (seq, *row),
    )
    change.insert(row)
    if item.tokens is not None:
        conn.execute("INSERT INTO memory_tokens(seq, bits) VALUES (?, ?)", (seq, item.tokens))
    if item.vector is not None:
        index_vector(conn, ivf, seq, m, item.vector, known)
    if m.session_id is not None and (sessions is None or m.session_id not in sessions):
        conn.execute("INSERT OR IGNORE INTO sessions(session_id) VALUES (?)", (m.session_id,))
        if sessions is not None:
            sessions.add(m.session_id)
