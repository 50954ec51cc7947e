"""The `hooks` blocks of the settings files: which commands run at which events, for which tools.

Each file may hold `{"hooks": {Event: [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "...",
"timeout": 30}]}]}}` (Claude Code's format). Files load in the permissions' order (user, `.claude/settings.json`,
`.claude/settings.local.json`, `.agents/settings.json`, then `--settings`), restricted by `--setting-sources`; every
hook of every file counts. A part that cannot be understood — an unknown event, a hook that is not
`type: "command"`, a missing command, a key ram does not know (`"matchr"`, `"timout"`: the warning says which key
was meant; Claude Code's own `async`, `statusMessage`, `once` are named as ignored) — costs one warning naming the
file, and the rest loads. A file that is not
valid JSON is skipped here (the permission loader names it and fails closed). `disableAllHooks: true` switches every
command hook off, but only from the user's file or `--settings`: a cloned repository must not be able to turn off
the user's own guards.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from ...permissions.settings import near_miss
from ...settings_files import settings_files, user_settings_path
from ..spec import DEFAULT_TIMEOUT, HOOK_EVENTS, HookEvent

if TYPE_CHECKING:
    from ...trust.gate import TrustGate
    from ...trust.items import TrustItem


class CommandHook(msgspec.Struct, frozen=True):
    """One `type: "command"` hook from a settings file."""

    event: HookEvent
    command: str
    """Run by `/bin/sh -c`, as Claude Code runs it."""
    matcher: str = ""
    """Tool-name pattern (PreToolUse, PostToolUse), or the source (SessionStart), trigger (PreCompact) or
    notification type (Notification) it is for; empty: every one."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds before it is killed (its whole process group)."""
    source: str = ""
    """The file it came from, as shown to the user."""
    project: bool = False
    """True when that file belongs to the project (`.claude/…`, `.agents/…`) rather than to the user."""


GROUP_KEYS = ("matcher", "hooks")
"""The keys of a matcher group."""
HOOK_KEYS = ("type", "command", "timeout")
"""The keys of a command hook that ram applies."""
CLAUDE_CODE_HOOK_KEYS = ("async", "statusMessage", "once")
"""Claude Code's keys of a command hook that ram does not use (it runs every hook to its end, each time)."""


def _unknown_keys(value: dict[Any, Any], known: tuple[str, ...], ignored: tuple[str, ...], where: str) -> list[str]:
    """A warning per key of `value` that is not `known` (`ignored` ones: Claude Code's, named as such)."""
    warnings: list[str] = []
    for key in (str(key) for key in value):
        if key in known:
            continue
        if key in ignored:
            warnings.append(f"{where}: ram ignores Claude Code's `{key}`")
        else:
            warnings.append(f"{where}: unknown key `{key}`{near_miss(key, (*known, *ignored))} (ignored)")
    return warnings


class LoadedHooks(NamedTuple):
    hooks: list[CommandHook]
    warnings: list[str]
    """One line per part that was ignored, naming the file."""


def load_command_hooks(
    cwd: Path,
    env: Mapping[str, str],
    sources: Iterable[str] | None = None,
    flag_settings: str | None = None,
    *,
    trust: TrustGate | None,
) -> LoadedHooks:
    """Every command hook the settings files (of the kinds `sources` names) and `--settings` define; a project
    file's only where `trust` permits it (None: all of them)."""
    hooks: list[CommandHook] = []
    warnings: list[str] = []
    disabled = False
    user_file = user_settings_path(env)
    loaded: list[tuple[Any, str, bool]] = []
    for path in settings_files(cwd, env, sources):
        data = _read(path)
        if data is not None:
            loaded.append((data, _shown(path, cwd), path != user_file))
    if flag_settings is not None:
        data = _flag_value(flag_settings, cwd)
        if data is not None:
            loaded.append((data, "--settings", False))
    for data, shown, project in loaded:
        if not isinstance(data, dict):
            continue
        if data.get("disableAllHooks") is True:
            if project:
                warnings.append(f"{shown}: `disableAllHooks` is accepted only from the user settings (ignored)")
            else:
                disabled = True
        if "hooks" in data:
            found = parse_hooks(data["hooks"], shown, project, warnings)
            hooks += [hook for hook in found if not project or trust is None or trust.permits(trust_item(hook))]
    return LoadedHooks([] if disabled else hooks, warnings)


def trust_item(hook: CommandHook) -> TrustItem:
    """What the user approves when trusting `hook` (a project's)."""
    from ...trust.items import make_item

    where = f"{hook.event}({hook.matcher})" if hook.matcher else hook.event
    content = {"event": hook.event, "matcher": hook.matcher, "command": hook.command, "timeout": hook.timeout}
    return make_item("hook", hook.source, f"{where}: {hook.command}", content)


def parse_hooks(block: Any, source: str, project: bool, warnings: list[str]) -> list[CommandHook]:
    """The command hooks of one file's `hooks` value (warnings appended for what is ignored)."""
    if not isinstance(block, dict):
        warnings.append(f"{source}: `hooks` must be an object of events (ignored)")
        return []
    out: list[CommandHook] = []
    for event, groups in block.items():
        if event not in HOOK_EVENTS:
            warnings.append(f"{source}: ram has no {event!r} hook event; those hooks are ignored")
            continue
        if not isinstance(groups, list):
            warnings.append(f"{source}: `hooks.{event}` must be a list of matcher groups (ignored)")
            continue
        for number, group in enumerate(groups):
            where = f"{source}: `hooks.{event}[{number}]`"
            if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                warnings.append(f"{where} must be an object with a `hooks` list (ignored)")
                continue
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str):
                warnings.append(f"{where}: `matcher` must be a string (ignored)")
                continue
            warnings.extend(_unknown_keys(group, GROUP_KEYS, (), where))
            for index, hook in enumerate(group.get("hooks", [])):
                found = _command_hook(hook, f"{where}.hooks[{index}]", warnings)
                if found is not None:
                    command, timeout = found
                    out.append(CommandHook(event, command, matcher.strip(), timeout, source, project))
    return out


def _command_hook(hook: Any, where: str, warnings: list[str]) -> tuple[str, float] | None:
    if not isinstance(hook, dict):
        warnings.append(f"{where} must be an object (ignored)")
        return None
    kind = hook.get("type", "command")
    if kind != "command":
        warnings.append(f'{where}: ram runs only `type: "command"` hooks, not {kind!r} (ignored)')
        return None
    warnings.extend(_unknown_keys(hook, HOOK_KEYS, CLAUDE_CODE_HOOK_KEYS, where))
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{where}: `command` must be a non-empty string (ignored)")
        return None
    timeout = hook.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{where}: `timeout` must be a positive number of seconds; {DEFAULT_TIMEOUT:g} is used")
        timeout = DEFAULT_TIMEOUT
    return command, float(timeout)


def project_hooks_line(hooks: Iterable[CommandHook]) -> str | None:
    """The line a session starts with when the project defines hooks (they run commands on this machine), or
    None when it defines none."""
    ours = [hook for hook in hooks if hook.project]
    if not ours:
        return None
    files = ", ".join(dict.fromkeys(hook.source for hook in ours))
    events = ", ".join(dict.fromkeys(hook.event + (f"({hook.matcher})" if hook.matcher else "") for hook in ours))
    count = f"{len(ours)} hook command{'s' if len(ours) != 1 else ''}"
    return (
        f"{files} defines {count} that run on this machine, outside the sandbox, at: {events} "
        "(/hooks lists them; --setting-sources user leaves them out)"
    )


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # missing is normal; broken ones the permission loader names
        return None


def _flag_value(value: str, cwd: Path) -> Any:
    """`--settings JSON|PATH` decoded (None when it cannot be: the permission loader says why)."""
    if value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    path = Path(value).expanduser()
    return _read(path if path.is_absolute() else cwd / path)


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)
