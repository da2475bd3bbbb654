"""The recall text the model receives really fits the budget, counted with the real tokenizer.

Budget walk per memory = escaped content + the tag frame, so the whole rendered text must be
at most recall_max_tokens + profile_max_tokens + the fixed header (wrapper tags, intro lines
and the notice).
"""

from __future__ import annotations

import random
import re

import anyio
import pytest
from mcp import Client

from tests.fakes import FixedClock, HashEmbedder, InMemoryStore
from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer
from tinycontext.adapters.mcp.render import PROFILE_INTRO, RECALL_INTRO
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig

WORDS = (
    "deploy billing Postgres Marcell Friday v2.3.1 <script> & \"quoted\" it's 2026-03-09 "
    "café 北京 🙂 x=1; a/b C++ #tag @team 600req/min ... — end"
).split()


def _sentences(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40))) for _ in range(count)]


def _fixed_header(text: str, tokens: TiktokenTokenizer) -> int:
    """Tokens of everything that is not a memory block: wrappers, intro lines, notices."""
    opening = re.search(r"<recalled_memories [^>]*>\n", text)
    assert opening is not None
    notices = "".join(re.findall(r"<notice>.*?</notice>\n", text, flags=re.S))
    profile = ""
    if "<agent_profile>" in text:
        profile = f"<agent_profile>\n{PROFILE_INTRO}\n</agent_profile>\n"
    recalled = opening.group(0) + RECALL_INTRO + "\n" + notices + "</recalled_memories>"
    return tokens.count(profile) + tokens.count(recalled)


@pytest.mark.parametrize("budget,profile_budget,seed", [(300, 60, 1), (120, 40, 2), (900, 0, 3),
                                                        (50, 200, 4)])
def test_rendered_recall_fits_the_token_budget(budget: int, profile_budget: int, seed: int) -> None:
    rng = random.Random(seed)
    tokens = TiktokenTokenizer("o200k_base")
    clock = FixedClock()
    service = MemoryService(
        InMemoryStore(), HashEmbedder(), tokens, clock,
        TinyContextConfig(memory_db_path="/nonexistent/x.db", recall_max_tokens=budget,
                          profile_max_tokens=profile_budget, dedup_similarity_threshold=1.0,
                          dedup_review_similarity_threshold=1.0),
        background=False,
    )
    service.save([{"content": s, "kind": "profile"} for s in _sentences(rng, 12)])
    for _ in range(4):
        clock.advance(60)
        service.save([{"content": s} for s in _sentences(rng, 30)])
    server = create_mcp_server(OneService(service), warm=False)

    async def texts() -> list[str]:
        async with Client(server) as client:
            out = []
            for arguments in ({"query": "deploy billing Marcell", "top_k": 100},
                              {"top_k": 100}, {"query": "café 北京"}):
                result = await client.call_tool("recall_memories", arguments)
                assert not result.is_error
                out.append(result.content[0].text)  # type: ignore[union-attr]
            return out

    for text in anyio.run(texts):
        assert "<notice>" in text  # the budget really cut something
        used = tokens.count(text)
        allowed = budget + profile_budget + _fixed_header(text, tokens)
        assert used <= allowed, (used, allowed)
        if profile_budget == 0:
            assert "<agent_profile>" not in text
