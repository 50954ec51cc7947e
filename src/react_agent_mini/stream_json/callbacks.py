"""The client's callbacks as ram's own seams: `can_use_tool` as the permission policy's `Asker`, and the hooks an
`initialize` request registers (`hook_callback`) as `HookEntry`s.

A permission ask becomes a `can_use_tool` control request carrying the tool, its input, the call's id, a summary,
the reason and the narrow rules an "always" answer would record (as `addRules` suggestions). The answer is a whole
decision: allow (with the input to run, and permission updates: rules recorded for the session, a mode switch) or
deny (its message is the call's result; `interrupt: true` ends the turn). Each registered hook callback id becomes
one hook whose handler asks the client and reads its answer as Claude Code's hook output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..hooks import DEFAULT_TIMEOUT, HOOK_EVENTS, HookEntry, HookEvent, HookHandler, HookOutput, Hooks
from ..permissions.policy import Allow, Answer, Decision, Deny, PermissionPolicy, PermissionRequest
from ..permissions.rules import RuleKind
from .control import ControlChannel, ControlError

FIRED_HOOKS = frozenset(HOOK_EVENTS)
"""The hook events ram runs (all it knows; SessionStart fires before `initialize` can register one)."""

DENIED = "The user denied this tool use."
"""A deny answer's message when the client gave none."""


class ClientAsker:
    """Asks the client whether a call may run (`--permission-prompt-tool stdio`)."""

    def __init__(
        self,
        channel: ControlChannel,
        policy: Callable[[], PermissionPolicy],
        set_mode: Callable[[str], str | None],
        complain: Callable[[str], None],
    ) -> None:
        self.channel = channel
        self.policy = policy
        """The session's policy (looked up each time: its rules are replaced when settings are re-read)."""
        self.set_mode = set_mode
        """Switches the permission mode as the client asked; the reason when it may not."""
        self.complain = complain
        """Writes one line on stderr."""

    async def __call__(self, request: PermissionRequest) -> Answer | Decision:
        fields: dict[str, Any] = {
            "tool_name": request.tool,
            "display_name": request.tool,
            "input": dict(request.args),
            "tool_use_id": request.tool_use_id or None,
            "permission_suggestions": self.suggestions(request),
            "description": request.summary,
            "decision_reason": request.reason,
        }
        if request.blocked_path:
            fields["blocked_path"] = request.blocked_path
        answer = await self.channel.request("can_use_tool", fields)
        behavior = answer.get("behavior")
        if behavior == "allow":
            self.apply_updates(answer.get("updatedPermissions"))
            updated = answer.get("updatedInput")
            if isinstance(updated, Mapping) and dict(updated) != dict(request.args):
                return Allow(updated_input=dict(updated))
            return Allow()
        if behavior == "deny":
            message = answer.get("message")
            return Deny(
                message if isinstance(message, str) and message else DENIED, end_turn=answer.get("interrupt") is True
            )
        raise ControlError(f"the can_use_tool answer has no behavior allow or deny (got {behavior!r})")

    def suggestions(self, request: PermissionRequest) -> list[dict[str, Any]]:
        """What an "always" answer could record, in Claude Code's permission-update shape."""
        out: list[dict[str, Any]] = []
        if request.always_rules:
            rules = [rule_value(text) for text in request.always_rules]
            out.append({"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"})
        if request.family == "edit" and not request.outside_workspace and self.policy().mode == "default":
            out.append({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
        return out

    def apply_updates(self, updates: object) -> None:
        """An allow answer's `updatedPermissions`: rules are kept for this session whatever their destination
        (ram writes no settings file for a client); directories are ignored (the workspace is one folder)."""
        if not isinstance(updates, list):
            return
        for update in updates:
            if not isinstance(update, Mapping):
                continue
            kind = update.get("type")
            if kind in ("addRules", "replaceRules", "removeRules"):
                behavior = update.get("behavior", "allow")
                if behavior not in ("allow", "deny", "ask"):
                    continue
                for text in _rule_texts(update.get("rules")):
                    self._rule(kind == "removeRules", cast(RuleKind, behavior), text)
            elif kind == "setMode" and isinstance(update.get("mode"), str):
                refused = self.set_mode(str(update["mode"]))
                if refused:
                    self.complain(f"warning: can_use_tool: {refused}")

    def _rule(self, remove: bool, behavior: RuleKind, text: str) -> None:
        rules = self.policy().rules
        if remove:
            rules.remove(behavior, text, "session")
            return
        problem = rules.add(behavior, text, "session")
        if problem:
            self.complain(f"warning: can_use_tool: {problem}")


_RULE = re.compile(r"(?s)([^()]+)\((.*)\)")


def rule_value(text: str) -> dict[str, str]:
    """`Bash(git diff:*)` as `{"toolName": "Bash", "ruleContent": "git diff:*"}`; `mcp__s__t` as its tool name."""
    found = _RULE.fullmatch(text)
    if found is None:
        return {"toolName": text}
    return {"toolName": found[1], "ruleContent": found[2]}


def _rule_texts(rules: object) -> list[str]:
    out: list[str] = []
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, Mapping) and isinstance(rule.get("toolName"), str):
            content = rule.get("ruleContent")
            out.append(f"{rule['toolName']}({content})" if isinstance(content, str) else str(rule["toolName"]))
    return out


def register_hooks(
    hooks: Hooks, registered: Mapping[str, Any], channel: ControlChannel, complain: Callable[[str], None]
) -> int:
    """Add one hook per callback id of `initialize.hooks` (`{Event: [{matcher, hookCallbackIds, timeout}]}`);
    how many were added. Events ram does not know are skipped with a line on stderr."""
    added = 0
    for event, matchers in registered.items():
        if event not in HOOK_EVENTS:
            complain(f"warning: initialize: ram has no {event} hook event; those hooks are ignored")
            continue
        if event not in FIRED_HOOKS:
            complain(f"warning: initialize: ram does not fire {event} hooks yet; registered anyway")
        for matcher in matchers if isinstance(matchers, list) else []:
            if not isinstance(matcher, Mapping):
                continue
            ids = matcher.get("hookCallbackIds")
            timeout = matcher.get("timeout")
            seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT
            pattern = matcher.get("matcher")
            for callback_id in ids if isinstance(ids, list) else []:
                if not isinstance(callback_id, str):
                    continue
                kind: HookEvent = event
                handler = _hook_handler(channel, callback_id, kind)
                label = f"SDK hook {callback_id}"
                hooks.add(HookEntry(kind, handler, pattern if isinstance(pattern, str) else "", seconds, label))
                added += 1
    return added


GONE = "the program that registered this PreToolUse hook has gone away, so the call was not run"


def _hook_handler(channel: ControlChannel, callback_id: str, event: HookEvent) -> HookHandler:
    async def handler(payload: dict[str, Any]) -> HookOutput:
        fields = {"callback_id": callback_id, "input": payload, "tool_use_id": payload.get("tool_use_id")}
        try:
            answer = await channel.request("hook_callback", fields)
        except ControlError:
            if channel.closed and event == "PreToolUse":  # a guard nobody can run must not let the call through
                return HookOutput(block=True, reason=GONE)
            raise
        return HookOutput.from_json(answer)

    return handler
