"""The first request of a session as its provider would build it: the system prompt, the task as the only
message, the default tools. The layout is the providers' own (`providers/wire_layout.py`); the first message is the
one thing written out here, and `tests/test_early_request.py` compares the result with the session's own request,
byte for byte, for both wire formats."""

from __future__ import annotations

from ..providers import wire_layout as layout
from .schemas import prebuilt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..provider_env import Endpoint


def first_request(wire: str, endpoint: Endpoint, system: str, task: str) -> tuple[str, dict[str, str], bytes]:
    """URL, the provider's headers and the body of the first request for `task` (`wire`: openai or anthropic)."""
    tools = prebuilt()
    base = endpoint.base_url.rstrip("/")
    body: dict[str, Any]
    if wire == "anthropic":
        text = {"type": "text", "text": task, "cache_control": layout.EPHEMERAL}
        body = {
            "model": endpoint.model,
            "max_tokens": layout.DEFAULT_MAX_TOKENS,
            "messages": [{"role": "user", "content": [text]}],
            "stream": True,
        }
        if system:
            body["system"] = layout.anthropic_system(system)
        body["tools"] = layout.anthropic_tools(tools, cache=True)  # two breakpoints so far: the task's, the system's
        url, headers = base + layout.ANTHROPIC_PATH, layout.anthropic_headers(endpoint.api_key, endpoint.auth_token)
    else:
        messages = [{"role": "system", "content": system}] if system else []
        body = {
            "model": endpoint.model,
            "messages": [*messages, {"role": "user", "content": task}],
            "stream": True,
            "stream_options": {"include_usage": True},
            "tools": layout.openai_tools(tools),
        }
        url, headers = base + layout.OPENAI_PATH, layout.openai_headers(endpoint.api_key, endpoint.auth_token)
    return url, headers, layout.body_bytes(body)
