"""Assembly: turn a configuration into a ready Session (provider + retries, tools, permissions, deps).

The one place that knows which concrete parts production uses; tests build Sessions with their own deps. The
result, `Assembled`, is what `host.SessionHost` runs: callers go through the host, which starts and stops the parts
in the right order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from . import recorder as recording
from . import session_lock
from .compact.controller import Compaction
from .compact.tokens import context_window
from .config import ProviderConfig, build_provider
from .context.knowledge import Knowledge
from .context.system_prompt import BASE_PROMPT
from .custom_commands.catalog import CommandCatalog
from .events import AssistantTurn
from .extension_points import add_agent_tool, reinjected, reset_tools, restore_tools
from .hooks import Hooks
from .hooks.session import session_hooks, wire
from .ids import new_uuid
from .loop import QueryDeps
from .mcp.attachment import McpAttachment
from .messages import Usage
from .permissions.configured import PermissionOptions, PermissionSettings, build_policy
from .permissions.policy import Asker, CanUseTool, PermissionPolicy
from .providers.base import CallModel, ModelProvider
from .providers.retry import RetryPolicy, retrying
from .recorder import TranscriptRecorder
from .session import Session
from .subagents.definitions import AgentCatalog
from .tools.base import Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:
    from .checkpoints.tracker import Checkpoints
    from .hooks.command.config import CommandHook
    from .sandbox.settings import SandboxConfig
    from .trust.gate import TrustGate

SYSTEM_PROMPT = BASE_PROMPT
"""The base prompt alone (benchmarks use it; sessions get the full prompt from `Knowledge`)."""


def default_tools(*, echo: bool = True) -> ToolRegistry:
    """The built-in tools, in the order the model sees them; `echo` False: without the Echo demo tool (a session
    offers it only to the offline demo model, `--mock`, or when `--tools` names it: every other model would pay for
    its definition in every request)."""
    from .tools.builtin.bash import BashTool
    from .tools.builtin.bash_output import BashOutputTool
    from .tools.builtin.echo import EchoTool
    from .tools.builtin.edit import EditTool
    from .tools.builtin.glob import GlobTool
    from .tools.builtin.grep import GrepTool
    from .tools.builtin.kill_shell import KillShellTool
    from .tools.builtin.read import ReadTool
    from .tools.builtin.todo import TodoWriteTool
    from .tools.builtin.write import WriteTool
    from .web.fetch_tool import WebFetchTool

    bash = BashTool()
    return ToolRegistry(
        [
            ReadTool(),
            WriteTool(),
            EditTool(),
            GlobTool(),
            GrepTool(),
            bash,
            BashOutputTool(bash.background),  # the shells Bash starts with run_in_background
            KillShellTool(bash.background),
            WebFetchTool(),
            *([EchoTool()] if echo else []),
            TodoWriteTool(),
        ]
    )


def withheld_credentials(cwd: Path, env: Mapping[str, str]) -> frozenset[str]:
    """Every variable holding a credential ram uses, which Bash commands and hooks do not get (`tools.shell_env`):
    the provider and search keys (`credentials.own_credentials`), and each variable a remote MCP server's `url` or
    `headers` refers to in the MCP config files (`mcp.config.credential_references`)."""
    from .credentials import own_credentials
    from .mcp.config import credential_references

    return own_credentials() | credential_references(cwd, env)


ModelCalls: TypeAlias = Callable[[ModelProvider, RetryPolicy], CallModel]
"""How a session makes its model calls from its provider and retry policy (`retrying` unless a front end gives its
own: a batch routes each attempt through its endpoint's limiter)."""


def production_deps(
    provider: ModelProvider, policy: RetryPolicy, can_use_tool: CanUseTool, model_calls: ModelCalls = retrying
) -> QueryDeps:
    """Deps whose model calls go to `provider`, retried per `policy` (made by `model_calls`)."""
    return QueryDeps(call_model=model_calls(provider, policy), can_use_tool=can_use_tool)


class SessionOptions(msgspec.Struct, frozen=True):
    """Everything about a session besides the provider: where, how long, what it may do, what it knows."""

    cwd: Path
    """The workspace."""
    max_turns: int = 20
    """Model calls allowed per turn."""
    permissions: PermissionOptions = msgspec.field(default_factory=PermissionOptions)
    resume: Path | None = None
    """A saved transcript to continue."""
    fork: bool = False
    """With `resume`: continue it as a new session (the original stays as it was)."""
    session_id: str | None = None
    """The new session's id (`--session-id`); None: a fresh UUID."""
    save: bool = True
    """False: write no transcript."""
    system_prompt: str | None = None
    """Replaces our base instructions (project instructions, memory and skills still follow); None: ours."""
    append_system_prompt: str = ""
    """Added at the end of the system prompt."""
    builtin_tools: Sequence[str] | None = None
    """Names of the built-in tools to offer (`--tools`; "default" among them: all but Echo); None: all of them but
    Echo, the demo tool, which only the offline mock model is offered unless named here."""
    extra_tools: Sequence[Tool] = ()
    """More tools (the library's Python functions)."""
    mcp_servers: Mapping[str, Any] | None = None
    """Servers given by the caller, in `.mcp.json`'s shape (they win over the files on a name clash)."""
    strict_mcp: bool = False
    """Use only `mcp_servers`, not the config files."""
    mock_chunk_delay: float = 0.0
    """Seconds between chunks of the offline demo model."""
    sandbox: SandboxConfig | None = None
    """The OS sandbox Bash commands run in (`--sandbox`, see `sandbox.settings`); None: as the settings files say."""
    trust: TrustGate | bool | None = None
    """Whether the project's own hooks, MCP servers, allow rules and widening mode apply (`trust/`): None as the
    user's trust store and settings say; True: they all do (a program's explicit choice); a gate: that one (the
    REPL's, after its question)."""


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
    commands: CommandCatalog
    """Custom slash commands (`.claude/commands/`), found the first time they are asked for."""
    agents: AgentCatalog
    """The agent types the Agent tool offers."""
    hooks: Hooks | None = None
    """Every hook of the session (the settings files' commands, a driving program's); None: there are none."""
    trust: TrustGate | None = None
    """Which parts of the project's own configuration apply, and which were left out (`trust.gate`)."""

    def new_conversation(self) -> None:
        """`/clear`: forget the conversation and go on in a new session with its own transcript (the old one
        stays resumable); loaded skills and the task list are forgotten too."""
        self.recorder.close()
        self.session.clear()
        reset_tools(self.session)
        self.session.session_id = new_uuid()
        recording.start_new(self.session, self.recorder, self.provider)

    def switch_to(self, path: Path) -> list[str]:
        """`/resume`: continue the saved session at `path` instead of this one (this one stays saved);
        warnings to show. `SessionInUse`, with nothing changed, when another process is writing that session."""
        try:
            lock: session_lock.SessionLock | None = session_lock.SessionLock.acquire(path)
        except OSError:
            lock = None  # no lock file can be made there: reopening fails the same way and says so
        self.recorder.close()
        self.session.clear()
        reset_tools(self.session)
        warnings = recording.resume(self.session, self.recorder, path, lock)
        restore_tools(self.session)
        return warnings


def build_session(
    config: ProviderConfig,
    options: SessionOptions,
    *,
    asker: Asker | None = None,
    hooks: Hooks | None = None,
    model_calls: ModelCalls = retrying,
) -> Assembled:
    """A session for `config` as `options` say; `asker` is None when nobody can answer permission prompts,
    `hooks` the hooks a driving program registered, `model_calls` how its model calls are made (the session's
    turns, its summaries and its subagents of the same model all use them)."""
    from .trust.gate import TrustGate, trust_gate

    cwd = options.cwd.resolve()
    provider = build_provider(config, mock_chunk_delay=options.mock_chunk_delay)
    context = ToolContext(cwd=cwd)
    trust = options.trust if isinstance(options.trust, TrustGate) else trust_gate(cwd, explicit=options.trust)
    policy, warnings, permission_settings = build_policy(cwd, options.permissions, asker, context.shell, trust=trust)
    warnings[:0] = trust.warnings
    context.read_denied = policy.read_denied
    from .permissions.settings import load_pass_credentials

    passed, env_warnings = load_pass_credentials(cwd)
    warnings += env_warnings
    context.shell.withheld = withheld_credentials(cwd, os.environ) - passed  # what Bash commands do not get
    from .hooks.command.config import load_command_hooks

    permissions = options.permissions
    loaded_hooks = load_command_hooks(cwd, os.environ, permissions.setting_sources, permissions.settings, trust=trust)
    hooks = session_hooks(cwd, hooks, loaded_hooks, shell=context.shell, warnings=warnings)
    knowledge = Knowledge(
        cwd,
        os.environ,
        window_tokens=context_window(provider.model),
        base_prompt=options.system_prompt,
        append_prompt=options.append_system_prompt,
    )
    tools = _tool_table(options, warnings, mock=config.kind == "mock")
    _attach_sandbox(options, cwd, tools, policy, warnings, loaded_hooks.hooks)
    if _offered("WebSearch", options):  # only with a search backend configured
        from .web.search_tool import configured_search_tool

        search, search_warnings = configured_search_tool(cwd, os.environ)
        warnings += search_warnings
        if search is not None and tools.get(search.name) is None:
            tools.add(search)
    if knowledge.skills and _offered("Skill", options):
        from .tools.builtin.skill import SkillTool

        tools.add(SkillTool(knowledge.skills))
    retry = RetryPolicy(max_attempts=config.max_retries + 1)
    deps = msgspec.structs.replace(production_deps(provider, retry, policy, model_calls), hooks=hooks)
    compaction = Compaction(deps.call_model, model=provider.model, reinject=reinjected(tools))
    if hooks is not None:
        wire(hooks, compaction, policy)
    session = Session(
        deps=deps,
        compaction=compaction,
        tools=tools,
        context=context,
        system_prompt=knowledge.system_prompt,
        max_turns=options.max_turns,
        max_tokens=config.max_output_tokens,
        refresh_system_prompt=knowledge.refreshed_prompt,
        session_id=options.session_id or "",
    )
    if page_model := os.environ.get("RAM_WEBFETCH_MODEL", "").strip():  # it answers WebFetch's prompt (web/answer.py)
        from .web.fetch_tool import attach_page_reader

        def count(usage: Usage) -> None:
            session.totals.usage += usage
            recorder.called(usage, page_model, kind="page")

        attach_page_reader(tools, config, page_model, count)
    warnings += knowledge.warnings
    recorder = TranscriptRecorder(warnings)
    if options.resume is not None and options.fork:
        warnings += recording.fork(session, recorder, options.resume, provider)
    elif options.resume is not None:
        warnings += recording.resume(session, recorder, options.resume)
    elif options.save:
        recording.start_new(session, recorder, provider)
    restore_tools(session)
    session.on_message = recorder.append
    session.on_rewrite = recorder.rewrite

    def called(usage: Usage, turn: AssistantTurn | None) -> None:
        recorder.called(usage, provider.model, turn)  # the model now: a driving program may switch it

    session.on_call = called
    if os.environ.get("RAM_CHECKPOINTS", "1") != "0":  # what Write, Edit and Bash change is kept for /rewind
        context.changes = checkpoints_for(session, recorder)
    agents = AgentCatalog(cwd, os.environ)
    if _offered("Agent", options):

        def transcript_file() -> Path | None:
            return recorder.transcript.path if recorder.transcript is not None else None

        add_agent_tool(
            session,
            agents,
            deps=deps,
            policy=policy,
            provider=provider,
            config=config,
            retry=retry,
            knowledge=knowledge,
            hooks=hooks,
            transcript=transcript_file,
        )
    mcp = McpAttachment(cwd, os.environ, warnings, extra=options.mcp_servers, strict=options.strict_mcp, trust=trust)
    commands = CommandCatalog(cwd, os.environ)
    if left_out := trust.left_out_line():
        warnings.append(left_out)
    return Assembled(
        session,
        provider,
        policy,
        warnings,
        knowledge,
        recorder,
        mcp,
        permission_settings,
        commands,
        agents,
        hooks,
        trust,
    )


def checkpoints_for(session: Session, recorder: TranscriptRecorder) -> Checkpoints:
    """The session's checkpoints, in a store beside whichever transcript it is writing (`checkpoints/`)."""
    from .checkpoints.tracker import Checkpoints, StoreLocator

    def transcript_path() -> Path | None:
        return recorder.transcript.path if recorder.transcript is not None else None

    return Checkpoints(lambda: session.messages, StoreLocator(transcript_path, lambda: session.session_id))


def _own_folders_inside(cwd: Path) -> list[Path]:
    """ram's own config and data folders, where they lie inside the workspace (ram started in the home directory):
    what a sandboxed command must not write — the user's settings and trust, transcripts, checkpoint stores."""
    from .context import user_config_dir
    from .transcript import data_dir

    found = []
    for folder in (user_config_dir(), data_dir()):
        try:
            resolved = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if resolved == cwd or cwd in resolved.parents:
            found.append(resolved)
    return found


def _offered(name: str, options: SessionOptions) -> bool:
    """Is the built-in tool `name` offered (`--tools` names the built-in tools to keep; "default" among them keeps
    every one but Echo)?"""
    keep = options.builtin_tools
    return keep is None or name in keep or ("default" in keep and name != "Echo")


def _tool_table(options: SessionOptions, warnings: list[str], *, mock: bool = False) -> ToolRegistry:
    """The built-in tools `options` keep, then the caller's own (a name taken twice keeps the first). Echo only for
    the `mock` model or when `--tools` names it."""
    tools = default_tools(echo=mock or (options.builtin_tools is not None and "Echo" in options.builtin_tools))
    if options.builtin_tools is not None:
        tools = ToolRegistry(t for t in tools if _offered(t.name, options))
    for tool in options.extra_tools:
        if tools.get(tool.name) is not None:
            warnings.append(f"tool {tool.name!r} is defined twice; the first one is kept")
            continue
        tools.add(tool)
    return tools


def _attach_sandbox(
    options: SessionOptions,
    cwd: Path,
    tools: ToolRegistry,
    policy: PermissionPolicy,
    warnings: list[str],
    hook_commands: Sequence[CommandHook],
) -> None:
    """Bash runs its commands in the sandbox the options (or else the settings files) ask for, and the policy
    knows whether they are confined; the workspace files the session's hook commands run, and ram's own folders
    when the workspace holds them, stay read-only to those commands. Only the configuration loads here; the
    machinery and the read-only paths, at the first command."""
    from .sandbox.handle import Sandbox
    from .sandbox.settings import resolve_sandbox
    from .tools.builtin.bash import BashTool

    config = options.sandbox
    if config is None:
        config = resolve_sandbox(cwd, os.environ, sources=options.permissions.setting_sources)
        warnings += config.warnings
    bash = tools.get("Bash")
    if isinstance(bash, BashTool):

        def read_only() -> list[Path]:
            if not (config.enabled and config.mode == "workspace-write"):
                return []
            paths = _own_folders_inside(cwd)
            if hook_commands:
                from .hooks.command.files import hook_files

                paths += hook_files(hook_commands, cwd)
            return paths

        bash.sandbox = Sandbox(config, cwd, lambda: policy.rules, read_only=read_only)
        policy.sandboxed = bash.sandbox.confines_commands
