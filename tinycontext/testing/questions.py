"""What recall makes of a question, for reports that sort questions by it.

A benchmark that reports apart the questions a lever acts on asks the same function recall
asks, so the report's groups and the lever's trigger cannot drift apart:

    from tinycontext.testing.questions import event_pair

    if event_pair("Which came first, the move or the new job?") is not None:
        ...  # `recall_event_pairs` would look both events up on their own
"""

from tinycontext.domain.events import event_pair

__all__ = ["event_pair"]
