"""Token counts (and cost, where the server says it) from an OpenAI-compatible `usage` object.

`prompt_tokens` counts every input token; the part served from the prompt cache is named differently by each server:
DeepSeek's `prompt_cache_hit_tokens` (with `prompt_cache_miss_tokens` the rest,
https://api-docs.deepseek.com/guides/kv_cache), OpenAI's `prompt_tokens_details.cached_tokens`
(https://platform.openai.com/docs/guides/prompt-caching, which Groq, Z.ai, Cerebras, Crusoe, vLLM and OpenRouter use
too), Together's (behind Hugging Face's router) `usage.cached_tokens`, and a gateway's Anthropic-style
`cache_read_input_tokens`. OpenRouter also says what was written to the cache (`prompt_tokens_details.
cache_write_tokens`) and what the call cost (`usage.cost`, in credits, which are US dollars; with your own provider
key (`is_byok`) the provider's charge is `cost_details.upstream_inference_cost` on top of it).
https://openrouter.ai/docs/use-cases/usage-accounting. Groq's streams carry usage in `x_groq.usage`.
"""

from __future__ import annotations

from typing import Any

from ..messages import Usage


def usage_in(chunk: dict[str, Any]) -> dict[str, Any] | None:
    """The usage object a chunk (or whole answer) carries, if any: `usage`, else Groq's `x_groq.usage`."""
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        return usage
    groq = chunk.get("x_groq")
    usage = groq.get("usage") if isinstance(groq, dict) else None
    return usage if isinstance(usage, dict) else None


def parse_usage(raw: dict[str, Any]) -> Usage:
    """Usage with cache reads and writes split out of the input, and the cost when the server states it."""
    prompt = _int(raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = _int(
        raw.get("prompt_cache_hit_tokens")
        or details.get("cached_tokens")
        or raw.get("cached_tokens")
        or raw.get("cache_read_input_tokens")
    )
    written = _int(details.get("cache_write_tokens") or raw.get("cache_creation_input_tokens"))
    return Usage(
        input_tokens=max(0, prompt - cached - written),
        output_tokens=_int(raw.get("completion_tokens")),
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=written,
        cost_usd=_cost(raw),
    )


def _cost(raw: dict[str, Any]) -> float | None:
    cost = raw.get("cost")
    if not isinstance(cost, int | float) or isinstance(cost, bool):
        return None
    details = raw.get("cost_details")
    upstream = details.get("upstream_inference_cost") if isinstance(details, dict) else None
    if raw.get("is_byok") and isinstance(upstream, int | float) and not isinstance(upstream, bool):
        return float(cost) + float(upstream)
    return float(cost)


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
