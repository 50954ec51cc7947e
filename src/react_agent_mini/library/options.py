"""From `Agent(...)`'s arguments to what a session is built from: a `ProviderConfig` and `SessionOptions`.

`AgentOptions` is the one list of those arguments, each with its type and what it means: `Agent(...)` and
`run(prompt, ...)` both take it as keywords (`**options: Unpack[AgentOptions]`), so a type checker and an editor
see every argument of both, and an argument added here is taken by both.

Arguments left unset come from the environment and the settings files, as for the CLI; those given win. The
environment is read, never changed: the provider is resolved from a copy with the arguments put in. Everything that
can be checked without opening the session is checked here, so a bad argument raises `ConfigError` (one line
saying what to fix) from `Agent(...)` itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from .. import provider_registry, session_lock, transcript
from ..app import SessionOptions
from ..config import ConfigError, ProviderConfig, either, key_choices, no_key_message, resolve_provider
from ..function_tools import FunctionTool
from ..ids import new_uuid
from ..permissions.configured import PermissionOptions
from ..permissions.rules import PERMISSION_MODES, PermissionMode, RuleError, parse_rule, split_rule_list
from ..provider_registry import MOCK

if TYPE_CHECKING:
    from ..hooks.typed import AgentHooks
    from ..provider_registry import ProviderName as ProviderName  # the built-in names, for editors
    from .permission import CanUseTool


class AgentOptions(TypedDict, total=False):
    """What `Agent(...)` and `run(prompt, ...)` take, all by keyword and all optional (the claude-agent-sdk's
    `ClaudeAgentOptions`, as keywords). `AgentOptions(cwd=".", model="m")` is a dict of them: `Agent(**options)`."""

    cwd: str | os.PathLike[str]
    """The workspace: where tools read, write and run commands, and whose settings and sessions count (default
    `.`)."""
    provider: ProviderName | str | None
    """`openai` (any OpenAI-compatible API), `anthropic`, `mock` (the offline demo model), or a provider added to
    `provider_registry`; None: as the environment says (OPENAI_API_KEY first, then ANTHROPIC_API_KEY)."""
    model: str | None
    """The model id; None: OPENAI_MODEL / ANTHROPIC_MODEL, else the provider's default."""
    base_url: str | None
    """The endpoint; None: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's default."""
    api_key: str | None
    """The key; None: OPENAI_API_KEY / ANTHROPIC_API_KEY."""
    permission_mode: PermissionMode | None
    """`default`, `acceptEdits`, `plan` (read-only) or `bypassPermissions`; None: the settings files'
    `defaultMode`, else `default`."""
    allowed_tools: str | Sequence[str]
    """Allow rules in Claude Code's syntax: `"Read"`, `"Edit(src/**)"`, `"Bash(git diff:*)"`, or the name of one of
    `tools`."""
    disallowed_tools: str | Sequence[str]
    """Deny rules, same syntax; they beat everything, even bypassPermissions."""
    can_use_tool: CanUseTool | None
    """`(tool_name, tool_input) -> Allow() | Deny(...)`, sync or async: asked where a person would be; None: such
    calls are denied (the model reads how to allow them)."""
    hooks: AgentHooks | None
    """Typed hooks: an instance of an `AgentHooks` subclass, whose `on_*` methods run at the session's hook points
    (`on_pre_tool_use`, `on_stop`, ...) beside the settings files' command hooks, with the same semantics."""
    system_prompt: str | None
    """Replaces ram's base instructions (project instructions, memory and skills still follow)."""
    append_system_prompt: str | None
    """Added at the end of the system prompt."""
    tools: Sequence[Callable[..., Any] | FunctionTool]
    """Python functions the model may call (see `function_tools`); they need permission unless marked
    `@tool(read_only=True)` or named in `allowed_tools`."""
    mcp_servers: Mapping[str, Any] | None
    """MCP servers in `.mcp.json`'s shape, `{name: {"command": ..., "args": [...]}}`, added to the project's (and
    winning over them on a name clash)."""
    max_turns: int
    """Model calls allowed per `run` (default 20)."""
    resume: str | None
    """Continue the saved session of `cwd` with this id (or unique id prefix)."""
    trust_project: bool | None
    """Whether `cwd`'s own hooks, `.mcp.json` servers, allow rules, `defaultMode: acceptEdits` and custom commands'
    `allowed-tools` apply: None as the user's trust says (`ram trust`); True: they all do (you vouch for the
    folder); False: none of them, whatever the user trusted. Its deny and ask rules, CLAUDE.md and skills apply in
    every case."""


DEFAULT_MAX_TURNS = 20


class Resolved(TypedDict):
    """What `resolve` makes of an `AgentOptions`."""

    config: ProviderConfig
    options: SessionOptions
    can_use_tool: CanUseTool | None
    hooks: AgentHooks | None


def resolve(given: Mapping[str, Any], env: Mapping[str, str], caller: str = "Agent") -> Resolved:
    """The provider and session `given` (an `AgentOptions`) describes: TypeError for an argument `AgentOptions`
    does not have (as Python's own for an unknown keyword), ConfigError for one that cannot be used."""
    unknown = [name for name in given if name not in AgentOptions.__optional_keys__]
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    config = provider_config(
        env,
        provider=given.get("provider"),
        model=given.get("model"),
        base_url=given.get("base_url"),
        api_key=given.get("api_key"),
    )
    options = session_options(
        env,
        cwd=given.get("cwd", "."),
        max_turns=given.get("max_turns", DEFAULT_MAX_TURNS),
        permission_mode=given.get("permission_mode"),
        allowed_tools=given.get("allowed_tools", ()),
        disallowed_tools=given.get("disallowed_tools", ()),
        system_prompt=given.get("system_prompt"),
        append_system_prompt=given.get("append_system_prompt"),
        tools=given.get("tools", ()),
        mcp_servers=given.get("mcp_servers"),
        resume=given.get("resume"),
        trust_project=given.get("trust_project"),
    )
    hooks = given.get("hooks")
    if hooks is not None:
        from ..hooks.typed import AgentHooks

        if not isinstance(hooks, AgentHooks):
            raise ConfigError(f"hooks: expected an instance of an AgentHooks subclass, got {hooks!r}")
    return Resolved(config=config, options=options, can_use_tool=given.get("can_use_tool"), hooks=hooks)


RESERVED_NAMES = frozenset({"Skill", "ListMcpResourcesTool", "ReadMcpResourceTool"})
"""Built-in tools that join the table after the caller's (the other built-in names are checked once it is made)."""


def provider_config(
    env: Mapping[str, str],
    *,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
) -> ProviderConfig:
    """The provider `env` gives, with the arguments that are set put over it."""
    if provider is not None and provider_registry.get(provider) is None:
        choices = either(repr(name) for name in provider_registry.names())
        raise ConfigError(f"provider must be {choices}, got {provider!r}")
    given = dict(env)
    kind = provider
    if kind is None and (base_url is not None or api_key is not None):
        kind = _kind_from(given)  # the endpoint and key are for the provider the environment picks
    if kind is not None and kind != MOCK:
        given.pop("QUERY_MOCK", None)  # an explicit choice wins over the demo switch
    spec = provider_registry.get(kind) if kind is not None else None
    if spec is not None and not spec.offline:
        if base_url is not None:
            given[spec.base_url_variable] = base_url
        if api_key is not None:
            given[spec.key_variable] = api_key
            if spec.token_variable:
                given.pop(spec.token_variable, None)  # the key given is the one to send
    try:
        return resolve_provider(given, provider=kind, model=model)
    except ConfigError as exc:
        message = str(exc)
        if message == no_key_message():
            message = library_no_key_message()
        message = message.replace("is not set", "is not set and no api_key= was given")
        raise ConfigError(message.replace("`--mock`", 'provider="mock"')) from None


def library_no_key_message() -> str:
    """The one line for no provider at all, in the library's words."""
    return (
        "No API key found: pass api_key= to Agent (with provider= and base_url= for another endpoint), or set "
        f'{key_choices()}; provider="mock" runs the offline scripted demo.'
    )


def _kind_from(env: Mapping[str, str]) -> str:
    """The provider whose key (or token) `env` sets first, else the first that makes requests."""
    online = [spec for spec in provider_registry.providers() if not spec.offline]
    return next((spec.name for spec in online if spec.has_credentials(env)), online[0].name)


def session_options(
    env: Mapping[str, str],
    *,
    cwd: str | os.PathLike[str],
    max_turns: int,
    permission_mode: str | None,
    allowed_tools: str | Sequence[str],
    disallowed_tools: str | Sequence[str],
    system_prompt: str | None,
    append_system_prompt: str | None,
    tools: Sequence[Callable[..., Any] | FunctionTool],
    mcp_servers: Mapping[str, Any] | None,
    resume: str | None,
    trust_project: bool | None = None,
) -> SessionOptions:
    """The session the arguments describe (ConfigError for one that cannot be)."""
    root = Path(cwd).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"cwd {os.fspath(cwd)!r} is not a directory")
    if permission_mode is not None and permission_mode not in PERMISSION_MODES:
        raise ConfigError(f"permission_mode must be one of {', '.join(PERMISSION_MODES)}; got {permission_mode!r}")
    mode: PermissionMode | None = permission_mode  # narrowed by the check above
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ConfigError(f"max_turns must be a whole number of at least 1, got {max_turns!r}")
    permissions = PermissionOptions(
        mode, _rules("allowed_tools", allowed_tools), _rules("disallowed_tools", disallowed_tools)
    )
    resumed = _session_path(root, resume) if resume is not None else None
    return SessionOptions(
        root,
        max_turns=max_turns,
        permissions=permissions,
        resume=resumed,
        session_id=None if resumed is not None else new_uuid(),  # known before the session opens
        system_prompt=system_prompt,
        append_system_prompt=append_system_prompt or "",
        extra_tools=function_tools(tools),
        mcp_servers=_servers(mcp_servers, root, env),
        trust=trust_project,
    )


def _rules(name: str, values: str | Sequence[str]) -> tuple[str, ...]:
    """Rules checked to parse: a rule that does not would be ignored, and an ignored deny rule fails open."""
    texts = [values] if isinstance(values, str) else list(values)
    rules: list[str] = []
    for value in texts:
        if not isinstance(value, str):
            raise ConfigError(f"{name}: expected rule strings such as 'Bash(git diff:*)', got {value!r}")
        for text in split_rule_list(value):
            try:
                parse_rule(text, "cli")
            except RuleError as exc:
                raise ConfigError(f"{name}: {text!r}: {exc}") from None
            rules.append(text)
    return tuple(rules)


def function_tools(tools: Sequence[Callable[..., Any] | FunctionTool]) -> tuple[FunctionTool, ...]:
    """The caller's functions as tools, with distinct names."""
    made: list[FunctionTool] = []
    for item in tools:
        if isinstance(item, FunctionTool):
            made.append(item)
        elif callable(item):
            try:
                made.append(FunctionTool(item))
            except ValueError as exc:
                raise ConfigError(f"tools: {exc}") from None
        else:
            raise ConfigError(f"tools: {item!r} is not a function")
    names = [tool.name for tool in made]
    for name in names:
        if name in RESERVED_NAMES:
            raise ConfigError(f"tools: {name!r} is the name of a built-in tool; name the function with @tool(name=...)")
        if names.count(name) > 1:
            raise ConfigError(f"tools: two tools are named {name!r}; rename one with @tool(name=...)")
    return tuple(made)


def _servers(servers: Mapping[str, Any] | None, root: Path, env: Mapping[str, str]) -> Mapping[str, Any] | None:
    """`mcp_servers` checked now: the session would only warn about an entry it cannot use, and skip it."""
    if servers is None:
        return None
    from ..mcp.config import parse_servers

    _, problems = parse_servers(servers, root, env, source="mcp_servers")
    if problems:
        raise ConfigError("; ".join(problems))
    return servers


def _session_path(root: Path, session_id: str) -> Path:
    """The transcript `resume` names, if no other process is writing it."""
    found = transcript.find_session(root, session_id) if session_id else None
    if found is None:
        raise ConfigError(f"resume: no single saved session of {root} matches {session_id!r} (ram --resume lists them)")
    holder = session_lock.holder(found)
    if holder is not None:
        raise ConfigError(str(session_lock.SessionInUse(found.stem, holder)))
    return found
