"""The first request of a session as its provider would build it: the system prompt, the task as the only
message, the default tools. The layout is the providers' own (`providers/wire_layout.py`); the first message is the
one thing written out here, and `tests/test_early_request.py` compares the result with the session's own request,
byte for byte, for both wire formats."""

from __future__ import annotations

from ..providers import wire_layout as layout
from .schemas import prebuilt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..provider_env import Endpoint


def first_request(wire: str, endpoint: Endpoint, system: str, task: str) -> tuple[str, dict[str, str], bytes]:
    """URL, the provider's headers and the body of the first request for `task` (`wire`: openai or anthropic)."""
    tools = prebuilt()
    base = endpoint.base_url.rstrip("/")
    if wire == "anthropic":
        text = {"type": "text", "text": task, "cache_control": layout.EPHEMERAL}  # the task's breakpoint
        messages = [{"role": "user", "content": [text]}]
        body = layout.anthropic_body(endpoint.model, None, messages, system, tools, breakpoints=1)
        url, headers = base + layout.ANTHROPIC_PATH, layout.anthropic_headers(endpoint.api_key, endpoint.auth_token)
    else:
        messages = [{"role": "system", "content": system}] if system else []
        body = layout.openai_body(endpoint.model, [*messages, {"role": "user", "content": task}], tools, None)
        url, headers = base + layout.OPENAI_PATH, layout.openai_headers(endpoint.api_key, endpoint.auth_token)
    return url, headers, layout.body_bytes(body)
