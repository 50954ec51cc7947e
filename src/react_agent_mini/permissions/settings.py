"""Permission settings: the `permissions` blocks of the settings files, and the CLI's rule lists.

Files, in order (lists are merged; a later `defaultMode` wins; where they are: `settings_files`, below this
package and the other readers of these files):
1. the user's `$XDG_CONFIG_HOME/react-agent-mini/settings.json` (default `~/.config/...`),
2. `<workspace>/.claude/settings.json` and 3. `.claude/settings.local.json` (read as-is: Claude Code's format),
4. `<workspace>/.agents/settings.json`.

`sources` (`--setting-sources user,project,local`) picks among them: `user` is file 1, `project` files 2 and 4,
`local` file 3. `--settings JSON|PATH` adds one more on top (`load_settings_value`), read as a user-level file.

Each holds `{"permissions": {"allow": [...], "deny": [...], "ask": [...], "defaultMode": "..."}}`. A missing file
is fine. A file that exists but whose deny or ask rules cannot be known fails closed: it cannot be read, it is not
valid JSON (the error names the line and column), its top level or `permissions` is not an object, `deny`/`ask` is
not a list of strings, or one of those rules does not parse. That is a `SettingsError`: headless runs refuse to
start, the REPL asks for every call until the file is fixed. Problems that can only make the agent ask more — an
allow rule that does not parse, an unknown `defaultMode` — are warnings, and the rest of the file applies.

Keys are checked, so a misspelling never drops a rule silently (`check_keys`). Inside `permissions`, a key that is
neither ram's (`allow`, `deny`, `ask`, `defaultMode`) nor one of Claude Code's that ram does not use
(`additionalDirectories`, …: one warning) fails closed like a deny rule that does not parse: `"dney": [...]` may be
the deny rule the user counts on. At the top level, a key that is neither one ram reads (`SETTINGS_KEYS`) nor one
of Claude Code's own that ram knowingly ignores (`CLAUDE_CODE_KEYS`: `env`, `model`, …) costs one warning naming the
key and the file; a near miss says which key was meant (`did you mean `permissions`?`). Claude Code's keys are
passed over in silence in Claude Code's own files (`.claude/…`) and named once ("ram ignores") in ram's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from ..settings_files import settings_files, user_settings_path
from .rules import (
    PERMISSION_MODES,
    RULE_KINDS,
    PermissionMode,
    Rule,
    RuleError,
    RuleKind,
    RuleSet,
    parse_rule,
    split_rule_list,
)

if TYPE_CHECKING:
    from ..trust.gate import TrustGate
    from ..trust.items import ItemKind

SETTINGS_KEYS = (
    "permissions",
    "hooks",
    "sandbox",
    "shellEnvironment",
    "webSearch",
    "trustedFolders",
    "disableAllHooks",
    "$schema",
)
"""The top-level keys ram reads from a settings file (each by its own part: permissions here, `hooks` in
`hooks.command.config`, `sandbox` in `sandbox.settings`, `webSearch` in `web.search_config`, `trustedFolders` in
`trust.store`)."""
FLAG_KEYS = ("permissions", "hooks", "disableAllHooks", "$schema")
"""The keys ram applies from `--settings`."""
CLAUDE_CODE_KEYS = frozenset(
    {
        "advisorModel",
        "agent",
        "allowedMcpServers",
        "allowManagedHooksOnly",
        "allowManagedPermissionRulesOnly",
        "alwaysThinkingEnabled",
        "apiKeyHelper",
        "attribution",
        "autoCompactEnabled",
        "autoMemoryDirectory",
        "autoMemoryEnabled",
        "autoMode",
        "autoScrollEnabled",
        "autoUpdatesChannel",
        "availableModels",
        "awsAuthRefresh",
        "awsCredentialExport",
        "cleanupPeriodDays",
        "companyAnnouncements",
        "deniedMcpServers",
        "diffTool",
        "disableAutoMode",
        "disableBundledSkills",
        "disableBypassPermissionsMode",
        "disabledMcpjsonServers",
        "disableSkillShellExecution",
        "editorMode",
        "effortLevel",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "enabledPlugins",
        "env",
        "extraKnownMarketplaces",
        "fallbackModel",
        "fileCheckpointingEnabled",
        "forceLoginMethod",
        "forceLoginOrgUUID",
        "includeCoAuthoredBy",
        "language",
        "model",
        "otelHeadersHelper",
        "outputStyle",
        "plansDirectory",
        "prefersReducedMotion",
        "respectGitignore",
        "showTurnDuration",
        "skipDangerousModePermissionPrompt",
        "spinnerTipsEnabled",
        "statusLine",
        "strictKnownMarketplaces",
        "terminalProgressBarEnabled",
        "theme",
        "verbose",
        "worktree",
    }
)
"""Claude Code's own settings (its documented `settings.json` keys) that ram does not use: a `.claude/settings.json`
written for Claude Code holds them, and they are no misspelling."""
PERMISSION_KEYS = (*RULE_KINDS, "defaultMode")
"""The keys of a `permissions` block that ram applies."""
CLAUDE_CODE_PERMISSION_KEYS = frozenset({"additionalDirectories", "disableBypassPermissionsMode", "disableAutoMode"})
"""Claude Code's `permissions` keys that ram does not use: one warning (they are not rules, so nothing fails)."""


def near_miss(key: str, known: Iterable[str]) -> str:
    """` (did you mean `deny`?)` when `key` looks like a misspelling of one of `known`, else ""."""
    import difflib

    names = {name.casefold(): name for name in known}
    found = difflib.get_close_matches(key.casefold(), list(names), n=1, cutoff=0.6)
    return f" (did you mean `{names[found[0]]}`?)" if found else ""


def check_keys(data: Mapping[str, Any], shown: str, *, claude_file: bool) -> list[str]:
    """One warning per top-level key of a settings file that ram does not read (`shown`: the file as the user
    knows it). Claude Code's own keys are no warning in its files (`claude_file`), one soft line in ram's."""
    warnings: list[str] = []
    ignored: list[str] = []
    for key in (str(key) for key in data):
        if key in SETTINGS_KEYS:
            continue
        if key in CLAUDE_CODE_KEYS:
            ignored.append(f"`{key}`")
            continue
        hint = near_miss(key, (*SETTINGS_KEYS, *CLAUDE_CODE_KEYS))
        warnings.append(f"{shown}: unknown key `{key}`{hint}; ram ignores it")
    if ignored and not claude_file:
        warnings.append(f"{shown}: ram ignores Claude Code's {', '.join(ignored)}")
    return warnings


class SettingsError(msgspec.Struct, frozen=True):
    """A settings file that exists but whose deny or ask rules cannot be known, so it fails closed."""

    file: str
    """The file as shown to the user: relative to the workspace when inside it."""
    message: str
    """What is wrong: `Expecting ',' delimiter`, `` `permissions.deny` must be a list of rule strings``."""
    line: int | None = None
    """1-based line of a syntax error (None for other problems)."""
    column: int | None = None
    """1-based column of a syntax error."""

    @property
    def text(self) -> str:
        """`.claude/settings.json line 4, column 9: Expecting ',' delimiter`"""
        where = f" line {self.line}, column {self.column}" if self.line is not None else ""
        return f"{self.file}{where}: {self.message}"


class LoadedPermissions(NamedTuple):
    """What the settings files say (unpacks as `rules, warnings, default_mode, errors`)."""

    rules: RuleSet
    """Every rule from every file, merged (from a file with an error, only the deny and ask rules understood)."""
    warnings: list[str]
    """One line per problem that only makes the agent ask more, naming the file; shown to the user."""
    default_mode: PermissionMode | None
    """The last `defaultMode` found (never from a file with an error), or None."""
    errors: list[SettingsError]
    """Files whose rules cannot be known: the caller must fail closed while there is any."""


class FileSettings(NamedTuple):
    """What one settings file gave."""

    mode: PermissionMode | None
    """Its `defaultMode`, or None."""
    warnings: list[str]
    """Problems that only make the agent ask more."""
    error: SettingsError | None
    """Why its rules cannot be known, or None."""


def load_permissions(
    workspace: Path,
    env: Mapping[str, str] | None = None,
    sources: Iterable[str] | None = None,
    *,
    trust: TrustGate | None,
) -> LoadedPermissions:
    """Rules, warnings, default mode and errors from the settings files (of the kinds `sources` names). A project
    file's allow rules and `defaultMode: acceptEdits` apply only where `trust` permits them (None: everywhere — for
    callers that already know the folder is trusted); its deny and ask rules always do."""
    rules = RuleSet()
    warnings: list[str] = []
    errors: list[SettingsError] = []
    mode: PermissionMode | None = None
    user_file = user_settings_path(env)
    for path in settings_files(workspace, env, sources):
        user_level = path == user_file
        found = load_settings_file(path, rules, workspace, user_level=user_level, trust=None if user_level else trust)
        warnings += found.warnings
        if found.error is not None:
            errors.append(found.error)
        mode = found.mode or mode
    return LoadedPermissions(rules, warnings, mode, errors)


def settings_stamp(
    workspace: Path, env: Mapping[str, str] | None = None, sources: Iterable[str] | None = None
) -> tuple[tuple[int, ...] | None, ...]:
    """How the settings files look on disk (size, mtime, inode; None when absent): a change without reading them."""
    stamps: list[tuple[int, ...] | None] = []
    for path in settings_files(workspace, env, sources):
        try:
            info = path.stat()
        except OSError:
            stamps.append(None)
            continue
        stamps.append((info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns))
    return tuple(stamps)


def _shown(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _decode(data: bytes, shown: str) -> tuple[Any, SettingsError | None]:
    """The JSON value in `data` (the file `shown`), or the error saying where it stops being valid."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, SettingsError(shown, "not UTF-8 text", line, column)
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, SettingsError(shown, exc.msg, exc.lineno, exc.colno)
    except (ValueError, RecursionError) as exc:  # e.g. nested too deeply
        return None, SettingsError(shown, f"not valid JSON ({type(exc).__name__})")


def load_settings_file(
    path: Path, rules: RuleSet, workspace: Path, *, user_level: bool = False, trust: TrustGate | None = None
) -> FileSettings:
    """Add the rules of one file to `rules`; its `defaultMode`, its warnings and its error (or None). `trust`: the
    gate a project file's allow rules and widening mode pass (None: they apply)."""
    shown = _shown(path, workspace)
    try:
        data, error = _decode(path.read_bytes(), shown)
    except (FileNotFoundError, NotADirectoryError):  # no such file (or `.claude` is not a directory)
        return FileSettings(None, [], None)
    except OSError as exc:  # it is there, and may hold deny rules we cannot see
        return FileSettings(None, [], SettingsError(shown, f"cannot be read ({exc.strerror or exc})"))
    if error is not None:
        return FileSettings(None, [], error)
    found = _apply_settings(data, str(path), shown, rules, workspace, user_level, trust)
    if isinstance(data, dict):
        found.warnings[:0] = check_keys(data, shown, claude_file=path.parent.name == ".claude")
    return found


SETTINGS_FLAG = "--settings"


def load_settings_value(value: str, rules: RuleSet, workspace: Path) -> FileSettings:
    """`--settings JSON|PATH` (Claude Code's flag settings): its `permissions` are applied as a user-level file's
    (the caller chose them, so `defaultMode: bypassPermissions` counts); its `hooks` are read with the files'
    (`hooks.command.config`); other keys are named in a warning."""
    if value.lstrip().startswith("{"):
        data, error = _decode(value.encode("utf-8", "replace"), SETTINGS_FLAG)
        if error is not None:
            return FileSettings(None, [], error)
        where = SETTINGS_FLAG
    else:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else workspace / path
        where = f"{SETTINGS_FLAG} {path}"
        try:
            data, error = _decode(path.read_bytes(), where)
        except OSError as exc:  # named on purpose: a missing file is an error here, not "no settings"
            return FileSettings(None, [], SettingsError(where, f"cannot be read ({exc.strerror or exc})"))
        if error is not None:
            return FileSettings(None, [], error)
    found = _apply_settings(data, SETTINGS_FLAG, where, rules, workspace, True)
    if isinstance(data, dict):
        known = set(SETTINGS_KEYS) | CLAUDE_CODE_KEYS
        ignored = sorted(str(key) for key in data if key in known and key not in FLAG_KEYS)
        if ignored:
            found.warnings.append(f"{where}: ram applies only `permissions` and `hooks`; ignored: {', '.join(ignored)}")
        found.warnings.extend(check_keys({key: None for key in data if key not in known}, where, claude_file=True))
    return found


def _apply_settings(
    data: Any,
    source: str,
    shown: str,
    rules: RuleSet,
    workspace: Path,
    user_level: bool,
    trust: TrustGate | None = None,
) -> FileSettings:
    """Add the `permissions` of one decoded settings object to `rules` (`source` names their origin)."""
    if not isinstance(data, dict):
        return FileSettings(None, [], SettingsError(shown, "expected a JSON object at the top level"))
    block = data.get("permissions")
    if block is None:
        return FileSettings(None, [], None)
    if not isinstance(block, dict):
        return FileSettings(None, [], SettingsError(shown, "`permissions` must be an object"))
    problems: list[str] = []  # deny or ask rules that cannot be understood: the file fails closed
    ignored: list[str] = []  # allow rules or a mode that cannot be understood: the agent only asks more
    rule_warnings: list[str] = []
    for key in (str(key) for key in block):
        if key in CLAUDE_CODE_PERMISSION_KEYS:
            rule_warnings.append(f"{shown}: ram does not use Claude Code's `permissions.{key}` (ignored)")
        elif key not in PERMISSION_KEYS:  # `dney`: maybe the deny rules the user counts on, so nothing is assumed
            hint = near_miss(key, (*PERMISSION_KEYS, *CLAUDE_CODE_PERMISSION_KEYS))
            problems.append(f"unknown key `permissions.{key}`{hint}: its rules cannot be known")
    parsed: list[tuple[RuleKind, Rule]] = []
    # `/pattern` rules are relative to the project a file belongs to; the user file has none, so the workspace
    project_root = workspace
    for kind in RULE_KINDS:
        values = block.get(kind)
        if values is None:
            continue
        found = problems if kind != "allow" else ignored
        if not isinstance(values, list):
            found.append(f"`permissions.{kind}` must be a list of rule strings")
            continue
        for i, text in enumerate(values):
            if not isinstance(text, str):
                found.append(f"`permissions.{kind}[{i}]` is not a string")
                continue
            try:
                parsed.append((kind, parse_rule(text, source, project_root)))
            except RuleError as exc:
                if kind == "allow":
                    rule_warnings.append(f"{source}: ignored the {kind} rule {text!r}: {exc}")
                else:
                    problems.append(f"the {kind} rule {text!r} cannot be understood ({exc})")
    for kind, rule in parsed:
        if kind == "allow" and (problems or not _trusted(trust, "allow", shown, rule.text)):
            continue  # a broken file's deny and ask rules still apply, never its allows; nor an untrusted one's
        rules.add_rule(kind, rule)
    if problems:
        return FileSettings(None, [], SettingsError(shown, "; ".join(problems)))
    mode = _file_mode(block.get("defaultMode"), user_level, ignored)
    if mode in WIDENING_MODES and not _trusted(trust, "mode", shown, mode):
        mode = None
    if ignored:
        rule_warnings.insert(0, f"{source}: {'; '.join(ignored)} (ignored)")
    return FileSettings(mode, rule_warnings, None)


WIDENING_MODES = frozenset({"acceptEdits", "bypassPermissions"})
"""Modes that let more through than `default`: a project file's needs the folder's trust (`plan` only narrows)."""


def _trusted(trust: TrustGate | None, kind: ItemKind, shown: str, text: str) -> bool:
    """May this project file's allow rule or mode (`text`) apply?"""
    if trust is None:
        return True
    from ..trust.items import make_item

    label = f"defaultMode: {text}" if kind == "mode" else text
    return trust.permits(make_item(kind, shown, label, text))


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


# --- which credentials Bash commands may see (separate from the permission rules above) -----------------------

PASS_CREDENTIALS_KEY = "passCredentials"
"""`{"shellEnvironment": {"passCredentials": ["OPENAI_API_KEY", ...]}}`: credential variables commands still get."""


def load_pass_credentials(workspace: Path, env: Mapping[str, str] | None = None) -> tuple[frozenset[str], list[str]]:
    """The credential variables the user lets Bash commands see (`tools.shell_env` withholds them otherwise), and a
    warning per problem. Only the user settings file counts: a cloned repository must not be able to hand the
    model your keys by shipping a settings file, so a project file naming any is warned about and ignored. A file
    that cannot be read or parsed is skipped silently here (`load_permissions` reports it)."""
    passed: set[str] = set()
    warnings: list[str] = []
    user_file, *project_files = settings_files(workspace, env)
    for path in (user_file, *project_files):
        try:
            data: Any = json.loads(path.read_bytes().decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            continue
        block = data.get("shellEnvironment") if isinstance(data, dict) else None
        if block is None:
            continue
        if not isinstance(block, dict):
            warnings.append(f"{path}: `shellEnvironment` must be an object (ignored)")
            continue
        names = block.get(PASS_CREDENTIALS_KEY)
        if names is None:
            continue
        where = f"{path}: `shellEnvironment.{PASS_CREDENTIALS_KEY}`"
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            warnings.append(f"{where} must be a list of environment variable names (ignored)")
        elif path != user_file:
            if names:
                warnings.append(f"{where} is accepted only from the user settings ({user_file}) (ignored)")
        else:
            passed.update(names)
    return frozenset(passed), warnings
