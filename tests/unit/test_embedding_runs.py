"""How a batch of tokenised texts (sorted by length) is cut into model runs."""

from __future__ import annotations

from tinycontext.adapters.embedding.onnx_embedder import (
    MAX_BATCH_TOKENS,
    MAX_PADDING_TOKENS,
    plan_runs,
)


def test_texts_of_close_lengths_share_a_run() -> None:
    assert plan_runs([30, 31, 32, 33], 32) == [(0, 4)]  # 2 + 1 + 0 + ... = 6 padded tokens


def test_a_text_that_would_pad_the_run_too_much_starts_a_new_one() -> None:
    # A save of five texts: [32, 36] pad 4 tokens; 50 would pad them by 32 more.
    assert plan_runs([32, 36, 50], 32) == [(0, 2), (2, 3)]
    assert MAX_PADDING_TOKENS == 8
    assert plan_runs([10, 18], 32) == [(0, 2)]  # exactly 8 padded tokens: still one run
    assert plan_runs([10, 19], 32) == [(0, 1), (1, 2)]


def test_runs_keep_the_batch_size_and_token_caps() -> None:
    assert plan_runs([5] * 7, 3) == [(0, 3), (3, 6), (6, 7)]
    width = MAX_BATCH_TOKENS // 4
    assert plan_runs([width] * 5, 32) == [(0, 4), (4, 5)]
    assert plan_runs([MAX_BATCH_TOKENS + 100, MAX_BATCH_TOKENS + 100], 32) == [(0, 1), (1, 2)]


def test_every_text_is_in_exactly_one_run() -> None:
    lengths = sorted([3, 3, 4, 9, 12, 12, 13, 30, 31, 40, 41, 41, 90, 200, 256])
    runs = plan_runs(lengths, 4)
    assert runs[0][0] == 0 and runs[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))
    assert all(end > start for start, end in runs)
    assert plan_runs([], 32) == []
