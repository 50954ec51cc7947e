"""The v4 pipeline's size measure: characters, counted the way JavaScript counts them.

`estimate_outbound_chars` is upstream's `estimateOutboundChars` exactly: text length + tool_result content
length + tool_use name length + the length of `JSON.stringify(input)`, all in UTF-16 code units (JS
`String.length`), so a character outside the Basic Multilingual Plane (most emoji) counts 2 and the thresholds
mean what they mean upstream. Thinking blocks are not counted, as upstream (it had none).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import msgspec

from ..memo import IdentityMemo, PrefixMemo
from ..messages import ContentBlock, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock


def utf16_len(text: str) -> int:
    """`text.length` in JavaScript: UTF-16 code units."""
    if text.isascii():  # O(1) in CPython: the common case costs nothing
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of `text` that is at most `units` UTF-16 code units long (JS `slice(0, units)`, except
    that a surrogate pair is never split: half a character is not text)."""
    if units <= 0:
        return ""
    if text.isascii() or len(text) * 2 <= units:
        return text[:units]
    encoded = text.encode("utf-16-le")[: units * 2]
    # A high surrogate as the last unit would decode to an error: drop it.
    if len(encoded) >= 2 and 0xD8 <= encoded[-1] <= 0xDB:
        encoded = encoded[:-2]
    return encoded.decode("utf-16-le")


def utf16_suffix(text: str, units: int) -> str:
    """The longest suffix of `text` that is at most `units` UTF-16 code units long (a surrogate pair is never
    split)."""
    if units <= 0:
        return ""
    if text.isascii() or len(text) * 2 <= units:
        return text[-units:]
    encoded = text.encode("utf-16-le")
    encoded = encoded[max(0, len(encoded) - units * 2) :]
    # A low surrogate as the first unit has lost its high half: drop it.
    if len(encoded) >= 2 and 0xDC <= encoded[1] <= 0xDF:
        encoded = encoded[2:]
    return encoded.decode("utf-16-le")


def _has_float(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return True
    if kind is str or kind is int or kind is bool or value is None:
        return False
    if isinstance(value, Mapping):
        return any(map(_has_float, value.values()))
    if isinstance(value, list | tuple):
        return any(map(_has_float, value))
    return False


def js_number(value: float) -> str:
    """A float as JavaScript's `String(number)` writes it (and JSON.stringify: NaN and infinities are null)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)  # shortest round-trip digits, as JS; only the exponent rules differ
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = int(exponent)
    if -7 < power < 21:
        return format(Decimal(text), "f")  # JS writes these positionally: 1e-05 → 0.00001
    return f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"


def _js_value(value: Any) -> Any:
    """`value` with every float pre-rendered in JS notation."""
    if isinstance(value, float):
        return msgspec.Raw(js_number(value).encode())
    if isinstance(value, Mapping):
        return {k: _js_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_value(v) for v in value]
    return value


_MAYBE_FLOAT = re.compile(rb"[:,\[]-?\d+[.eE]")  # a number token with a fraction or exponent


def json_chars(value: Any) -> int:
    """`JSON.stringify(value).length`; 0 when it cannot be serialised (upstream's `catch`)."""
    try:
        # msgspec writes what JSON.stringify writes (compact, non-ASCII kept, the same escapes) but floats.
        data = msgspec.json.encode(value)
        if _MAYBE_FLOAT.search(data) and _has_float(value):  # the check is cheap; floats in tool input are rare
            data = msgspec.json.encode(_js_value(value))
    except (TypeError, ValueError, OverflowError):
        return 0
    return len(data) if data.isascii() else utf16_len(data.decode())


IMAGE_CHARS = 6400
"""An image counted as the characters of its ~1,600 tokens (see `tokens.IMAGE_TOKENS`); upstream had no images."""


def block_chars(block: ContentBlock) -> int:
    """One block's share of the estimate."""
    if isinstance(block, TextBlock):
        return utf16_len(block.text)
    if isinstance(block, ToolResultBlock):
        return utf16_len(block.content) + IMAGE_CHARS * len(block.images)
    if isinstance(block, ToolUseBlock):
        return utf16_len(block.name) + json_chars(block.input)
    if isinstance(block, ImageBlock):
        return IMAGE_CHARS
    return 0


def message_chars(message: Message) -> int:
    """One message's share of the estimate (computed once per message: messages never change)."""
    return _chars_memo(message, _message_chars)


def _message_chars(message: Message) -> int:
    return sum(block_chars(b) for b in message.content)


_chars_memo: IdentityMemo[int] = IdentityMemo()


def estimate_outbound_chars(messages: Iterable[Message]) -> int:
    """The v4 pipeline's estimate of what a request carries, in UTF-16 code units. For a sequence, the running total
    of the part an earlier call shares with it is reused: only messages added since cost anything."""
    if not isinstance(messages, Sequence):
        return sum(message_chars(m) for m in messages)
    totals = _running_chars(messages, _running_total)
    return totals[-1] if totals else 0


def _running_total(messages: Sequence[Message], index: int, totals: Sequence[int]) -> int:
    return (totals[index - 1] if index else 0) + message_chars(messages[index])


_running_chars: PrefixMemo[Message, int] = PrefixMemo()
