"""What a session has cost so far: a small table of list prices per model, in US dollars per million tokens.

Prices are the providers' public list prices for standard (non-batch) use as of late 2025; they change, so the
REPL shows them as an estimate. A model that is not in the table shows tokens only, never a made-up price. The
longest matching model-id prefix wins, and a routing prefix such as `anthropic/` is ignored, as for context
windows.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from .messages import Usage
from .model_names import lookup


class Price(msgspec.Struct, frozen=True):
    """USD per million tokens."""

    input: float
    """Plain (uncached) input."""
    output: float
    cache_read: float
    """Input served from the prompt cache."""
    cache_write: float
    """Input written to the prompt cache (Anthropic; others bill it as plain input)."""


def _anthropic(input_: float, output: float) -> Price:
    # Anthropic: cache reads 0.1×, 5-minute cache writes 1.25× the input price
    return Price(input_, output, round(input_ * 0.1, 4), round(input_ * 1.25, 4))


def _openai(input_: float, output: float, cached: float) -> Price:
    return Price(input_, output, cached, input_)


KNOWN_PRICES: Mapping[str, Price] = {
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-3-opus": _anthropic(15.0, 75.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-sonnet": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    "gpt-5": _openai(1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "o3": _openai(2.0, 8.0, 0.5),
    "o4-mini": _openai(1.1, 4.4, 0.275),
    # DeepSeek V3.2 (both names): cache miss, output, cache hit
    "deepseek-chat": _openai(0.28, 0.42, 0.028),
    "deepseek-reasoner": _openai(0.28, 0.42, 0.028),
}


def price_for(model: str) -> Price | None:
    """The list price of `model`, or None when it is not known."""
    return lookup(KNOWN_PRICES, model)


def cost_usd(model: str, usage: Usage) -> float | None:
    """Dollars `usage` costs: what the provider billed when it said (OpenRouter's `usage.cost`), else `model`'s
    list price; None when neither is known."""
    if usage.cost_usd is not None:
        return usage.cost_usd
    price = price_for(model)
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_input_tokens * price.cache_read
        + usage.cache_creation_input_tokens * price.cache_write
    ) / 1_000_000


def format_cost(dollars: float) -> str:
    """`$0.0042`, `$0.13`, `$12.50`: enough digits to see small sessions move."""
    if dollars < 0.01:
        return f"${dollars:.4f}"
    if dollars < 1:
        return f"${dollars:.3f}"
    return f"${dollars:,.2f}"
