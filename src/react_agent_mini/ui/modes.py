"""Shift+Tab at the prompt: the permission mode cycles default → acceptEdits → plan → default, as Claude Code's does
(bypassPermissions is never entered this way: a mode that asks nothing is chosen at start, with its flag; from it,
Shift+Tab goes back to default). The mode is shown at the start of the prompt line while it is not default.

The mode lives in the session's permission policy once the session is built; a press before that is kept and
applied when it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..permissions.policy import PermissionPolicy
    from ..permissions.rules.grammar import PermissionMode

CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan")

LABELS: dict[str, str] = {
    "acceptEdits": "⏵⏵ accept edits",
    "plan": "⏸ plan mode",
    "bypassPermissions": "bypass permissions",
}
"""What the prompt line shows before `> ` in each mode but default."""


def next_mode(mode: str) -> PermissionMode:
    """The mode after `mode` in the cycle (default for one outside it)."""
    if mode not in CYCLE:
        return "default"
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


class ModeSwitch:
    """The permission mode the prompt shows and Shift+Tab changes."""

    def __init__(self) -> None:
        self.policy: PermissionPolicy | None = None
        self._pending: PermissionMode | None = None

    @property
    def mode(self) -> str:
        if self.policy is not None:
            return self.policy.mode
        return self._pending or "default"

    def cycle(self) -> None:
        new = next_mode(self.mode)
        if self.policy is not None:
            self.policy.mode = new
        else:
            self._pending = new

    def attach(self, policy: PermissionPolicy) -> None:
        """The session is built: its policy holds the mode from now on (a press made before counts)."""
        self.policy = policy
        if self._pending is not None:
            policy.mode = self._pending
            self._pending = None

    def label(self) -> str:
        """The prompt line's mode label ("" in default mode)."""
        return LABELS.get(self.mode, "")
