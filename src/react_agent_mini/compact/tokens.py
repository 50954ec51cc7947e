"""Token estimates that hold for code, English and CJK, and the context window of each known model.

Why not chars/4: it is close for English prose and Python, but a Chinese character is about one token, so
chars/4 under-counts Chinese by two thirds. The estimate here counts what byte-level BPE tokenizers react to —
words and their length, digit groups, punctuation runs, line breaks, CJK characters and runs, other non-ASCII
text — with weights fitted (non-negative least squares) against OpenAI's cl100k_base tokenizer on 3500 chunks of
3000 characters: stdlib Python, Read-style numbered code, licences and manuals, Markdown READMEs, JSON, shell
output, Chinese gettext catalogues and man pages, the compact 2.0 article. Error of the total per kind (two-fold
cross-validated): English -1%, Python -1%, JSON -2%, Markdown 0%, Chinese -1% to -6%, mixed Chinese/English -1%;
per chunk 2-7% mean absolute. Chinese varies most (cl100k splits rarer characters into two or three tokens), so
its weight leans to over-counting. Accented European languages come out about 7% low. Other tokenizers differ
(DeepSeek documents about 0.6 tokens per Chinese character where cl100k spends about one), which makes this an
over-estimate there: the safe side for compaction.

It runs before model calls, so it is cheap: the text's UTF-8 bytes are mapped to character classes with one
`bytes.translate`, then counted with `bytes.count` — all C loops, about a sixth of the time tiktoken takes to
tokenize the same text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ..memo import IdentityMemo
from ..messages import ImageBlock, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..model_names import lookup
from .estimate import json_chars


def _class_of(byte: int) -> bytes:
    """The class letter of one UTF-8 byte."""
    if byte < 0x80:
        char = chr(byte)
        if char.isalpha():
            return b"a"  # letter
        if char.isdigit():
            return b"0"
        if char == "\n":
            return b"\n"
        return b" " if char in " \t\r\v\f" else b"."  # punctuation and controls
    if byte < 0xC0:
        return b"x"  # continuation byte
    if 0xC3 <= byte <= 0xC9:
        return b"l"  # lead of U+00C0-U+024F: accented Latin letters
    if byte < 0xE0:
        return b"b"  # lead of another 2-byte character (Greek, Cyrillic, ...)
    if byte == 0xE2:
        return b"e"  # lead of U+2000-U+2FFF: dashes, ellipsis, arrows, box drawing
    if byte < 0xF0:
        return b"c"  # lead of another 3-byte character: CJK, kana, Hangul, full-width forms
    return b"d"  # lead of a 4-byte character: emoji and the like


_CLASSES = b"".join(_class_of(i) for i in range(256))
_ONLY_LETTERS = bytes(0x61 if i == 0x61 else 0x20 for i in range(256))  # 'a' stays, all else becomes a space
_ONLY_PUNCT = bytes(0x2E if i == 0x2E else 0x20 for i in range(256))
_ONLY_DIGITS = bytes(0x30 if i == 0x30 else 0x20 for i in range(256))
_ONLY_WIDE = bytes(0x63 if i in (0x63, 0x78) else 0x20 for i in range(256))  # 'c' and 'x': runs of CJK

# Weights fitted on all the text above (3500 chunks of 3000 characters); the CJK character weight is then nudged
# up from 0.94 to 1.00 so Chinese prose, whose characters are rarer than a UI catalogue's, is not under-counted.
_W_WORD, _W_LONG_WORD = 0.962, 0.144  # per word; per letter beyond the sixth
_W_DIGIT_GROUP, _W_SPACE_DIGIT = 1.347, 1.928  # per 1-3 digit group; per space before a number
_W_PUNCT, _W_PUNCT_RUN, _W_SPACE_PUNCT = 0.244, 0.332, 0.504  # per character, per run, per run after a space
_W_NEWLINE = 1.012
_W_WIDE, _W_WIDE_RUN, _W_WIDE_PUNCT = 1.000, 0.574, 0.753  # CJK character, run of them, CJK punctuation
_W_LATIN, _W_OTHER, _W_SYMBOL, _W_ASTRAL = 2.614, 0.600, 0.266, 2.259

_RUN_STARTS = tuple(b" " + b"a" * k for k in range(1, 7))  # a run's first letter, first two, ... first six


def estimate_tokens(text: str) -> int:
    """Estimated tokens in `text` (cl100k-like byte-level BPE)."""
    if not text:
        return 0
    raw = text.encode("utf-8", "surrogatepass")
    classes = raw.translate(_CLASSES)
    # Words: runs of letters. Counting " a", " aa", ... " aaaaaa" in the letters-only text (each run is preceded
    # by a space) gives the words and their first six letters; every letter beyond the sixth costs extra.
    letters = b" " + classes.translate(_ONLY_LETTERS)
    words = letters.count(b" a")
    long_tail = classes.count(b"a") - sum(map(letters.count, _RUN_STARTS))
    total = _W_WORD * words + _W_LONG_WORD * long_tail
    if b"0" in classes:
        # Numbers split into groups of up to three digits: two extra digits per run make floor() a ceil().
        digits = (b" " + classes.translate(_ONLY_DIGITS)).replace(b" 0", b" 000")
        total += _W_DIGIT_GROUP * digits.count(b"000") + _W_SPACE_DIGIT * classes.count(b" 0")
    punct = b" " + classes.translate(_ONLY_PUNCT)
    total += _W_PUNCT * punct.count(b".") + _W_PUNCT_RUN * punct.count(b" .") + _W_SPACE_PUNCT * classes.count(b" .")
    total += _W_NEWLINE * classes.count(b"\n")
    if len(raw) != len(text):  # some non-ASCII
        wide_punct = raw.count(b"\xe3\x80") + raw.count(b"\xef\xbc") + raw.count(b"\xef\xbd")
        wide = classes.count(b"c") - wide_punct
        total += _W_WIDE * wide + _W_WIDE_PUNCT * wide_punct
        if wide:
            total += _W_WIDE_RUN * (b" " + classes.translate(_ONLY_WIDE)).count(b" c")
        total += _W_LATIN * classes.count(b"l") + _W_OTHER * classes.count(b"b") + _W_SYMBOL * classes.count(b"e")
        total += _W_ASTRAL * classes.count(b"d")
    return max(1, int(total + 0.5))


MESSAGE_OVERHEAD_TOKENS = 4
"""Role and separators around each message in a chat request."""
TOOL_BLOCK_OVERHEAD_TOKENS = 8
"""Call id, type and framing around each tool call and tool result."""


IMAGE_TOKENS = 1600
"""An image's share of a request: Anthropic bills width × height / 750 tokens and scales images down to about
1.15 megapixels, so ~1,600 tokens is the most one costs (we do not decode images to measure them)."""


def estimate_message_tokens(message: Message) -> int:
    """Estimated tokens one message adds to a request (computed once per message: messages never change)."""
    return _tokens_memo(message, _message_tokens)


def result_tokens(block: ToolResultBlock) -> int:
    """Estimated tokens of a tool_result's content and images (computed once per block: the stages that
    shape, demote and clear results all ask)."""
    return _result_memo(block, _result_tokens)


def _result_tokens(block: ToolResultBlock) -> int:
    return estimate_tokens(block.content) + IMAGE_TOKENS * len(block.images)


_result_memo: IdentityMemo[int] = IdentityMemo()


def _message_tokens(message: Message) -> int:
    total = MESSAGE_OVERHEAD_TOKENS
    for block in message.content:
        if isinstance(block, TextBlock):
            total += estimate_tokens(block.text)
        elif isinstance(block, ToolResultBlock):
            total += TOOL_BLOCK_OVERHEAD_TOKENS + result_tokens(block)
        elif isinstance(block, ToolUseBlock):
            # JSON is mostly keys, quotes and short values: about a third of a token per character (measured).
            total += TOOL_BLOCK_OVERHEAD_TOKENS + estimate_tokens(block.name) + json_chars(dict(block.input)) // 3
        elif isinstance(block, ThinkingBlock):
            total += estimate_tokens(block.thinking)
        elif isinstance(block, ImageBlock):
            total += IMAGE_TOKENS
    return total


_tokens_memo: IdentityMemo[int] = IdentityMemo()


def estimate_messages_tokens(messages: Iterable[Message]) -> int:
    """Estimated tokens of a list of messages."""
    return sum(estimate_message_tokens(m) for m in messages)


# ---- context windows ----

DEFAULT_CONTEXT_WINDOW = 128_000
"""For models not in the table (the upstream's default too)."""

# Input tokens a model accepts, by model-id prefix; the longest matching prefix wins. Sources: the providers'
# model pages (2025). GPT-5's window is 400k of which at most 272k may be input.
KNOWN_CONTEXT_WINDOWS: Mapping[str, int] = {
    "claude-": 200_000,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 272_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "mock": 128_000,
}


def context_window(model: str, env: Mapping[str, str] | None = None) -> int:
    """Tokens of context `model` accepts: `CONTEXT_WINDOW_TOKENS` (digits) when set, else the table, else
    128000. A routing prefix such as `anthropic/` (OpenRouter style) is ignored."""
    configured = configured_window(env)
    if configured is not None:
        return configured
    known = lookup(KNOWN_CONTEXT_WINDOWS, model)
    return DEFAULT_CONTEXT_WINDOW if known is None else known


def configured_window(env: Mapping[str, str] | None = None) -> int | None:
    """The window `CONTEXT_WINDOW_TOKENS` sets (digits, above 0), or None."""
    env = os.environ if env is None else env
    raw = env.get("CONTEXT_WINDOW_TOKENS", "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() and int(raw) > 0 else None
