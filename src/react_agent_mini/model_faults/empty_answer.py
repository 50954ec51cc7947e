"""An answer with nothing in it: no text and no tool calls (reasoning alone, or not even that).

Models do this now and then (a local model that stops at once, a thinking model that spends its answer on
reasoning, a server that drops the content): the loop asks once more with the very same request. The empty answer
is kept out of the history (`AssistantTurn.kept`), so the retry is the same request on the wire too and the history
never holds two assistant messages in a row; its cost still counts. A second empty answer ends the run with an
error that says so — never a silent success with an empty result.
"""

from __future__ import annotations

from ..events import StopReason, StreamRetry
from ..messages import Message, ThinkingBlock

EMPTY = "the model returned an empty answer"


def is_empty(message: Message) -> bool:
    """No tool calls and no text but whitespace."""
    return not message.tool_uses and not message.text.strip()


def retry(message: Message) -> StreamRetry:
    """The event announcing the retry (front ends show it as they show a transient failure's)."""
    reasoned = any(isinstance(b, ThinkingBlock) and b.thinking.strip() for b in message.content)
    reason = "the model returned reasoning but no answer" if reasoned else EMPTY
    return StreamRetry(attempt=2, max_attempts=2, delay=0.0, reason=reason, discarded_output=reasoned)


def failure(message: Message, stop_reason: StopReason, limit: int | None, *, twice: bool = True) -> str:
    """The error ending the run after the second empty answer (`twice` False: the first, with no model call left
    in the run to ask again)."""
    reasoned = any(isinstance(b, ThinkingBlock) and b.thinking.strip() for b in message.content)
    what = "the model returned reasoning but no answer" if reasoned else EMPTY
    what += " twice" if twice else ""
    if stop_reason == "max_tokens":
        at = f" ({limit:,} tokens)" if limit else ""
        return f"{what}: it reached the output token limit{at} first (raise it with RAM_MAX_OUTPUT_TOKENS)"
    return what
