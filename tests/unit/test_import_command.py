"""The import command's progress: a tqdm bar (rate, ETA) on a terminal, plain lines otherwise."""

from __future__ import annotations

import io
import sys

import pytest

from tinycontext.entry.import_command import _Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_a_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    bar = _Progress("chatgpt")
    bar(0, 0)
    bar(40, 100)
    bar(100, 100)
    bar.close()
    shown = screen.getvalue()
    assert "checked 0 memories" in shown
    assert "importing" in shown and "100/100" in shown and "memory/s" in shown
    assert "\r" in shown  # redrawn in place


def test_pipe_gets_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    bar = _Progress("chatgpt")
    bar(10, 100)
    bar(100, 100)
    bar.close()
    assert pipe.getvalue().splitlines() == ["imported 10/100...", "imported 100/100..."]
