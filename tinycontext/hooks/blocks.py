"""What a hook injects: the memories above the relevance floor that the agent session has not
been given yet, within the token budget, framed exactly like recall's MCP text.

The floor is on the cosine similarity between the prompt and the memory: the fused score is
relative to the other candidates (the best of a bad lot still scores high), the cosine is not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from tinycontext.adapters.mcp.frame import escape
from tinycontext.adapters.mcp.render import render_profile, render_recall
from tinycontext.app.results import ProfileItem, RecalledItem, RecallResult

Counter = Callable[[str], int]


def above_floor(items: Sequence[RecalledItem], floor: float,
                seen: Collection[str]) -> list[RecalledItem]:
    """Items whose cosine reaches the floor and whose ref this session has not seen."""
    kept = []
    for item in items:
        dense = item.scores.dense if item.scores is not None else None
        if dense is not None and dense >= floor and item.ref not in seen:
            kept.append(item)
    return kept


def render(result: RecallResult, memories: Sequence[RecalledItem],
           profile: tuple[ProfileItem, ...] = (), notice: str | None = None) -> str:
    """The block: the profile (when given), then the memories as recall renders them; an
    empty string when there is nothing to say."""
    if not memories:
        text = render_profile(profile)
        if notice:
            text += f"<notice>{escape(notice)}</notice>\n"
        return text.rstrip("\n")
    chosen = replace(result, memories=tuple(memories), matched_count=len(memories),
                     truncated=False, notice=notice, profile=profile,
                     total_tokens=sum(m.content_tokens for m in memories))
    return render_recall(chosen)


def fit(result: RecallResult, memories: Sequence[RecalledItem], budget: int, count: Counter,
        profile: tuple[ProfileItem, ...] = (), notice: str | None = None,
        ) -> tuple[str, list[RecalledItem]]:
    """The longest best-first prefix of `memories` whose block (without the profile, which has
    its own budget) counts at most `budget` tokens, and the block with the profile."""
    chosen: list[RecalledItem] = []
    for item in memories:
        if count(render(result, [*chosen, item], notice=notice)) > budget:
            break
        chosen.append(item)
    return render(result, chosen, profile, notice), chosen
