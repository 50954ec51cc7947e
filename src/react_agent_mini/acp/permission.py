"""Our "ask" as `session/request_permission`: the session's `Asker` when an editor drives it.

The request names the call's card by its tool call id, which the editor already shows as `pending` with its title
and diff, and carries the card's title and kind too (`Edit calc.py`, ``Run `make test` ``), for an editor that shows
the request on its own. It offers up to four options:

- allow once: run it;
- allow always: run it, and record the narrow rules of the REPL's `a` (`Edit(src/app.py)`, `Bash(git diff:*)`)
  as session rules;
- reject once: deny it and end the turn, as the REPL's "no" does (and as claude-code-acp's reject does, with deny
  plus interrupt). The model reads that the user refused;
- reject always: the same, and the same narrow rules are also recorded as session deny rules, so that exact
  call is refused without asking for the rest of the session.

The two "always" options are offered only when such rules exist. Otherwise they would mean no more than "once".
If the client answers `cancelled` (it does so for a request still open when it cancels the turn), the call is
denied. If the request fails (an error answer, a closed connection), the policy denies the call and ends the turn,
as it does for any asker that raises.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from ..permissions.policy import Answer, Decision, Deny, PermissionPolicy, PermissionRequest
from .cards import card
from .link import ClientLink

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = "allow_once", "allow_always", "reject_once", "reject_always"
CANCELLED = "The user cancelled the turn, so this tool use was not run. Wait for the user to tell you how to proceed."


class EditorAsker:
    """Asks the editor whether a call may run."""

    def __init__(self, link: ClientLink, policy: Callable[[], PermissionPolicy], root: Path) -> None:
        self.link = link
        self.policy = policy
        """The session's policy (looked up each time: it exists only once the session is built)."""
        self.root = root
        """The workspace, which the card's title shows paths against."""

    async def __call__(self, request: PermissionRequest) -> Answer | Decision:
        shown = card(request.tool, request.args, self.root, lambda _path: None)  # the title, not the diff
        response = await self.link.conn.request_permission(
            session_id=self.link.session_id,
            tool_call=ToolCallUpdate(
                tool_call_id=request.tool_use_id,
                title=shown.title,
                kind=shown.kind,
                raw_input=dict(request.args),
                field_meta={"ram": _why(request)},
            ),
            options=options(request),
        )
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            return Deny(CANCELLED, end_turn=True)
        if outcome.option_id == ALLOW_ONCE:
            return "yes"
        if outcome.option_id == ALLOW_ALWAYS:
            return "always"
        if outcome.option_id == REJECT_ALWAYS:
            policy = self.policy()
            for rule in request.always_rules:
                if problem := policy.rules.add("deny", rule, "session"):
                    self.link.complain(f"warning: {problem}")
        return "no"  # reject once, reject always, or an option we never offered


def options(request: PermissionRequest) -> list[PermissionOption]:
    """The choices for `request`, in the order an editor shows them."""
    rules = request.always_rule
    offered = [PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once")]
    if rules:
        offered.append(PermissionOption(option_id=ALLOW_ALWAYS, name=f"Always allow {rules}", kind="allow_always"))
    offered.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
    if rules:
        offered.append(PermissionOption(option_id=REJECT_ALWAYS, name=f"Always reject {rules}", kind="reject_always"))
    return offered


def _why(request: PermissionRequest) -> dict[str, str]:
    """What the request is about, in words, for a client that shows more than the card (`_meta.ram`)."""
    return {"summary": request.summary, "reason": request.reason}
