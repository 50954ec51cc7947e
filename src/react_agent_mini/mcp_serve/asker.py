"""Permission questions over MCP: asked of the client by elicitation (`elicitation/create`, form mode), when the
client declared the `elicitation` capability. Accepting allows the call (with `always` checked: the narrow rules an
"always" answer records, for the rest of the session); declining, cancelling, or a client that fails to answer,
refuses it. A client without the capability is never asked: what would be asked is refused, as in a headless run.
"""

from __future__ import annotations

from typing import Any

from ..permissions.policy import Answer, PermissionRequest


class ElicitingAsker:
    """The session's asker; `context` is the MCP request context of the tool call running the turn."""

    def __init__(self) -> None:
        self.context: Any = None
        """The `mcp` package's `Context` of the call now running (None between calls: nobody to ask)."""

    async def __call__(self, request: PermissionRequest) -> Answer:
        context = self.context
        if context is None:
            return "no"
        properties: dict[str, Any] = {}
        if request.always_rules:
            properties["always"] = {
                "type": "boolean",
                "title": "Always allow",
                "description": f"also allow, for the rest of this session: {request.always_rule}",
                "default": False,
            }
        message = f"ram asks to {request.summary} — {request.reason}. Allow it?"
        try:
            answer = await context.session.elicit_form(
                message=message,
                requested_schema={"type": "object", "properties": properties},
                related_request_id=context.request_id,
            )
        except Exception:  # the client could not answer: nothing runs unasked
            return "no"
        if answer.action != "accept":
            return "no"
        content = answer.content or {}
        return "always" if request.always_rules and content.get("always") is True else "yes"


def can_elicit(context: Any) -> bool:
    """True when the client declared the `elicitation` capability."""
    capabilities = getattr(context, "client_capabilities", None)
    return capabilities is not None and getattr(capabilities, "elicitation", None) is not None
