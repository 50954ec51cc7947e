"""Which OpenAI-compatible server ram talks to, and what that server wants back in the history.

Every server reads and writes Chat Completions, but each says reasoning in its own words and wants a different part
of it back. How ram knows which server it talks to: first the base URL's host (`api.deepseek.com`,
`openrouter.ai`, `api.groq.com`, …: `for_url`). Where the host says nothing (a local server, a proxy, a gateway on
loopback), what the answers carried names it (`Dialect.seen`: Groq's `x_groq`, DeepSeek's `prompt_cache_hit_tokens`,
OpenRouter's `reasoning_details`, Cerebras' `time_info`, …) from the first answer on; until then the generic rules
hold. And some parts go back because of what they are, whoever sent them: OpenRouter's `reasoning_details` and
Gemini's `extra_content` are kept on the blocks they came with (`provider_data`) and sent back as received.

What each server wants back (on assistant messages), from its documentation:
- DeepSeek: `reasoning_content` on every assistant message with tool calls (an empty one when there was none: the
  API refuses the request otherwise), nothing on other turns.
  https://api-docs.deepseek.com/guides/thinking_mode#tool-calls
- Z.ai (GLM): `reasoning_content` with tool calls ("thinking blocks should be explicitly preserved and returned
  together with the tool results"). https://docs.z.ai/guides/capabilities/thinking-mode
- OpenRouter: `reasoning_details` exactly as received, on every assistant message that had them (it is how reasoning
  continues across tool calls). https://openrouter.ai/docs/use-cases/reasoning-tokens ("Preserving reasoning")
- Gemini (OpenAI compatibility): each tool call's `extra_content.google.thought_signature`, as received (Gemini 3
  refuses a request without it). https://ai.google.dev/gemini-api/docs/thought-signatures
- Groq (`reasoning`, or `<think>` in the content), Cerebras (`reasoning`), Ollama (`reasoning`), Mistral (thinking
  parts in `content`), Hugging Face's router, Crusoe, Heroku, OpenAI: no reasoning at all. Groq and Mistral refuse
  fields they do not know. https://console.groq.com/docs/reasoning,
  https://inference-docs.cerebras.ai/capabilities/reasoning, https://docs.ollama.com/capabilities/thinking,
  https://docs.mistral.ai/capabilities/reasoning/
- Mistral also wants every tool call id to be 9 letters or digits and no `user` message right after a `tool` one.
- Generic (an unknown server): reasoning that came as `reasoning_content` goes back with tool calls (DeepSeek-style
  servers: vLLM, SGLang, llama.cpp, DeepSeek behind a proxy), reasoning that came any other way does not.
"""

from __future__ import annotations

import json
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

ReasoningBack = Literal["tool_turns", "every_tool_turn", "never"]


class Dialect(msgspec.Struct, frozen=True):
    """One server's rules for what goes back."""

    name: str
    reasoning_back: ReasoningBack = "never"
    """`reasoning_content` back: with tool calls when there is some, on every tool-call turn, or never."""
    reasoning_details: bool = False
    """OpenRouter's `reasoning_details` go back as received."""
    call_extras: bool = False
    """A tool call's `extra_content` (Gemini's thought signature) goes back as received."""
    short_call_ids: bool = False
    """Tool call ids must be 9 letters or digits (Mistral)."""
    no_user_after_tool: bool = False
    """A `user` message may not follow a `tool` one (Mistral)."""


GENERIC = Dialect("generic", "tool_turns", reasoning_details=True, call_extras=True)
DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        GENERIC,
        Dialect("deepseek", "every_tool_turn"),
        Dialect("zai", "tool_turns"),
        Dialect("openrouter", reasoning_details=True),
        Dialect("gemini", call_extras=True),
        Dialect("mistral", short_call_ids=True, no_user_after_tool=True),
        *(Dialect(name) for name in ("groq", "cerebras", "ollama", "huggingface", "crusoe", "heroku", "openai")),
    )
}

_HOSTS = {
    "api.deepseek.com": "deepseek",
    "openrouter.ai": "openrouter",
    "api.groq.com": "groq",
    "api.cerebras.ai": "cerebras",
    "api.mistral.ai": "mistral",
    "codestral.mistral.ai": "mistral",
    "api.z.ai": "zai",
    "open.bigmodel.cn": "zai",
    "router.huggingface.co": "huggingface",
    "api-inference.huggingface.co": "huggingface",
    "generativelanguage.googleapis.com": "gemini",
    "ollama.com": "ollama",
    "api.openai.com": "openai",
}
_HOST_ENDINGS = {
    ".inference.heroku.com": "heroku",
    ".crusoecloud.com": "crusoe",
    ".crusoe.ai": "crusoe",
    ".endpoints.huggingface.cloud": "huggingface",
    ".openrouter.ai": "openrouter",
}
OLLAMA_PORT = 11434


def for_url(base_url: str) -> Dialect | None:
    """The dialect the base URL's host names, or None when it names none."""
    try:
        parts = urlsplit(base_url)
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None
    name = _HOSTS.get(host) or next((d for end, d in _HOST_ENDINGS.items() if host.endswith(end)), None)
    if name is None and port == OLLAMA_PORT and host in ("localhost", "127.0.0.1", "::1"):
        name = "ollama"
    return DIALECTS[name] if name else None


def seen(chunk: dict[str, Any]) -> str:
    """The server an answer's chunk (or whole answer) names by a field only it sends; "" when none does."""
    if "x_groq" in chunk:
        return "groq"
    if "time_info" in chunk:
        return "cerebras"
    usage = chunk.get("usage")
    if isinstance(usage, dict) and "prompt_cache_hit_tokens" in usage:
        return "deepseek"
    if chunk.get("system_fingerprint") == "fp_ollama":
        return "ollama"
    if isinstance(chunk.get("provider"), str) and str(chunk.get("id", "")).startswith("gen-"):
        return "openrouter"
    for choice in chunk.get("choices") or ():
        part = (choice.get("delta") or choice.get("message") or {}) if isinstance(choice, dict) else {}
        if part.get("reasoning_details"):
            return "openrouter"
        if isinstance(part.get("extra_content"), dict) or any(
            isinstance(call, dict) and isinstance(call.get("extra_content"), dict)
            for call in part.get("tool_calls") or ()
        ):
            return "gemini"
        content = part.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "thinking" for p in content):
            return "mistral"
    return ""


# ---- what a block keeps of how it came ----

VIA_REASONING_CONTENT = "reasoning_content"
"""Reasoning that came as `reasoning_content` (a ThinkingBlock's empty `provider_data` says this)."""


def thinking_data(via: str, details: list[dict[str, Any]] | None = None) -> str:
    """A ThinkingBlock's `provider_data`: the field its text came in, and OpenRouter's details as received."""
    if via == VIA_REASONING_CONTENT and not details:
        return ""
    data: dict[str, Any] = {"via": via}
    if details:
        data["reasoning_details"] = details
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def thinking_via(provider_data: str) -> str:
    """The field a ThinkingBlock's text came in (`reasoning_content` for an empty or unreadable `provider_data`)."""
    value = _object(provider_data)
    via = value.get("via")
    return via if isinstance(via, str) else VIA_REASONING_CONTENT


def thinking_details(provider_data: str) -> list[Any]:
    """OpenRouter's `reasoning_details` a ThinkingBlock came with, as received ([] for none)."""
    details = _object(provider_data).get("reasoning_details")
    return details if isinstance(details, list) else []


def call_extras(provider_data: str) -> dict[str, Any]:
    """The fields a tool call came with that go back with it (`extra_content`), as received."""
    return _object(provider_data)


def _object(text: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def short_call_id(call_id: str) -> str:
    """`call_id` as Mistral takes it: itself when it is 9 letters or digits, else 9 drawn from its hash (the same
    every time, so a call and its result keep matching)."""
    if len(call_id) == 9 and call_id.isascii() and call_id.isalnum():
        return call_id
    import hashlib

    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    digits = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHABET))
        digits.append(_ALPHABET[digit])
    return "".join(digits)
