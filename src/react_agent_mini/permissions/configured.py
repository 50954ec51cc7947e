"""The permission policy a session starts with: settings files and command-line flags, kept up to date.

`build_policy` reads the settings files (`permissions.settings`) and adds the flags' rules; `PermissionSettings`
re-reads the files when one changes, so a fixed file takes effect without a restart. A file that cannot be
understood makes the policy fail closed (every call is asked for; headless runs refuse to start).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ..tools.base import ShellState
from .policy import Asker, PermissionPolicy
from .rules import PermissionMode
from .settings import (
    LoadedPermissions,
    SettingsError,
    add_cli_rules,
    load_permissions,
    load_settings_value,
    settings_stamp,
)

if TYPE_CHECKING:
    from ..trust.gate import TrustGate


class PermissionOptions(msgspec.Struct, frozen=True):
    """What the command line says about permissions."""

    mode: PermissionMode | None = None
    """`--permission-mode`; None: the settings files' `defaultMode`, else `default`."""
    allowed_tools: tuple[str, ...] = ()
    """`--allowed-tools` values (rules to allow)."""
    disallowed_tools: tuple[str, ...] = ()
    """`--disallowed-tools` values (rules to deny)."""
    setting_sources: tuple[str, ...] | None = None
    """`--setting-sources`: which settings files load (`user`, `project`, `local`); None: all of them."""
    settings: str | None = None
    """`--settings JSON|PATH`: one more settings object, applied after the files."""


def build_policy(
    cwd: Path,
    options: PermissionOptions,
    asker: Asker | None,
    shell: ShellState,
    env: Mapping[str, str] | None = None,
    *,
    trust: TrustGate | None,
) -> tuple[PermissionPolicy, list[str], PermissionSettings]:
    """The permission policy from settings files and flags, one warning line per problem found, and what keeps
    the policy up to date with the files (`settings.errors` lists the files that make it fail closed). `trust`:
    which of the project files' allow rules and modes apply (see `settings.load_permissions`)."""
    settings = PermissionSettings(cwd, options, os.environ if env is None else env, trust)
    loaded, cli_warnings = settings.read()
    allow_write = settings.env.get("ALLOW_WRITE") == "1"
    policy = PermissionPolicy(cwd, settings.mode, loaded.rules, asker, allow_write=allow_write, shell=shell)
    policy.ask_all = settings.ask_all_reason()
    return policy, loaded.warnings + cli_warnings, settings


class PermissionSettings:
    """The rules the settings files and flags give, re-read when a settings file changes (the REPL checks before
    each message, so fixing a broken file takes effect without a restart). A file that cannot be understood makes
    the policy fail closed: every call is asked for (headless runs refuse to start instead)."""

    def __init__(
        self, cwd: Path, options: PermissionOptions, env: Mapping[str, str], trust: TrustGate | None = None
    ) -> None:
        self.cwd, self.options, self.env, self.trust = cwd, options, env, trust
        self.errors: list[SettingsError] = []
        """The files whose rules cannot be known, as of the last read."""
        self.mode: PermissionMode = "default"
        """The mode the flags and files give, as of the last read."""
        self._stamp: object = None

    def read(self) -> tuple[LoadedPermissions, list[str]]:
        """What the files say now, with the flags' rules added; and the flags' warnings."""
        sources = self.options.setting_sources
        self._stamp = settings_stamp(self.cwd, self.env, sources)  # before reading: a change shows next time
        loaded = load_permissions(self.cwd, self.env, sources, trust=self.trust)
        default_mode = loaded.default_mode
        if self.options.settings is not None:
            given = load_settings_value(self.options.settings, loaded.rules, self.cwd)
            loaded.warnings.extend(given.warnings)
            if given.error is not None:
                loaded.errors.append(given.error)
            default_mode = given.mode or default_mode
        cli_warnings = add_cli_rules(loaded.rules, self.options.allowed_tools, self.options.disallowed_tools)
        self.errors = loaded.errors
        self.mode = self.options.mode or default_mode or "default"
        return loaded, cli_warnings

    def ask_all_reason(self) -> str | None:
        """Why every call is asked for (the policy's `ask_all`), or None when the rules are known."""
        if not self.errors:
            return None
        files = ", ".join(dict.fromkeys(error.file for error in self.errors))
        return f"{files} could not be understood, so every call is asked for until it is fixed"

    def refresh(self, policy: PermissionPolicy) -> list[str]:
        """If a settings file changed since the last read, read them again into `policy`, keeping the rules recorded
        this session (and a mode switched since, unless the files changed theirs); the lines to show."""
        if settings_stamp(self.cwd, self.env, self.options.setting_sources) == self._stamp:
            return []
        was_locked, old_mode = bool(self.errors), self.mode
        loaded, _ = self.read()  # the flags' warnings were shown at the start
        for kind, rule in policy.rules.rules():
            if rule.source == "session":
                loaded.rules.add_rule(kind, rule)
        policy.rules = loaded.rules
        if self.mode != old_mode:
            policy.mode = self.mode
        policy.ask_all = self.ask_all_reason()
        lines = [f"warning: {warning}" for warning in loaded.warnings]
        left_out = self.trust.left_out_line() if self.trust is not None else None
        if left_out:
            lines.append(f"warning: {left_out}")
        if self.errors:
            return lines + [f"error: {error.text} — {REPL_FAIL_CLOSED}" for error in self.errors]
        if was_locked:
            return [*lines, "permission settings read again: their rules apply, calls are no longer all asked for"]
        return [*lines, "permission settings changed: read again"]


REPL_FAIL_CLOSED = (
    "fix it or move it away; until then every tool call is asked for (it is read again before each message)"
)
"""What the REPL adds to the line naming a settings file that cannot be understood."""
HEADLESS_FAIL_CLOSED = "fix it or move it away; nothing runs while its permission rules are unknown"
"""What a headless run adds to that line before it exits (2)."""
