"""Which MCP servers to run: Claude Code's `.mcp.json` format, read from a user file and the project.

Files, in order (a later file replaces a same-named server of an earlier one, whole):
1. the user's `$XDG_CONFIG_HOME/react-agent-mini/mcp.json` (default `~/.config/...`);
2. `<cwd>/.mcp.json`, or, when `MCP_CONFIG` is set, the files it names (comma-separated, relative to cwd, merged
   in order) instead.

Each file holds `{"mcpServers": {"<name>": {...}}}`, where an entry is either a local server run over stdio,
`{"command": "...", "args": [...], "env": {...}, "cwd": "..."}`, or a remote one,
`{"type": "http" | "sse", "url": "...", "headers": {...}}`. `${VAR}` and `${VAR:-default}` are expanded in every
value (not in keys) — but never, in a project's file, the credentials ram keeps from commands (its provider and
search keys: a cloned repository's server must not be handed them). A broken file or entry costs one warning line
naming it; everything else still loads.

The project's `.mcp.json` starts servers, so its entries load only where the folder's trust permits them
(`trust.gate`); the user's file and the files `MCP_CONFIG` names are the user's choice.

This module never imports the MCP SDK (≈0.6 s): it decides whether the SDK is needed at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    from ..trust.gate import TrustGate
    from ..trust.items import TrustItem

Transport = Literal["stdio", "http", "sse"]
Scope = Literal["user", "project"]

_TYPE_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
"""The start of a `${VAR}` or `${VAR:-default}` reference: a variable named so is withheld even where the
reference is cut short."""

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools (Claude Code's MCP_TIMEOUT default)."""
DEFAULT_CALL_TIMEOUT = 300.0
"""Seconds one tool call may take before it is reported as timed out."""


class ServerConfig(msgspec.Struct, frozen=True):
    """One configured MCP server, with `${VAR}` already expanded."""

    name: str
    """The key under `mcpServers`; tool names are `mcp__<name>__<tool>`."""
    transport: Transport
    command: str = ""
    """stdio: the program to run."""
    args: tuple[str, ...] = ()
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """stdio: variables set for the server on top of a small safe base (HOME, PATH, ...). Our own environment,
    API keys included, is not passed on unless named here."""
    cwd: str = ""
    """stdio: where the server runs (default: the workspace)."""
    url: str = ""
    """http/sse: the endpoint."""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    """http/sse: sent with every request (e.g. Authorization)."""
    source: str = ""
    """The file this entry came from."""
    scope: Scope = "project"
    """`user` for the user-level file; `project` for `.mcp.json` and MCP_CONFIG files. A front end may want the
    user to approve project servers first: a cloned repository's `.mcp.json` runs commands."""

    def __repr__(self) -> str:  # headers and env often hold tokens: never print their values
        target = self.url if self.transport != "stdio" else self.command
        return f"ServerConfig(name={self.name!r}, transport={self.transport!r}, target={target!r})"


class McpConfigError(ValueError):
    """A problem with one entry; the message says what, without the file name."""


def user_config_path(env: Mapping[str, str]) -> Path:
    """The user-level MCP config file."""
    config = env.get("XDG_CONFIG_HOME", "")
    # the XDG spec says a relative value is invalid and must be ignored
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "react-agent-mini" / "mcp.json"


def default_log_dir(env: Mapping[str, str]) -> Path:
    """Where server stderr logs go: `$XDG_STATE_HOME/react-agent-mini/mcp-logs` (default `~/.local/state/...`)."""
    state = env.get("XDG_STATE_HOME", "")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "react-agent-mini" / "mcp-logs"


def mcp_timeouts(env: Mapping[str, str]) -> tuple[float, float, list[str]]:
    """(connect, call) timeouts in seconds from MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds, as in Claude
    Code), and a warning per unusable value."""
    warnings: list[str] = []
    values = []
    for name, default in (("MCP_TIMEOUT", DEFAULT_CONNECT_TIMEOUT), ("MCP_TOOL_TIMEOUT", DEFAULT_CALL_TIMEOUT)):
        raw = env.get(name, "").strip()
        if raw.isdigit() and int(raw) > 0:
            values.append(int(raw) / 1000)
        else:
            if raw:
                warnings.append(f"{name} must be a positive number of milliseconds, got {raw!r}; using the default")
            values.append(default)
    return values[0], values[1], warnings


def config_files(cwd: Path, env: Mapping[str, str]) -> list[tuple[Path, Scope, bool]]:
    """(path, scope, named explicitly) for every file consulted, in merge order. A file `MCP_CONFIG` names is the
    project's when it lies inside `cwd`, else the user's."""
    files: list[tuple[Path, Scope, bool]] = [(user_config_path(env), "user", False)]
    listed = env.get("MCP_CONFIG", "").strip()
    if listed:
        for part in listed.split(","):
            if part.strip():
                path = cwd / os.path.expanduser(part.strip())
                files.append((path, "project" if _inside(path, cwd) else "user", True))
    else:
        files.append((cwd / ".mcp.json", "project", False))
    return files


def credential_references(cwd: Path, env: Mapping[str, str]) -> frozenset[str]:
    """Every variable a remote server's `url` or `headers` refers to in the MCP config files, trusted or not (the
    tokens ram sends to those servers: the session withholds them from commands, `tools.shell_env`). Files that
    cannot be read or parsed are skipped: `load_mcp_config` reports them."""
    names: set[str] = set()
    for path, _scope, _named in config_files(cwd, env):
        try:
            data: Any = msgspec.json.decode(path.read_bytes())
        except (OSError, msgspec.DecodeError):
            continue
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            continue
        for entry in servers.values():
            if isinstance(entry, dict):
                names.update(_remote_references(entry))
    return frozenset(names)


def _remote_references(entry: Mapping[str, Any]) -> set[str]:
    """The variables a server entry's `url` and `headers` values refer to (stdio entries have neither)."""
    values: list[object] = [entry.get("url")]
    headers = entry.get("headers")
    if isinstance(headers, dict):
        values += headers.values()
    return {name for value in values if isinstance(value, str) for name in _REFERENCE.findall(value)}


def load_mcp_config(
    cwd: Path, env: Mapping[str, str], *, trust: TrustGate | None
) -> tuple[dict[str, ServerConfig], list[str]]:
    """Every configured server by name, in file order (later files win), and one warning line per problem; the
    project's `.mcp.json` entries only where `trust` permits them (None: all)."""
    servers: dict[str, ServerConfig] = {}
    warnings: list[str] = []
    for path, scope, explicit in config_files(cwd, env):
        gate = trust if scope == "project" and not explicit else None
        found, file_warnings = load_config_file(path, cwd, env, scope=scope, must_exist=explicit, trust=gate)
        warnings += file_warnings
        for name, server in found.items():
            servers.pop(name, None)  # re-insert so the order follows the file that won
            servers[name] = server
    return servers, warnings


def load_config_file(
    path: Path,
    cwd: Path,
    env: Mapping[str, str],
    *,
    scope: Scope = "project",
    must_exist: bool = False,
    trust: TrustGate | None = None,
) -> tuple[dict[str, ServerConfig], list[str]]:
    """The servers of one file and its warnings. A missing file is fine unless it was named explicitly. `trust`:
    the gate each entry passes before it is even expanded (None: every entry loads)."""
    try:
        data: Any = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError:
        return {}, ([f"MCP config {path}: file not found (named in MCP_CONFIG)"] if must_exist else [])
    except OSError as exc:
        return {}, [f"MCP config {path}: cannot read it ({exc.strerror or exc}); its servers were skipped"]
    except msgspec.DecodeError as exc:
        return {}, [f"MCP config {path}: invalid JSON ({exc}); its servers were skipped"]
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        return {}, [f'MCP config {path}: expected {{"mcpServers": {{...}}}} at the top level; its servers were skipped']
    servers: dict[str, ServerConfig] = {}
    warnings: list[str] = []
    for name, raw in data["mcpServers"].items():
        if trust is not None and not trust.permits(trust_item(name, raw, _shown(path, cwd))):
            continue
        try:
            servers[name] = parse_server(name, raw, cwd, env, source=str(path), scope=scope)
        except McpConfigError as exc:
            warnings.append(f'MCP config {path}: server "{name}": {exc}; server skipped')
    return servers, warnings


def parse_server(
    name: str, raw: Any, cwd: Path, env: Mapping[str, str], *, source: str = "", scope: Scope = "project"
) -> ServerConfig:
    """One `mcpServers` entry, validated and expanded, or McpConfigError."""
    if not name.strip():
        raise McpConfigError("the server name is empty")
    if not isinstance(raw, dict):
        raise McpConfigError("expected an object")
    kind = raw.get("type")
    if kind is None:
        transport: Transport = "stdio" if "command" in raw or "url" not in raw else "http"
    elif isinstance(kind, str) and kind in _TYPE_ALIASES:
        transport = _TYPE_ALIASES[kind]
    else:
        raise McpConfigError(f'unknown "type" {kind!r} (use "stdio", "http" or "sse")')
    expand = _Expander(env, withheld=_project_withheld() if scope == "project" else frozenset())
    if transport == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise McpConfigError('"command" must be a non-empty string')
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise McpConfigError('"args" must be a list of strings')
        server_env = _string_map(raw, "env")
        workdir = raw.get("cwd", "")
        if not isinstance(workdir, str):
            raise McpConfigError('"cwd" must be a string')
        workdir = expand(workdir, "cwd")
        resolved_cwd = cwd / os.path.expanduser(workdir) if workdir else cwd
        return ServerConfig(
            name,
            "stdio",
            command=expand(command, "command"),
            args=tuple(expand(a, f"args[{i}]") for i, a in enumerate(args)),
            env={k: expand(v, f"env.{k}") for k, v in server_env.items()},
            cwd=str(resolved_cwd),
            source=source,
            scope=scope,
        )
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        raise McpConfigError(f'"url" must be a non-empty string for a {transport} server')
    url = expand(url.strip(), "url")
    if not url.startswith(("http://", "https://")):
        raise McpConfigError(f'"url" must start with http:// or https://, got {url!r}')
    headers = _string_map(raw, "headers")
    return ServerConfig(
        name,
        transport,
        url=url,
        headers={k: expand(v, f"headers.{k}") for k, v in headers.items()},
        source=source,
        scope=scope,
    )


def _string_map(raw: Mapping[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f'"{key}" must be an object of strings')
    return dict(value)


class _Expander:
    """`${VAR}` / `${VAR:-default}` against one environment; an unset variable without a default is an error
    (starting a server with an empty token would fail later, less clearly)."""

    def __init__(self, env: Mapping[str, str], withheld: frozenset[str] = frozenset()) -> None:
        self._env = env
        self._withheld = withheld

    def __call__(self, value: str, where: str) -> str:
        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in self._withheld:
                raise McpConfigError(
                    f"${{{name}}} (in {where}) is a credential ram never gives to a project's servers; define this "
                    "server in your own mcp.json to pass it"
                )
            found = self._env.get(name)
            if found is not None and (found or default is None):
                return found
            if default is not None:
                return default
            raise McpConfigError(f"environment variable {name} is not set (used in {where})")

        return _VAR.sub(substitute, value)


def trust_item(name: str, raw: Any, source: str) -> TrustItem:
    """What the user approves when trusting the project's server `name` (its whole entry, as written)."""
    from ..trust.items import make_item

    if isinstance(raw, dict) and isinstance(raw.get("url"), str):
        target = raw["url"]
    elif isinstance(raw, dict):
        args = raw.get("args")
        words = [raw.get("command", "")] + (args if isinstance(args, list) else [])
        target = " ".join(str(word) for word in words)
    else:
        target = "(not an object)"
    return make_item("mcp", source, f"{name}: {target}", {"name": name, "entry": raw})


def _project_withheld() -> frozenset[str]:
    from ..credentials import own_credentials

    return own_credentials()


def _inside(path: Path, root: Path) -> bool:
    try:
        resolved, top = path.resolve(), root.resolve()
    except (OSError, RuntimeError):
        return True  # cannot tell: the stricter reading
    return resolved == top or top in resolved.parents


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def parse_servers(
    raw: Mapping[str, Any], cwd: Path, env: Mapping[str, str], *, source: str
) -> tuple[dict[str, ServerConfig], list[str]]:
    """Servers given by a program rather than a file (`--mcp-config`, the library's `mcp_servers`): either
    `{"mcpServers": {...}}` or the inner mapping itself; one warning line per entry that cannot be used."""
    inner = raw.get("mcpServers", raw) if isinstance(raw, Mapping) else None
    if not isinstance(inner, Mapping):
        return {}, [f'MCP config {source}: expected {{"mcpServers": {{...}}}}; its servers were skipped']
    servers: dict[str, ServerConfig] = {}
    warnings: list[str] = []
    for name, entry in inner.items():
        try:
            servers[str(name)] = parse_server(str(name), entry, cwd, env, source=source, scope="user")
        except McpConfigError as exc:
            warnings.append(f'MCP config {source}: server "{name}": {exc}; server skipped')
    return servers, warnings
