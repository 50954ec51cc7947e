"""The permission mode as the SDK client knows it: its `dontAsk` and `auto` stand for our `default` (reported back
as the client named them), `bypassPermissions` only when allowed at launch, and who is asked (the client, over
`can_use_tool`, or nobody) following the mode. A switch is announced with a `system/status` line.
"""

from __future__ import annotations

from collections.abc import Callable

from ..host import SessionHost
from ..permission_modes import SDK_PERMISSION_MODES, is_sdk_only
from ..permissions.policy import Asker, PermissionPolicy
from ..permissions.rules import PERMISSION_MODES, PermissionMode


class Modes:
    """One session's permission mode, switched by the client."""

    def __init__(self, given: str, ask_client: bool, allow_bypass: bool) -> None:
        self.ask_client, self.allow_bypass = ask_client, allow_bypass
        self.asker: Asker | None = None
        """Who asks the client (`callbacks.ClientAsker`), when asking it is on."""
        self.alias = given if is_sdk_only(given) else ""
        """The SDK mode reported in place of our `default` (`dontAsk`, `auto`), or ""."""
        self.host: SessionHost | None = None
        self.announce: Callable[[str], None] = lambda mode: None
        """Writes the `system/status` line naming the mode now in effect."""

    def attach(self, host: SessionHost) -> None:
        """The session built: `dontAsk` asks nobody; a session started in bypassPermissions may go back to it."""
        self.host = host
        if self.alias == "dontAsk":
            host.policy.asker = None
        if host.policy.mode == "bypassPermissions":  # started in it (a flag or a settings file)
            self.allow_bypass = True

    def policy(self) -> PermissionPolicy:
        assert self.host is not None
        return self.host.policy

    def current(self) -> str:
        """The mode as the client knows it."""
        assert self.host is not None
        mode = self.host.policy.mode
        return self.alias if self.alias and mode == "default" else mode

    def set(self, mode: str) -> str | None:
        """Switch the permission mode; why not, when it may not be."""
        if mode not in SDK_PERMISSION_MODES:
            return f"unknown permission mode {mode!r} (one of {', '.join(SDK_PERMISSION_MODES)})"
        if mode == "bypassPermissions" and not self.allow_bypass:
            return (
                "bypassPermissions can be chosen only when ram was started with --allow-dangerously-skip-permissions "
                "or --permission-mode bypassPermissions"
            )
        assert self.host is not None
        policy = self.host.policy
        ours: PermissionMode = mode if mode in PERMISSION_MODES else "default"
        policy.mode = ours
        self.alias = mode if is_sdk_only(mode) else ""
        policy.asker = None if mode == "dontAsk" or not self.ask_client else self.asker
        return None

    def switch(self, mode: str) -> str | None:
        """`set`, and on success the `system/status` line saying so (a `can_use_tool` answer's `setMode`)."""
        refused = self.set(mode)
        if refused is None:
            self.announce(self.current())
        return refused
