"""Permission settings: the `permissions` blocks of the settings files, and the CLI's rule lists.

Files, in order (lists are merged; a later `defaultMode` wins):
1. the user's `$XDG_CONFIG_HOME/react-agent-mini/settings.json` (default `~/.config/...`),
2. `<workspace>/.claude/settings.json` and 3. `.claude/settings.local.json` (read as-is: Claude Code's format),
4. `<workspace>/.agents/settings.json`.

Each holds `{"permissions": {"allow": [...], "deny": [...], "ask": [...], "defaultMode": "..."}}`. A missing file
is fine; a broken one gives a warning naming the file and the problem, and everything else still loads: settings
never stop the agent from starting.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from .rules import (
    PERMISSION_MODES,
    RULE_KINDS,
    PermissionMode,
    RuleError,
    RuleKind,
    RuleSet,
    parse_rule,
    split_rule_list,
)

PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json", ".agents/settings.json")
"""Settings files inside the workspace, in load order."""


class LoadedPermissions(NamedTuple):
    """What the settings files say (unpacks as `rules, warnings, default_mode`)."""

    rules: RuleSet
    """Every rule from every file, merged."""
    warnings: list[str]
    """One line per problem, naming the file; shown to the user, never raised."""
    default_mode: PermissionMode | None
    """The last `defaultMode` found, or None."""


def user_settings_path(env: Mapping[str, str] | None = None) -> Path:
    """The user-level settings file."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME", "")
    # the XDG spec says a relative value is invalid and must be ignored
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "react-agent-mini" / "settings.json"


def settings_files(workspace: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Every settings file consulted, in load order (whether or not it exists)."""
    return [user_settings_path(env), *(workspace / name for name in PROJECT_SETTINGS)]


def load_permissions(workspace: Path, env: Mapping[str, str] | None = None) -> LoadedPermissions:
    """Rules, warnings and default mode from all settings files."""
    rules = RuleSet()
    warnings: list[str] = []
    mode: PermissionMode | None = None
    user_file, *project_files = settings_files(workspace, env)
    for path in (user_file, *project_files):
        found, file_warnings = load_settings_file(path, rules, workspace, user_level=path == user_file)
        warnings += file_warnings
        mode = found or mode
    return LoadedPermissions(rules, warnings, mode)


def load_settings_file(
    path: Path, rules: RuleSet, workspace: Path, *, user_level: bool = False
) -> tuple[PermissionMode | None, list[str]]:
    """Add the rules of one file to `rules`; its `defaultMode` (or None) and the warnings."""
    try:
        data: Any = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        return None, [f"{path}: cannot read it ({exc.strerror or exc}); its permission rules were ignored"]
    except msgspec.DecodeError as exc:
        return None, [f"{path}: invalid JSON ({exc}); its permission rules were ignored"]
    if not isinstance(data, dict):
        return None, [f"{path}: expected a JSON object at the top level; its permission rules were ignored"]
    block = data.get("permissions")
    if block is None:
        return None, []
    if not isinstance(block, dict):
        return None, [f"{path}: `permissions` must be an object; its permission rules were ignored"]
    problems: list[str] = []
    rule_warnings: list[str] = []
    # `/pattern` rules are relative to the project a file belongs to; the user file has none, so the workspace
    project_root = workspace
    for kind in RULE_KINDS:
        values = block.get(kind)
        if values is None:
            continue
        if not isinstance(values, list):
            problems.append(f"`permissions.{kind}` must be a list of rule strings")
            continue
        for i, text in enumerate(values):
            if not isinstance(text, str):
                problems.append(f"`permissions.{kind}[{i}]` is not a string")
            elif warning := rules.add(kind, text, str(path), project_root):
                rule_warnings.append(warning)
    mode = _file_mode(block.get("defaultMode"), user_level, problems)
    if problems:
        rule_warnings.insert(0, f"{path}: {'; '.join(problems)} (ignored)")
    return mode, rule_warnings


def _file_mode(value: object, user_level: bool, problems: list[str]) -> PermissionMode | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in PERMISSION_MODES:
        problems.append(f"`permissions.defaultMode` must be one of {', '.join(PERMISSION_MODES)}")
        return None
    if value == "bypassPermissions" and not user_level:
        # a cloned repository must not be able to switch every check off by shipping a settings file
        problems.append("`defaultMode: bypassPermissions` is accepted only from the user settings or the CLI")
        return None
    return value


def parse_mode(value: str) -> PermissionMode:
    """A `--permission-mode` value, or ValueError listing the valid ones."""
    if value not in PERMISSION_MODES:
        raise ValueError(f"unknown permission mode {value!r}; choose one of {', '.join(PERMISSION_MODES)}")
    return value


def parse_rule_list(values: str | Iterable[str]) -> list[str]:
    """Rule strings from CLI values, each comma- or space-separated outside parentheses."""
    if isinstance(values, str):
        values = [values]
    return [rule for value in values for rule in split_rule_list(value)]


def add_cli_rules(rules: RuleSet, allowed: str | Iterable[str] = (), disallowed: str | Iterable[str] = ()) -> list[str]:
    """Add `--allowed-tools` (allow) and `--disallowed-tools` (deny) rules; a warning for each that does not parse."""
    warnings: list[str] = []
    sources: tuple[tuple[RuleKind, str | Iterable[str], str], ...] = (
        ("allow", allowed, "--allowed-tools"),
        ("deny", disallowed, "--disallowed-tools"),
    )
    for kind, values, flag in sources:
        for text in parse_rule_list(values):
            try:
                rules.add_rule(kind, parse_rule(text, "cli"))
            except RuleError as exc:
                warnings.append(f"{flag}: ignored {text!r}: {exc}")
    return warnings
