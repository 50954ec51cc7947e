"""Hook text in the context: how much of it may enter, and how the compaction stages know it and shrink it.

A hook may print anything, and what it prints can reach the model: UserPromptSubmit and SessionStart context
(their JSON's `additionalContext`, or plain stdout), PreToolUse / PostToolUse `additionalContext` (after a tool
result), the reason of a Stop hook that blocks (the next prompt), a block's or a denial's reason. So every such
text is cut where it enters (`hooks.Hooks.run`) to `budget_tokens(window)` — the share of the window the
newest tool result may have whole (options.v2_fresh_tokens: 15,360 tokens at 128k, 24,000 at 200k, 1,920 at
16k) — keeping its head and saying how much was left out.

The context a hook adds before a prompt (or as a Stop hook's feedback) is a message of its own, which says what
it is: `UserPromptSubmit hook additional context: …`, `SessionStart hook additional context: …`,
`Stop hook feedback: …` (the model reads where the words come from; the transcript keeps them, so a resumed
session is recognised too). Profile v2 treats such a message as it treats a tool result, never as the user's
words: stage ① cuts one over the fresh cap (`shaped`); when room is needed an old one falls to the v4 cap
(`demoted`), then to a one-line placeholder (`cleared`); and a dropped turn takes its hook context with it —
only what the user typed is kept word for word. Each cut is computed once per message (../memo.py).
"""

from __future__ import annotations

import re

import msgspec

from ..memo import IdentityMemo
from ..messages import Message, TextBlock, user_text
from .budget import _snap_head
from .estimate import utf16_len, utf16_prefix
from .options import v2_fresh_tokens, v2_threshold
from .tokens import estimate_tokens

CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")
"""Events whose context goes into a message of its own, before the prompt."""
FEEDBACK_EVENTS = ("Stop", "SubagentStop")
"""Events whose blocking reason becomes the next prompt."""
CLEARED_NOTE = "[Old hook context cleared"
"""How a cleared hook context's text goes on after its prefix."""
MARGIN_PERCENT = 97
"""A cut aims at this share of its cap, so the note it adds still fits."""

_SOURCE = re.compile(
    "(" + "|".join(CONTEXT_EVENTS) + ") hook additional context: |(" + "|".join(FEEDBACK_EVENTS) + ") hook feedback: "
)


def budget_tokens(window_tokens: int) -> int:
    """Estimated tokens one hook text may have where it enters the history: what the newest tool result may
    have whole (a share of the window; see options.py)."""
    return v2_fresh_tokens(window_tokens, v2_threshold(window_tokens))


def context_prefix(event: str) -> str:
    """How the message holding `event`'s context starts."""
    return f"{event} hook additional context: "


def feedback_prefix(event: str) -> str:
    """How the message holding a Stop (or SubagentStop) hook's reason to go on starts."""
    return f"{event} hook feedback: "


def context_message(event: str, text: str, *, id: str = "") -> Message:
    """The meta message that puts `event`'s context before the prompt."""
    return user_text(context_prefix(event) + text, meta=True, id=id)


def hook_source(message: Message) -> str | None:
    """The event whose hook wrote `message` (a hook context or feedback message), else None."""
    if not message.meta or message.role != "user" or len(message.content) != 1:
        return None
    block = message.content[0]
    if not isinstance(block, TextBlock):
        return None
    found = _SOURCE.match(block.text)
    return None if found is None else found.group(1) or found.group(2)


def _prefix_length(text: str) -> int:
    found = _SOURCE.match(text)
    return found.end() if found else 0


def head_within(text: str, tokens: int) -> str | None:
    """The head of `text` (cut back to a line end when one is near) estimated at most `tokens`; None when the
    whole fits."""
    if len(text) <= tokens // 3:  # cannot be over: no character is estimated above 3 tokens
        return None
    total = estimate_tokens(text)
    if total <= tokens:
        return None
    limit = utf16_len(text) * tokens // total * MARGIN_PERCENT // 100
    head = text
    for _ in range(4):  # the head may be denser than the whole: tighten until it fits
        head = _snap_head(utf16_prefix(text, limit))
        if estimate_tokens(head) <= tokens:
            break
        limit = limit * 9 // 10
    return head


def fit(text: str, tokens: int) -> str:
    """`text` as it may enter the history: whole, or its head within `tokens` and a line saying how much of it
    ram left out."""
    head = head_within(text, tokens)
    if head is None:
        return text
    return (
        f"{head}\n[… hook output cut by ram to fit the context window: its first {len(head):,} of {len(text):,} "
        "characters are kept …]"
    )


def shaped(message: Message, cap_tokens: int) -> Message | None:
    """Stage ① (v2): a hook context message cut to `cap_tokens`, or None when it fits or is no hook context."""
    if hook_source(message) is None:
        return None
    return _shaped(message, lambda m: _cut(m, cap_tokens), key=cap_tokens)


def _cut(message: Message, cap_tokens: int) -> Message | None:
    text = message.text
    start = _prefix_length(text)
    body = text[start:]
    head = head_within(body, cap_tokens)
    if head is None:
        return None
    note = f"\n[… hook context cut by compaction: its first {len(head):,} of {len(body):,} characters are kept …]"
    return _with_text(message, text[:start] + head + note)


def demoted(message: Message, limit_chars: int) -> Message | None:
    """An old hook context message cut to the v4 pipeline's `limit_chars` (when room is needed), or None when it
    is within them."""
    return _demoted(message, lambda m: _demote(m, limit_chars), key=limit_chars)


def _demote(message: Message, limit: int) -> Message | None:
    text = message.text
    start = _prefix_length(text)
    body = text[start:]
    if utf16_len(body) <= limit or body.startswith(CLEARED_NOTE):
        return None
    head = _snap_head(utf16_prefix(body, limit))
    note = f"\n[… hook context cut by compaction to its first {len(head):,} of {len(body):,} characters …]"
    return _with_text(message, text[:start] + head + note)


def cleared(message: Message, min_chars: int) -> Message | None:
    """An old hook context message as one line saying it was cleared, or None when it is no longer than
    `min_chars` or cleared already."""
    return _cleared(message, lambda m: _clear(m, min_chars), key=min_chars)


def _clear(message: Message, min_chars: int) -> Message | None:
    text = message.text
    start = _prefix_length(text)
    body = text[start:]
    if utf16_len(body) <= min_chars or body.startswith(CLEARED_NOTE):
        return None
    return _with_text(message, f"{text[:start]}{CLEARED_NOTE} to save context: {len(body):,} characters]")


def _with_text(message: Message, text: str) -> Message:
    return msgspec.structs.replace(message, content=(TextBlock(text),))


_shaped: IdentityMemo[Message | None] = IdentityMemo()
_demoted: IdentityMemo[Message | None] = IdentityMemo()
_cleared: IdentityMemo[Message | None] = IdentityMemo()
