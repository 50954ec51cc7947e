"""A session's sandbox as the Bash tool and the permission policy hold it: the configuration from the start, the
machinery (`runtime`) only from the first Bash command on.

The first command (or the first permission decision that asks whether commands are confined) finds a working
bwrap. When there is none: with the sandbox asked for explicitly (a flag or a settings file), every command fails
with a result saying why (the CLI has already refused to start: exit 2); otherwise one line says so, once per
session, and commands run as they would without the sandbox.

`read_only` names workspace files and folders the sandbox keeps from commands besides the ones it always protects:
the files the session's hook commands run (`hooks.command.files`), which run outside the sandbox, and ram's own
config and data folders when the workspace holds them (`ram` started in the home directory): a command must not
write the user's settings, trust store, transcripts or the checkpoints' private git config. One that exists
is read-only, the way a path an Edit deny rule covers is (`masks.frozen_paths`: the rules the runtime is handed
each command carry one deny rule per such path, in a copy of the permission rules made for the sandbox alone — the
permission checker's own rules are unchanged); one that does not exist yet and that a command creates is moved
aside after it, as a created `.mcp.json` is (the runtime's `missing`, extended by `_Guarding`). Both are looked at
afresh before each command.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .settings import SandboxConfig, unavailable_message

if TYPE_CHECKING:
    from ..permissions.rules import RuleSet
    from .runtime import Owner, Runtime


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
        read_only: Sequence[Path] | Callable[[], Sequence[Path]] = (),
    ) -> None:
        self.config = config
        self.workspace = workspace.resolve()
        self._read_only = read_only
        self._read_only_paths: tuple[Path, ...] | None = None
        self.rules = _with_read_only(rules, lambda: self.read_only)
        """The permission rules as they are now (the policy re-reads its settings files): Read deny rules hide, Edit
        deny rules (and `read_only`) keep read-only."""
        self.env = os.environ if env is None else env
        self.notify = notify
        self._runtime: Runtime | None = None
        self._problem: str | None = None
        """Why the sandbox cannot run here, once that was found out."""
        self.notes_said: set[str] = set()
        """Lines already shown this session (each is shown once)."""

    @property
    def read_only(self) -> tuple[Path, ...]:
        """Workspace paths kept read-only besides the built-in ones (the files hook commands run, ram's own folders
        when they lie in the workspace); worked out at the first command, not when the session is built."""
        if self._read_only_paths is None:
            given = self._read_only() if callable(self._read_only) else self._read_only
            self._read_only_paths = tuple(given)
        return self._read_only_paths

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
            elif self.read_only:
                self._runtime = _guarding()(self, found.binary, self.read_only)
            else:
                self._runtime = Runtime(self, found.binary)
        if self._runtime is not None:
            return self._runtime, ""
        if self.config.explicit:
            return None, unavailable_message(self.config, self._problem or "")
        return None, ""

    def close(self) -> None:
        """The session is over: no more commands (`runtime.Runtime.close`)."""
        if self._runtime is not None:
            self._runtime.close()

    def confines_commands(self) -> bool:
        """True when commands really run in the sandbox, without network: then they cannot change anything
        outside the workspace (acceptEdits lets them run unasked)."""
        if not self.config.enabled or self.config.network:
            return False
        runtime, _ = self.runtime()
        return runtime is not None


def _with_read_only(rules: Callable[[], RuleSet], paths: Callable[[], Sequence[Path]]) -> Callable[[], RuleSet]:
    """`rules()` plus, in a copy, an Edit deny rule for each of `paths()` (an absolute `//…` pattern matching only
    that path): what the sandbox reads to keep them read-only (`rules()` itself when there are none)."""

    def enforced() -> RuleSet:
        extra = paths()
        if not extra:
            return rules()
        from ..permissions.rules import Rule, escape_pattern

        copy = rules().copy()
        for path in extra:
            copy.add_rule("deny", Rule("Edit", "/" + escape_pattern(str(path)), "ram keeps it from commands"))
        return copy

    return enforced


@functools.cache
def _guarding() -> Callable[[Owner, str, Sequence[Path]], Runtime]:
    """The runtime that also moves aside a `read_only` path a command created (made at the first command: the
    runtime module loads only then)."""
    from .runtime import Runtime

    class _Guarding(Runtime):
        def __init__(self, sandbox: Owner, binary: str, read_only: Sequence[Path]) -> None:
            super().__init__(sandbox, binary)
            self.read_only = tuple(read_only)

        def guarded_missing(self, roots: list[Path]) -> list[Path]:
            missing = super().guarded_missing(roots)
            if self.sandbox.config.mode != "workspace-write":
                return missing
            absent = [path for path in self.read_only if not os.path.lexists(path) and path not in missing]
            return [*missing, *absent]

    return _Guarding
