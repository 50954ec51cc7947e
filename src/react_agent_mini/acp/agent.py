"""The ACP methods ram answers, on one connection. The `acp` package routes each method here (an unknown one gets
Method not found), and each session id maps to one `AcpSession`.

- `initialize`: protocol version 1 (the one this package speaks; a client asking for another gets 1, as the
  protocol says). Offered: `session/load`, prompts with images and embedded context, MCP servers over HTTP and
  SSE besides stdio, `session/list`, and one auth method. The client's capabilities (`fs`, `terminal`) decide the
  tools of every later session.
- `authenticate`: keys come from the environment, as for the CLI. The call succeeds when one is set, and otherwise
  fails saying which variables to set. `session/new` and `session/load` fail the same way (Authentication
  required, -32000) rather than starting a session that cannot call a model.
- `session/new`, `session/load`: a session in `cwd`. The client's MCP servers are merged with `.mcp.json`. Load
  reopens one of this workspace's transcripts by id and replays it as updates before it answers.
- `session/list`: this workspace's sessions, newest first.
- `session/set_mode`, `session/set_config_option` (`model`), `session/prompt`, `session/cancel`.

An unexpected exception in a method becomes a JSON-RPC error naming it (the session goes on). The package answers
malformed parameters with Invalid params and the details.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from .. import __version__, session_lock, transcript
from ..config import ConfigError, ProviderConfig
from ..ids import new_uuid
from ..session_lock import SessionInUse
from . import errors
from .history import replay
from .options import MODEL_OPTION, MODES, mode_state, model_option, models
from .prompt import PromptBlock
from .servers import ClientServer, mcp_json
from .session import AcpSession, SessionSetup

AUTH_METHOD = "environment"
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)
Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])


def readable(method: Method) -> Method:
    """An exception other than a `RequestError` becomes one whose message says what failed."""

    @functools.wraps(method)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except RequestError:
            raise
        except Exception as exc:
            raise errors.internal(f"ram: {method.__name__} failed: {type(exc).__name__}: {exc}") from exc

    return guarded  # type: ignore[return-value]


class RamAgent:
    """ram, as the agent of one ACP connection."""

    def __init__(self, resolve: Callable[[], ProviderConfig], setup: Callable[[ProviderConfig], SessionSetup]) -> None:
        self.resolve = resolve
        """Reads the provider configuration from the flags and the environment (ConfigError: no key)."""
        self.setup = setup
        self.conn: Client | None = None
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    # ---- connection ----

    @readable
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        version = protocol_version if protocol_version in SUPPORTED_VERSIONS else max(SUPPORTED_VERSIONS)
        return InitializeResponse(
            protocol_version=version,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            auth_methods=[
                AuthMethodAgent(
                    id=AUTH_METHOD,
                    name="API key in the environment",
                    description="Set OPENAI_API_KEY (DeepSeek by default; OPENAI_BASE_URL for other OpenAI-compatible "
                    "servers) or ANTHROPIC_API_KEY in the environment ram is started with (in Zed: agent_servers "
                    '→ "env"), then try again.',
                )
            ],
            agent_info=Implementation(name="react-agent-mini", title="ram", version=__version__),
        )

    @readable
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        if method_id != AUTH_METHOD:
            raise errors.invalid_params(f"unknown auth method {method_id!r} (ram has {AUTH_METHOD!r})")
        self._config()
        return AuthenticateResponse()

    # ---- sessions ----

    @readable
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[ClientServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        root = _workspace(cwd)
        session = await self._open(root, new_uuid(), mcp_servers or [], None)
        return NewSessionResponse(
            session_id=session.link.session_id,
            modes=mode_state(session.mode),
            config_options=[model_option(session.config, session.host.model)],
        )

    @readable
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[ClientServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        root = _workspace(cwd)
        path = transcript.find_session(root, session_id)
        if path is None or path.stem != session_id:
            raise errors.not_found(
                f"no saved session {session_id!r} in {root} (ram keeps each workspace's sessions apart)"
            )
        if session_id in self.sessions:  # reopened in this connection: the open one gives way
            await self.sessions.pop(session_id).aclose()
        holder = session_lock.holder(path)
        if holder is not None:
            raise errors.internal(str(SessionInUse(session_id, holder)))
        session = await self._open(root, session_id, mcp_servers or [], path)
        for update in replay(session.host.session.messages, session.root):
            await session.send(update)
        return LoadSessionResponse(
            modes=mode_state(session.mode), config_options=[model_option(session.config, session.host.model)]
        )

    @readable
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        if cwd is None:
            return ListSessionsResponse(sessions=[])
        root = _workspace(cwd)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.session_id,
                    cwd=str(root),
                    title=info.preview or None,
                    updated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.modified)),
                )
                for info in transcript.list_sessions(root)
            ]
        )

    @readable
    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        session = self._session(session_id)
        if mode_id not in MODES:
            raise errors.invalid_params(f"unknown mode {mode_id!r} (one of {', '.join(MODES)})")
        session.host.policy.mode = mode_id
        return SetSessionModeResponse()

    @readable
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        session = self._session(session_id)
        offered = models(session.config, session.host.model)
        if config_id != MODEL_OPTION or not isinstance(value, str) or value not in offered:
            raise errors.invalid_params(f"ram offers the option {MODEL_OPTION!r}, with one of: {', '.join(offered)}")
        session.host.set_model(value)
        return SetSessionConfigOptionResponse(config_options=[model_option(session.config, value)])

    @readable
    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # ---- life ----

    def stop_turns(self, reason: str) -> None:
        for session in self.sessions.values():
            session.stop(reason)

    async def aclose(self) -> None:
        """Close every session (each even if another fails)."""
        while self.sessions:
            _, session = self.sessions.popitem()
            with contextlib.suppress(Exception):
                await session.aclose()

    # ---- helpers ----

    def _config(self) -> ProviderConfig:
        try:
            return self.resolve()
        except ConfigError as exc:
            raise errors.auth_required(str(exc)) from None

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise errors.not_found(f"no session {session_id!r} is open (session/new or session/load first)")
        return session

    async def _open(self, root: Path, session_id: str, servers: list[ClientServer], resume: Path | None) -> AcpSession:
        assert self.conn is not None
        setup = self.setup(self._config())
        given, warnings = mcp_json(servers)
        for warning in warnings:
            setup.complain(f"warning: {warning}")
        try:
            session = await AcpSession.open(
                self.conn, setup, self.capabilities, root, session_id, servers=given, resume=resume
            )
        except SessionInUse as exc:
            raise errors.internal(str(exc)) from None
        self.sessions[session_id] = session
        return session


def _workspace(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute() or not path.is_dir():
        raise errors.invalid_params(f"cwd must be an absolute path to a directory, not {cwd!r}")
    return path.resolve()
