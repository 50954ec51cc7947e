"""The one decision every tool call passes through before it runs: allow, ask the user, or deny with a reason.

`PermissionPolicy` is a `CanUseTool` (the question the tool runner asks, `tools/approval.py`). In order:
1. a deny rule → deny (even in bypassPermissions);
2. plan mode → deny anything that is not read-only;
   then, while `ask_all` is set (a settings file could not be understood), ask — whatever the mode or rules say;
   then a PreToolUse hook's verdict: `allow` allows, `ask` asks;
3. bypassPermissions → allow;
4. an ask rule → ask;
5. allow rules (settings, CLI, and "always" answers of this session) → allow;
6. built-in judgement: reading inside the workspace (`..` and symlinks resolved) and read-only shell commands are
   allowed (what a call reads or writes, and what kind of tool it is, are what its tool declares,
   `tools.declared`: a library function's `Path` parameters, say, whatever their names; only for a tool that
   declares none, such as an MCP tool, are paths guessed from the argument names `file_path`, `notebook_path` and
   `path`); edits (tools of the `edit` family) are allowed in acceptEdits mode (inside the workspace), and so are
   Bash commands that name no path outside it when they run in the OS sandbox without network (`sandboxed`: they
   cannot change anything else); everything else asks. `ALLOW_WRITE=1` turns those asks into allows for calls that
   stay inside the workspace. In default mode the sandbox changes no decision: what asked before asks still. Tools
   of the `network` family (WebFetch, WebSearch) change no file but reach the network: they are asked for (no mode
   but bypassPermissions, and not `ALLOW_WRITE`, lets them through; plan mode may ask for them).
Asking with nobody to ask (headless, pipe) denies, and the message says how to allow the call next time. The
asker answers yes / always / no — or, for a program driving the session (the Claude Agent SDK's `can_use_tool`,
a library callback), a whole decision: `Allow(updated_input=...)` runs the call with other input, and a `Deny`
whose `end_turn` is False lets the turn go on with its message as the call's result. An
"always" answer records a rule scoped to exactly what was approved (`Edit(./src/app.py)`, `Bash(git diff:*)`),
which `session_rules()` lists and `revoke()` removes: never a bare `Bash` that would allow every later command.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import msgspec

from ..abort import Aborted
from ..tools.approval import NO_INFO, Allow, CanUseTool, Decision, Deny, HookPermission, ToolCallInfo
from ..tools.base import ShellState, Tool
from ..tools.declared import Family, family_of
from ..tools.paths import display
from ..trace import trace
from .rules import (
    CallView,
    PathTarget,
    PermissionMode,
    Rule,
    RuleSet,
    escape_pattern,
    inspect_call,
)

if TYPE_CHECKING:
    from .bash.view import BashView

__all__ = [
    "GUARDED_DIRS",
    "GUARDED_FILES",
    "NOT_READ_ONLY",
    "NO_INFO",
    "PROJECT_SETTINGS_HINT",
    "REJECT_MESSAGE",
    "Allow",
    "Answer",
    "Asker",
    "CanUseTool",
    "Decision",
    "Deny",
    "HookPermission",
    "PermissionPolicy",
    "PermissionRequest",
    "ToolCallInfo",
    "allow_read_only",
    "shell_quote",
]
"""`Allow`, `Deny`, `Decision`, `HookPermission`, `ToolCallInfo`, `NO_INFO` and `CanUseTool` are the runner's
question and answers (`tools/approval.py`), importable from here too: the policy is what answers it."""


Answer: TypeAlias = Literal["yes", "always", "no"]


NOT_READ_ONLY = (
    "Permission denied: {name} can change files or run commands, and this session allows only read-only tools."
)
REJECT_MESSAGE = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
    "the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how "
    "to proceed."
)
PROJECT_SETTINGS_HINT = ".agents/settings.json"


async def allow_read_only(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
    """Allow read-only tools; deny the rest (the default for sessions built without a policy)."""
    if tool.read_only and family_of(tool) != "network":
        return Allow()
    return Deny(NOT_READ_ONLY.format(name=tool.name))


class PermissionRequest(msgspec.Struct, frozen=True):
    """What the user is asked about."""

    tool: str
    """The tool's name."""
    args: Mapping[str, Any]
    """The call's arguments, as the model sent them."""
    summary: str
    """One line saying exactly what will happen: `Edit src/app.py`, `Run: git push origin main`."""
    reason: str
    """Why this needs asking (`it writes outside the workspace`, `the ask rule Bash(git push:*) requires it`)."""
    always_rules: tuple[str, ...] = ()
    """The rules an "always" answer records; empty when "always" cannot be scoped (then it means "yes")."""
    outside_workspace: bool = False
    """True when the call reaches outside the workspace (worth a warning colour)."""
    tool_use_id: str = ""
    """The id of the call (a program answering for the user needs it)."""
    blocked_path: str = ""
    """The path that made asking necessary (one outside the workspace, else the file changed); empty if none."""
    family: Family = "other"
    """The tool's family (`tools.declared`): `edit` for a file edit, which acceptEdits would allow."""

    @property
    def always_rule(self) -> str:
        """The rules an "always" answer records, as one line (empty when none)."""
        return ", ".join(self.always_rules)


Asker: TypeAlias = Callable[[PermissionRequest], Awaitable[Answer | Decision]]
"""Asks the user (an Answer) or a program (an Answer, or a whole Decision)."""


class PermissionPolicy:
    """Rules, mode, workspace confinement and asking, as one `CanUseTool`."""

    def __init__(
        self,
        root: Path,
        mode: PermissionMode = "default",
        rules: RuleSet | None = None,
        asker: Asker | None = None,
        *,
        allow_write: bool = False,
        shell: ShellState | None = None,
    ) -> None:
        self.root = root.resolve()
        self.mode: PermissionMode = mode
        """Reassignable: the REPL may switch modes during a session."""
        self.rules = rules if rules is not None else RuleSet()
        self.asker = asker
        self.allow_write = allow_write
        self.shell = shell
        """Bash's state, so relative paths in commands are judged from where the shell really is."""
        self.ask_all: str | None = None
        """Set while the rules cannot be known (a settings file that cannot be understood): why every call is
        asked for — no allow rule, mode or built-in judgement lets one through; deny rules and plan mode apply."""
        self.sandboxed: Callable[[], bool] | None = None
        """True when Bash commands run confined (the OS sandbox, no network; `sandbox.handle`); None: never."""
        self.on_ask: Callable[[PermissionRequest], None] | None = None
        """Told each time someone is about to be asked (the session's Notification hooks)."""

    async def __call__(self, tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
        decision = await self.decide(tool, args, info)
        trace("permission", tool=tool.name, decision="allow" if isinstance(decision, Allow) else "deny")
        return decision

    async def decide(
        self,
        tool: Tool,
        args: Mapping[str, Any],
        info: ToolCallInfo = NO_INFO,
        *,
        shell: ShellState | None = None,
        read_only: bool = False,
    ) -> Decision:
        """The decision for one call (asking the user when needed). `shell`: the Bash state the call runs with
        (a subagent's own; None: the session's); `read_only`: refuse what does not only read, whatever the mode
        (a read-only subagent)."""
        shell = shell or self.shell
        call = self._inspect(tool, args, shell)
        found = self.rules.match(call, self.root, read_only=tool.read_only)
        if found is not None and found.verdict == "deny":
            return Deny(
                f"Permission denied: {self._summary(tool, call)} is blocked by the deny rule {found.rule.text} "
                f"({_source(found.rule)}). Do not try to get around it; take another approach or ask the user."
            )
        if read_only and not _reads_only(tool, call):
            return Deny(
                f"This agent is read-only, so {self._summary(tool, call)} was not run. Use read-only tools, and put "
                "what should change in your report."
            )
        if self.mode == "plan" and not _reads_only(tool, call):
            return Deny(
                f"Plan mode is read-only, so {self._summary(tool, call)} was not run. Keep exploring with read-only "
                "tools and present your plan; changes can be made once the user leaves plan mode."
            )
        if self.ask_all is not None:
            return await self._ask(tool, call, self.ask_all, info=info)
        if info.hook_permission == "allow":
            return Allow()
        if info.hook_permission == "ask":
            return await self._ask(tool, call, "a PreToolUse hook asks for it", info=info)
        if self.mode == "bypassPermissions":
            return Allow()
        if found is not None and found.verdict == "ask":
            return await self._ask(
                tool, call, f"the ask rule {found.rule.text} ({_source(found.rule)})", found.rule, info=info
            )
        if found is not None:
            return Allow()
        return await self._judge(tool, call, info)

    def read_denied(self, path: Path) -> bool:
        """True when a deny or ask rule covers reading `path` (search tools then leave it out of their results)."""
        if not any(kind != "allow" and rule.tool == "Read" for kind, rule in self.rules.rules()):
            return False  # the common case: no rule restricts reading
        return self.rules.read_verdict(path, root=self.root) in ("deny", "ask")

    def rules_to_allow(self, tool: Tool, args: Mapping[str, Any]) -> tuple[str, ...]:
        """The narrow rules an "always" answer would record for this call, checked to allow it by the rules
        (empty when none can: a deny or ask rule covers it, or it cannot be scoped). Headless runs suggest them."""
        call = self._inspect(tool, args, self.shell)
        return self._always_rules(tool, call)

    def session_rules(self) -> list[str]:
        """The rules "always" answers recorded in this session."""
        return [rule.text for _, rule in self.rules.rules("allow") if rule.source == "session"]

    def revoke(self, rule: str) -> bool:
        """Forget a session rule; True when it was there."""
        return self.rules.remove("allow", rule, "session")

    def _inspect(self, tool: Tool, args: Mapping[str, Any], shell: ShellState | None) -> CallView:
        """What the call touches, as its tool declares it (`inspect_call`: the shell analysis for a command line,
        folders searched for a search tool, and the argument names only for a tool that declares nothing, such as
        an MCP tool, `mcp/adapter.py`)."""
        return inspect_call(tool, args, self.root, shell.cwd if shell else None)

    async def _judge(self, tool: Tool, call: CallView, info: ToolCallInfo) -> Decision:
        """Step 6: no rule decided."""
        if call.bash is not None:
            if call.bash.read_only and not call.bash.outside:
                return Allow()
            if self.allow_write and not call.bash.outside:
                return Allow()
            if self.mode == "acceptEdits" and not call.bash.outside and self.sandboxed is not None and self.sandboxed():
                return Allow()  # confined to the workspace by the sandbox, as acceptEdits' edits are
            return await self._ask(tool, call, _bash_reason(call.bash), info=info)
        if call.family == "network":
            return await self._ask(tool, call, "it reaches the network", info=info)
        if tool.read_only:
            if not call.outside:
                return Allow()
            return await self._ask(tool, call, "it reads outside the workspace", info=info)
        if call.outside:
            return await self._ask(tool, call, "it writes outside the workspace", info=info)
        if call.family == "edit" and self.mode == "acceptEdits":
            guarded = [t for t in call.targets if _guarded(self.root, t.path)]
            if not guarded:
                return Allow()
            where = display(self.root, guarded[0].path)
            return await self._ask(
                tool, call, f"{where} can make later commands run programs, so acceptEdits does not cover it", info=info
            )
        if self.allow_write:
            return Allow()
        what = "it changes files" if call.family == "edit" else f"{tool.name} is not read-only"
        return await self._ask(tool, call, what, info=info)

    async def _ask(
        self, tool: Tool, call: CallView, reason: str, ask_rule: Rule | None = None, *, info: ToolCallInfo = NO_INFO
    ) -> Decision:
        summary = self._summary(tool, call)
        # an ask rule (or asking for everything) outranks allow rules, so a recorded rule would never take
        # effect: "always" means "yes"
        always = () if ask_rule is not None or self.ask_all is not None else self._always_rules(tool, call)
        if self.asker is None:
            return Deny(self._headless_message(tool, call, summary, reason, always, ask_rule))
        request = PermissionRequest(
            tool.name,
            dict(call.args),
            summary,
            reason,
            always,
            call.outside,
            tool_use_id=info.tool_use_id,
            blocked_path=_blocked_path(call),
            family=call.family,
        )
        if self.on_ask is not None:
            self.on_ask(request)
        try:
            answer = await self.asker(request)
        except Aborted:
            raise
        except Exception as exc:  # a broken prompt (EOF on stdin) must not let the call through
            return Deny(
                f"The permission prompt failed ({type(exc).__name__}), so {summary} was not run. "
                "Stop and wait for the user.",
                end_turn=True,
            )
        if isinstance(answer, (Allow, Deny)):  # a program answered with a whole decision
            trace("permission.answer", tool=tool.name, answer="allow" if isinstance(answer, Allow) else "deny")
            return answer
        trace("permission.answer", tool=tool.name, answer=answer)
        if answer == "always":
            for text in always:
                self.rules.add("allow", text, "session")
            return Allow()
        if answer == "yes":
            return Allow()
        return Deny(REJECT_MESSAGE, end_turn=True)

    def _always_rules(self, tool: Tool, call: CallView) -> tuple[str, ...]:
        """The narrowest rules that allow this exact call again, checked to really do so (else none)."""
        if call.bash is not None:
            candidates = _bash_rules(call.bash, self.rules)
        elif call.family == "edit":
            candidates = [f"Edit({self._rule_path(t)})" for t in call.targets]
        elif call.reaches:  # WebFetch: the host it reaches
            host = _fetch_host(call.reaches[0])
            candidates = [f"{tool.name}(domain:{host})"] if host else []
        elif call.family == "network":
            candidates = [tool.name]
        elif tool.read_only:
            candidates = [f"Read({self._rule_path(t)})" for t in call.targets if not t.inside]
        else:
            candidates = [tool.name]  # MCP and other tools: rules name the tool, no finer
        for rules in (candidates, _whole_command(call.bash)):
            if rules and self._would_allow(tool, call, rules):
                return tuple(dict.fromkeys(rules))
        return ()

    def _would_allow(self, tool: Tool, call: CallView, rules: list[str]) -> bool:
        trial = self.rules.copy()
        if any(trial.add("allow", text, "session") for text in rules):
            return False
        found = trial.match(call, self.root, read_only=tool.read_only)
        return found is not None and found.verdict == "allow"

    def _rule_path(self, target: PathTarget) -> str:
        """`./src/app.py` (Claude Code's style for a path relative to the working directory; `src/app.py`, the same
        rule, still matches) or `//etc/hosts`; `/**` for a folder."""
        if target.inside:
            relative = display(self.root, target.path)
            pattern = "." if relative == "." else "./" + escape_pattern(relative)
        else:
            pattern = "/" + escape_pattern(str(target.path))
        if target.directory:
            pattern = pattern.rstrip("/") + "/**"
        return pattern

    def _summary(self, tool: Tool, call: CallView) -> str:
        """One line saying exactly what will happen."""
        if call.bash is not None:
            return "Run: " + " ⏎ ".join(line.strip() for line in call.bash.command.strip().splitlines())
        name, args = tool.name, call.args
        own = getattr(tool, "request_summary", None)  # WebFetch's and WebSearch's own line
        if callable(own) and isinstance(said := own(args), str):
            return said
        if call.targets:
            main = call.targets[0]
            notes = [] if all(t.inside for t in call.targets) else ["outside the workspace"]
            if main.lexical != main.path:
                notes.append(f"via {main.raw}")
            where = display(self.root, main.path)
            if call.family == "search" and isinstance(args.get("pattern"), str):
                where = f"{json.dumps(args['pattern'], ensure_ascii=False)} in {where}"
            return f"{name} {where}" + (f" ({', '.join(notes)})" if notes else "")
        shown = json.dumps(dict(args), ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 160 else shown[:157] + "..."
        return f"Call {name} {shown}" if args else f"Call {name}"

    def _headless_message(
        self, tool: Tool, call: CallView, summary: str, reason: str, always: tuple[str, ...], ask_rule: Rule | None
    ) -> str:
        start = f"Permission denied: {summary} needs approval ({reason}), and headless mode cannot ask."
        if self.ask_all is not None:
            return f"{start} Fix that settings file first."
        if ask_rule is not None:
            return f"{start} Run it interactively, or remove that ask rule."
        ways: list[str] = []
        if not call.outside and not _reads_only(tool, call) and not self.allow_write:
            ways.append("set ALLOW_WRITE=1")
        flags = [f"--allowed-tools {shell_quote(','.join(always))}"] if always else []
        if call.family == "edit" and not call.outside and self.mode != "acceptEdits":
            flags.append("--permission-mode acceptEdits")
        if flags:
            ways.append("pass " + " or ".join(flags))
        ways.append(f"add an allow rule to {PROJECT_SETTINGS_HINT}")
        listed = ways[0] if len(ways) == 1 else ", ".join(ways[:-1]) + ", or " + ways[-1]
        return f"{start} To allow it, {listed}."


GUARDED_FILES = frozenset(
    {".mcp.json", ".agents/settings.json", ".agents/settings.local.json", ".claude/settings.json",
     ".claude/settings.local.json", ".envrc"}
)  # fmt: skip
"""Files (relative to the workspace) whose contents decide what runs: MCP server commands, permission rules,
direnv. Like anything under a `.git` directory (hooks, `core.fsmonitor`, `diff.external` in `.git/config` run
programs from git commands we treat as read-only), they are asked for even in acceptEdits mode."""


GUARDED_DIRS = (".claude/hooks", ".agents/hooks")
"""Directories (relative to the workspace) of the scripts settings-file hooks usually run: they run outside the
sandbox at the next event, so they are asked for even in acceptEdits mode, and read-only to sandboxed commands."""


def _guarded(root: Path, path: Path) -> bool:
    try:
        relative = path.relative_to(root.resolve())
    except ValueError:
        return False
    shown = relative.as_posix()
    return (
        ".git" in relative.parts
        or shown in GUARDED_FILES
        or any(shown == d or shown.startswith(d + "/") for d in GUARDED_DIRS)
        or _in_user_config(path)
    )


def _in_user_config(path: Path) -> bool:
    """Is `path` in the user's own config directory (their settings, hooks, MCP servers, trusted folders)? Only
    reachable inside a workspace when ram runs in the home directory, and never to be changed unasked there."""
    from ..context import user_config_dir

    config = user_config_dir()
    with contextlib.suppress(OSError, RuntimeError):
        config = config.resolve()
    return path == config or config in path.parents


def _blocked_path(call: CallView) -> str:
    """The path a permission request is about: the first one outside the workspace, else the first touched."""
    if call.bash is not None:
        return call.bash.outside[0] if call.bash.outside else ""
    outside = [t for t in call.targets if not t.inside]
    chosen = (outside or list(call.targets))[:1]
    return str(chosen[0].path) if chosen else ""


def _fetch_host(url: str) -> str:
    """The host a fetch of `url` reaches (http upgraded; "" when the URL is not valid)."""
    from ..web.urls import BadUrl, host_of, normalize

    try:
        return host_of(normalize(url))
    except BadUrl:
        return host_of(url)


def _reads_only(tool: Tool, call: CallView) -> bool:
    """Read-only for plan mode: a read-only tool, or a Bash command that parsed and only reads."""
    if call.bash is not None:
        return call.bash.read_only
    return tool.read_only


def _bash_reason(bash: BashView) -> str:
    if not bash.analysis.parsed:
        return "the command could not be parsed, so it cannot be checked"
    if bash.outside:
        return bash.outside_reason  # "it names paths outside the workspace: ...", or what else it saw
    if bash.analysis.writes and all(view.read_only for view in bash.commands):
        return "it writes to a file through a redirection"
    changing = [view.command.text for view in bash.commands if not view.read_only]
    if changing:
        return f"`{changing[0]}` may change files or run programs"
    return bash.analysis.reason or "it may change files or run programs"


def _bash_rules(bash: BashView, rules: RuleSet) -> list[str]:
    """One rule per simple command that needs one: `Bash(<prefix>:*)` for a command that changes things, the
    exact command for a read-only one that reaches outside the workspace."""
    from .bash.prefix import rule_prefix

    if not bash.analysis.parsed or bash.analysis.writes:
        return []
    out: list[str] = []
    for view in bash.commands:
        if view.read_only and not view.outside:
            continue
        words = (*view.command.assignments, *view.command.argv)
        usage = view.command.usage
        exact = view.read_only or bool(view.command.assignments) or (usage is not None and bool(usage.evaluated))
        prefix = "" if exact else rule_prefix(view.command).strip()  # code in its words: only this very command
        body = prefix or shlex.join(words)
        if not _literal(body):
            return []
        out.append(f"Bash({prefix}:*)" if prefix else f"Bash({body})")
    return out


def _literal(body: str) -> bool:
    """Can `body` be recorded in a rule without meaning more than it says? (`*` in a rule is a wildcard.)"""
    return bool(body) and "*" not in body and "\n" not in body


def _whole_command(bash: BashView | None) -> list[str]:
    """The exact command line, for what per-command rules cannot cover (a writing redirection)."""
    if bash is None or not bash.analysis.parsed:
        return []
    line = bash.command.strip()
    return [f"Bash({line})"] if _literal(line) else []


def _source(rule: Rule) -> str:
    if rule.source == "cli":
        return "from the command line"
    if rule.source == "session":
        return "recorded in this session"
    return f"from {rule.source}"


_SAFE_IN_DOUBLE_QUOTES = re.compile(r'^[^"$`\\!]*$')


def shell_quote(text: str) -> str:
    """`text` as one shell word: in double quotes when they need no escapes (easier to read), else as shlex does."""
    return f'"{text}"' if _SAFE_IN_DOUBLE_QUOTES.match(text) else shlex.quote(text)
