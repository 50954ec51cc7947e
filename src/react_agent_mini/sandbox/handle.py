"""A session's sandbox as the Bash tool and the permission policy hold it: the configuration from the start, the
machinery (`runtime`) only from the first Bash command on.

The first command (or the first permission decision that asks whether commands are confined) finds a working
bwrap. When there is none: with the sandbox asked for explicitly (a flag or a settings file), every command fails
with a result saying why (the CLI has already refused to start: exit 2); otherwise one line says so, once per
session, and commands run as they would without the sandbox.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .settings import SandboxConfig, unavailable_message

if TYPE_CHECKING:
    from ..permissions.rules import RuleSet
    from .runtime import Runtime


def warn_on_stderr(line: str) -> None:
    """The default way to say the one line: on stderr, as setup warnings are."""
    from ..terminal_text import visible

    try:
        sys.stderr.write(f"warning: {visible(line)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed
        pass


class Sandbox:
    """The sandbox of one session's Bash commands."""

    def __init__(
        self,
        config: SandboxConfig,
        workspace: Path,
        rules: Callable[[], RuleSet],
        *,
        env: Mapping[str, str] | None = None,
        notify: Callable[[str], None] = warn_on_stderr,
    ) -> None:
        self.config = config
        self.workspace = workspace.resolve()
        self.rules = rules
        """The permission rules as they are now (the policy re-reads its settings files): Read deny rules hide."""
        self.env = os.environ if env is None else env
        self.notify = notify
        self._runtime: Runtime | None = None
        self._problem: str | None = None
        """Why the sandbox cannot run here, once that was found out."""
        self.notes_said: set[str] = set()
        """Lines already shown this session (each is shown once)."""

    def runtime(self) -> tuple[Runtime | None, str]:
        """The machinery for the next command, or None when commands run without the sandbox; and, when they must
        not run at all (the sandbox was asked for and cannot run), why."""
        if not self.config.enabled:
            return None, ""
        if self._runtime is None and self._problem is None:
            from .bwrap import find_bwrap
            from .runtime import Runtime

            found = find_bwrap(self.env, self.config.network)
            if found.binary is None:
                self._problem = found.problem
                if not self.config.explicit:
                    self.notify(
                        f"commands run without the OS sandbox: it cannot run here ({found.problem}); "
                        "--sandbox off stops trying"
                    )
            else:
                self._runtime = Runtime(self, found.binary)
        if self._runtime is not None:
            return self._runtime, ""
        if self.config.explicit:
            return None, unavailable_message(self.config, self._problem or "")
        return None, ""

    def confines_commands(self) -> bool:
        """True when commands really run in the sandbox, without network: then they cannot change anything
        outside the workspace (acceptEdits lets them run unasked)."""
        if not self.config.enabled or self.config.network:
            return False
        runtime, _ = self.runtime()
        return runtime is not None
