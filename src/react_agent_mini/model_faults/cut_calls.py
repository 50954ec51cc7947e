"""A tool call the output token limit cut in the middle of its arguments: never run, and the model is told why and
what to send instead.

When a response stops at the limit (`finish_reason: "length"`, Anthropic `stop_reason: "max_tokens"`), only its
last call can be cut: the calls before it were complete when the model went on to the next one, and they run as
usual. The last one is cut when its arguments did not parse (the adapters mark that) or when none had arrived yet
(an empty input parses, but nothing of the call was sent). Its result names the tool and the limit and says how to
make the call smaller (a Write in parts, an Edit in several), so that the next try fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..events import StopReason
from ..messages import ToolUseBlock

ADVICE = {
    "Write": "Split the content into smaller parts: Write the first part, then add the rest with Edit calls.",
    "Edit": "Make the change in several smaller Edit calls.",
    "Bash": "Send a shorter command (write a long script to a file in smaller parts first).",
}
"""How to make a call of each tool smaller; any other tool gets `SMALLER`."""
SMALLER = "Send a smaller call (split a large input into several calls)."


def cut_call(uses: Sequence[ToolUseBlock], stop_reason: StopReason) -> ToolUseBlock | None:
    """The call of a response the output limit cut before its arguments were complete; None when none was."""
    if stop_reason != "max_tokens" or not uses:
        return None
    last = uses[-1]
    return last if last.input_error or not last.input else None


def cut_result(use: ToolUseBlock, limit: int | None) -> str:
    """What the model reads instead of the cut call's output."""
    at = f" ({limit:,} tokens)" if limit else ""
    advice = ADVICE.get(use.name, SMALLER)
    return (
        f"Not run: your call to {use.name} was cut off by the output token limit{at} before its arguments were "
        f"complete, so nothing ran. {advice}"
    )


def cut_notice(use: ToolUseBlock, limit: int | None) -> str:
    """The line the user reads."""
    at = f" ({limit:,} tokens)" if limit else ""
    return (
        f"The response was cut off by the output token limit{at} in the middle of a call to {use.name}; "
        "that call was not run, and the model is asked to send it in smaller parts."
    )
