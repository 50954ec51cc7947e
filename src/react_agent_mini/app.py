"""Assembly: turn a configuration into a ready Session (provider + retries, tools, permissions, deps).

The one place that knows which concrete parts production uses; tests build Sessions with their own deps.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from . import __version__, session_lock, transcript
from .compact.controller import Compaction
from .compact.tokens import context_window
from .config import ProviderConfig, build_provider
from .context.system_prompt import BASE_PROMPT
from .events import ModelEvent
from .loop import QueryDeps
from .messages import Message
from .permissions.policy import Asker, CanUseTool, PermissionPolicy
from .permissions.rules import PermissionMode
from .permissions.settings import (
    LoadedPermissions,
    SettingsError,
    add_cli_rules,
    load_permissions,
    settings_stamp,
)
from .providers.base import ModelProvider, ModelRequest
from .providers.retry import RetryPolicy, stream_with_retry
from .session import Session
from .terminal_text import visible
from .tools.base import ShellState, ToolContext, ToolRegistry

SYSTEM_PROMPT = BASE_PROMPT
"""The base prompt alone (benchmarks use it; sessions get the full prompt from `Knowledge`)."""
CATALOGUE_SHARE = 0.02
"""The skills catalogue may take about this share of the context window (as Claude Code and Codex do)."""
DEFAULT_WINDOW_TOKENS = 128_000


class Knowledge:
    """What the agent knows before the first word: project instructions, memory, skills; and the system prompt
    built from them, rebuilt only when the memory file changes (so the cached prompt prefix stays stable)."""

    def __init__(self, cwd: Path, env: Mapping[str, str], *, window_tokens: int = DEFAULT_WINDOW_TOKENS) -> None:
        from .context import user_config_dir
        from .context.memory import Memory, find_memory_file
        from .context.project import load_project_context
        from .context.skills import discover_skills, skills_catalogue

        user_dir = user_config_dir(env)
        self.cwd = cwd
        self.project = load_project_context(cwd, user_dir=user_dir)
        self.skills, skill_warnings = discover_skills(cwd, user_dir=user_dir)
        self.memory = Memory(find_memory_file(cwd))
        self.catalogue = skills_catalogue(self.skills, budget_chars=int(window_tokens * 4 * CATALOGUE_SHARE))
        self.warnings = [*self.project.warnings, *skill_warnings]
        self.system_prompt = self._build()

    def _build(self) -> str:
        from .context.system_prompt import build_system_prompt

        prompt = build_system_prompt(cwd=self.cwd, project=self.project, memory=self.memory, catalogue=self.catalogue)
        if self.memory.warning:
            self.warnings.append(self.memory.warning)
        return prompt

    def refreshed_prompt(self) -> str | None:
        """A new system prompt when the memory file changed since the last build, else None."""
        if not self.memory.changed():
            return None
        self.system_prompt = self._build()
        return self.system_prompt


def default_tools() -> ToolRegistry:
    """The built-in tools, in the order the model sees them."""
    from .tools.bash import BashTool
    from .tools.echo import EchoTool
    from .tools.edit import EditTool
    from .tools.glob import GlobTool
    from .tools.grep import GrepTool
    from .tools.read import ReadTool
    from .tools.write import WriteTool

    return ToolRegistry([ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool(), BashTool(), EchoTool()])


class PermissionOptions(msgspec.Struct, frozen=True):
    """What the command line says about permissions."""

    mode: PermissionMode | None = None
    """`--permission-mode`; None: the settings files' `defaultMode`, else `default`."""
    allowed_tools: tuple[str, ...] = ()
    """`--allowed-tools` values (rules to allow)."""
    disallowed_tools: tuple[str, ...] = ()
    """`--disallowed-tools` values (rules to deny)."""


def build_policy(
    cwd: Path,
    options: PermissionOptions,
    asker: Asker | None,
    shell: ShellState,
    env: Mapping[str, str] | None = None,
) -> tuple[PermissionPolicy, list[str], PermissionSettings]:
    """The permission policy from settings files and flags, one warning line per problem found, and what keeps
    the policy up to date with the files (`settings.errors` lists the files that make it fail closed)."""
    settings = PermissionSettings(cwd, options, os.environ if env is None else env)
    loaded, cli_warnings = settings.read()
    allow_write = settings.env.get("ALLOW_WRITE") == "1"
    policy = PermissionPolicy(cwd, settings.mode, loaded.rules, asker, allow_write=allow_write, shell=shell)
    policy.ask_all = settings.ask_all_reason()
    return policy, loaded.warnings + cli_warnings, settings


class PermissionSettings:
    """The rules the settings files and flags give, re-read when a settings file changes (the REPL checks before
    each message, so fixing a broken file takes effect without a restart). A file that cannot be understood makes
    the policy fail closed: every call is asked for (headless runs refuse to start instead)."""

    def __init__(self, cwd: Path, options: PermissionOptions, env: Mapping[str, str]) -> None:
        self.cwd, self.options, self.env = cwd, options, env
        self.errors: list[SettingsError] = []
        """The files whose rules cannot be known, as of the last read."""
        self.mode: PermissionMode = "default"
        """The mode the flags and files give, as of the last read."""
        self._stamp: object = None

    def read(self) -> tuple[LoadedPermissions, list[str]]:
        """What the files say now, with the flags' rules added; and the flags' warnings."""
        self._stamp = settings_stamp(self.cwd, self.env)  # before reading: a change during the read shows next time
        loaded = load_permissions(self.cwd, self.env)
        cli_warnings = add_cli_rules(loaded.rules, self.options.allowed_tools, self.options.disallowed_tools)
        self.errors = loaded.errors
        self.mode = self.options.mode or loaded.default_mode or "default"
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
        if settings_stamp(self.cwd, self.env) == self._stamp:
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


def production_deps(provider: ModelProvider, policy: RetryPolicy, can_use_tool: CanUseTool) -> QueryDeps:
    """Deps whose model calls go to `provider`, retried per `policy`."""

    def call_model(request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        return stream_with_retry(lambda: provider.stream(request), policy)

    return QueryDeps(call_model=call_model, can_use_tool=can_use_tool)


MCP_FIRST_CALL_WAIT = 10.0
"""Seconds the first model call waits for MCP servers still starting (later ones join when they are ready)."""


class McpAttachment:
    """The session's MCP servers: started in the background, their tools added to the session's table as they
    become ready, `@server:uri` mentions resolved, and every child process stopped at the end."""

    def __init__(self, cwd: Path, env: Mapping[str, str], warnings: list[str]) -> None:
        from .mcp.config import default_log_dir, load_mcp_config, mcp_timeouts

        servers, config_warnings = load_mcp_config(cwd, env)
        connect_timeout, call_timeout, timeout_warnings = mcp_timeouts(env)
        warnings += config_warnings + timeout_warnings
        self.manager = None
        if servers:
            from .mcp.manager import McpManager

            self.manager = McpManager(
                servers, log_dir=default_log_dir(env), connect_timeout=connect_timeout, call_timeout=call_timeout
            )
        self._waited = False

    def start(self) -> None:
        """Connect every server concurrently (inside the running event loop)."""
        if self.manager is not None:
            self.manager.start()

    async def join(self, tools: ToolRegistry) -> list[str]:
        """Add the tools of servers that are ready; the first time, wait a bounded time for the others.
        One warning line per server that failed or is still starting."""
        if self.manager is None:
            return []
        warnings = await self.manager.wait_ready(0 if self._waited else MCP_FIRST_CALL_WAIT)
        self._waited = True
        known = set(tools.names())
        for tool in self.manager.tools():
            if tool.name not in known:
                tools.add(tool)
        return warnings

    async def mentions(self, text: str) -> tuple[list[Message], list[str]]:
        """`@server:uri` resources named in `text`, as messages to put before it (read by reference only)."""
        if self.manager is None or "@" not in text:
            return [], []
        return await self.manager.resolve_mentions(text)

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()


class Assembled(msgspec.Struct, dict=False):
    """A ready session and what the caller must show or close."""

    session: Session
    provider: ModelProvider
    """Close it when done (`await provider.aclose()`)."""
    policy: PermissionPolicy
    warnings: list[str]
    """Setup problems to show the user, one line each (broken settings files, bad rules, skills, imports)."""
    knowledge: Knowledge
    """Project context, memory and skills behind the system prompt."""
    recorder: TranscriptRecorder
    """The transcript being written (close it when done)."""
    mcp: McpAttachment
    """The MCP servers (start them in the loop, `join` before turns, `aclose` at the end)."""
    permission_settings: PermissionSettings
    """The settings files behind `policy`: `errors` (fail closed), `refresh(policy)` before a turn."""

    def new_conversation(self) -> None:
        """`/clear`: forget the conversation and go on in a new session with its own transcript (the old one
        stays resumable); loaded skills are forgotten too."""
        self.recorder.close()
        self.session.clear()
        _reset_skills(self.session)
        self.session.session_id = self.session.deps.new_id()
        _new_transcript(self.session, self.recorder, self.provider)

    def switch_to(self, path: Path) -> list[str]:
        """`/resume`: continue the saved session at `path` instead of this one (this one stays saved);
        warnings to show. `SessionInUse`, with nothing changed, when another process is writing that session."""
        try:
            lock: session_lock.SessionLock | None = session_lock.SessionLock.acquire(path)
        except OSError:
            lock = None  # no lock file can be made there: reopening fails the same way and says so
        self.recorder.close()
        self.session.clear()
        _reset_skills(self.session)
        return _resume(self.session, self.recorder, path, lock)


def build_session(
    config: ProviderConfig,
    *,
    cwd: Path,
    max_turns: int = 20,
    permissions: PermissionOptions | None = None,
    asker: Asker | None = None,
    mock_chunk_delay: float = 0.0,
    resume: Path | None = None,
    save: bool = True,
) -> Assembled:
    """A session for `config` in workspace `cwd`; `asker` is None when nobody can answer permission prompts.
    `resume` continues a saved transcript; otherwise a new one is started unless `save` is False."""
    cwd = cwd.resolve()
    provider = build_provider(config, mock_chunk_delay=mock_chunk_delay)
    context = ToolContext(cwd=cwd)
    policy, warnings, permission_settings = build_policy(cwd, permissions or PermissionOptions(), asker, context.shell)
    context.read_denied = policy.read_denied
    from .permissions.settings import load_pass_credentials
    from .tools.shell_env import credential_variables

    passed, env_warnings = load_pass_credentials(cwd)
    warnings += env_warnings
    context.shell.withheld = credential_variables(cwd, os.environ) - passed  # what Bash commands do not get
    knowledge = Knowledge(cwd, os.environ, window_tokens=context_window(provider.model))
    tools = default_tools()
    reinject = None
    if knowledge.skills:
        from .tools.skill import SkillTool

        skill_tool = SkillTool(knowledge.skills)
        tools.add(skill_tool)

        def reinject() -> list[Message]:
            # Project context and memory live in the system prompt, which a summary never touches; the bodies of
            # skills loaded so far were in the history, so they come back after one.
            blocks = skill_tool.reload_blocks()
            return [Message("user", tuple(blocks), meta=True)] if blocks else []

    retry = RetryPolicy(max_attempts=config.max_retries + 1)
    deps = production_deps(provider, retry, policy)
    compaction = Compaction(deps.call_model, model=provider.model, reinject=reinject)
    session = Session(
        deps=deps,
        compaction=compaction,
        tools=tools,
        context=context,
        system_prompt=knowledge.system_prompt,
        max_turns=max_turns,
        max_tokens=config.max_output_tokens,
        refresh_system_prompt=knowledge.refreshed_prompt,
    )
    warnings += knowledge.warnings
    recorder = TranscriptRecorder(warnings)
    if resume is not None:
        warnings += _resume(session, recorder, resume)
    elif save:
        _new_transcript(session, recorder, provider)
    session.on_message = recorder.append
    session.on_rewrite = recorder.rewrite
    mcp = McpAttachment(cwd, os.environ, warnings)
    return Assembled(session, provider, policy, warnings, knowledge, recorder, mcp, permission_settings)


def _resume(
    session: Session, recorder: TranscriptRecorder, path: Path, lock: session_lock.SessionLock | None = None
) -> list[str]:
    """Make `session` continue the transcript at `path`; warnings to show. The session is locked (and a record cut
    mid-write mended) before the file is read, so nobody appends to it between our reading and our writing;
    `SessionInUse` when another process is writing it."""
    recorder.open(lambda: transcript.Transcript.reopen(path, lock))
    try:
        loaded = transcript.load(path)
    except BaseException:
        recorder.close()  # never append to a transcript whose history was not loaded
        raise
    torn = recorder.transcript.torn_tail if recorder.transcript is not None else None
    session.session_id = loaded.session_id
    session.restore(loaded.messages)
    recorder.write(loaded.repaired)
    warnings = []
    if torn is not None and not torn.kept:
        warnings.append(
            f"{path}: its last record was cut off mid-write (disk full, or the process died?); "
            f"removed those {torn.size} bytes"
        )
    if loaded.skipped_lines:
        warnings.append(f"{path}: {loaded.skipped_lines} unreadable line(s) skipped (cut by a crash?)")
    if loaded.answered_in_place:
        warnings.append(
            f"{path}: {loaded.answered_in_place} tool call(s) had no result after them (was the session written "
            "by two processes at once?); they are marked interrupted"
        )
    return warnings


def _new_transcript(session: Session, recorder: TranscriptRecorder, provider: ModelProvider) -> None:
    """Record `session` in a new transcript, created with its first message (an unused session leaves no file)."""
    cwd = session.context.cwd
    meta = {"cwd": str(cwd), "model": provider.model, "provider": provider.name, "version": __version__}
    directory = transcript.sessions_dir(cwd)
    session_id = session.session_id
    recorder.open(lambda: transcript.Transcript.create(directory, session_id, meta), lazy=True)


def _reset_skills(session: Session) -> None:
    from .tools.skill import SkillTool

    tool = session.tools.get("Skill")
    if isinstance(tool, SkillTool):
        tool.reset()


class TranscriptRecorder:
    """Writes each message to the session's transcript; a disk problem costs one warning, never the session."""

    def __init__(self, warnings: list[str]) -> None:
        self.transcript: transcript.Transcript | None = None
        self._warnings = warnings
        self._opener: Callable[[], transcript.Transcript] | None = None
        self.saved = False
        """True once the current conversation is on disk (so `ram --continue` can find it)."""
        self._warned = False

    def open(self, opener: Callable[[], transcript.Transcript], *, lazy: bool = False) -> None:
        """Start writing the transcript `opener` opens; `lazy`: open it only when the first message comes."""
        self.transcript = None
        self.saved = False
        self._opener = opener if lazy else None
        if lazy:
            return
        try:
            self.transcript = opener()
            self.saved = True
        except OSError as exc:
            self._warned = True
            self._warnings.append(f"the session will not be saved: {exc}")

    def _warn(self, text: str) -> None:
        """One warning per process: a broken data directory stays broken, saying so once is enough."""
        if not self._warned:
            self._warned = True
            print(f"warning: {visible(text)}", file=sys.stderr)

    def _open_now(self) -> None:
        opener, self._opener = self._opener, None
        if opener is None:
            return
        try:
            self.transcript = opener()
        except (OSError, session_lock.SessionInUse) as exc:  # in use: a new session's id is already taken
            self._warn(f"the session will not be saved: {exc}")

    def append(self, message: Message) -> None:
        self.write([message])

    def write(self, messages: Sequence[Message]) -> None:
        if messages and self.transcript is None:
            self._open_now()
        if self.transcript is None:
            return
        try:
            for message in messages:
                self.transcript.append(message)
            self.saved = self.saved or bool(messages)
        except OSError as exc:
            self._stop(exc)

    def rewrite(self, messages: Sequence[Message]) -> None:
        """A summary replaced the history: record the boundary and the new history."""
        if self.transcript is None:
            self._open_now()
        if self.transcript is None:
            return
        try:
            self.transcript.compacted(messages)
        except OSError as exc:
            self._stop(exc)

    def _stop(self, exc: OSError) -> None:
        """A write failed (the disk is full): say so once and write no more. The transcript ends with its last
        whole record, and closing it lets another process continue the session from there."""
        self._warn(f"the session can no longer be saved: {exc}")
        if self.transcript is not None:
            with contextlib.suppress(OSError):
                self.transcript.close()
            self.transcript = None

    def close(self) -> None:
        self._opener = None
        if self.transcript is not None:
            self.transcript.close()
            self.transcript = None
