"""The MCP SDK's client side, loaded without its server side.

`import mcp` runs the package's `__init__`, which also imports the SDK's server (Starlette, uvicorn, the
in-process transport behind `mcp.Client`): ≈1.8 s of CPU on a small machine, where the client parts alone
(`mcp_types`, `mcp.client.session`, the transports) take ≈1 s. With several servers starting at once, that CPU
is taken from the servers themselves. So `load()` registers the `mcp` and `mcp.client` packages without running
their `__init__` — as lazy shells: the first attribute looked up on one runs its real `__init__`, so
`from mcp import X` anywhere else still works — and then imports only the modules a client needs.

`Session` is what the manager uses of the SDK: the SDK's own `ClientSession` over a transport, the protocol
era negotiated as `mcp.Client(mode="auto")` does (2026-07-28 `server/discover` first, else the 2025-11-25
`initialize` handshake; the SDK's `negotiate_auto`), the list/read/get/call requests, and the 2026 recovery from
a stale tool listing (`HEADER_MISMATCH`: re-list the tools, resend once). What `mcp.Client` adds beyond that —
a response cache and answering a server's input requests — the agent does not use: it offers no sampling,
elicitation or roots, so a request a server answers with "input required" fails with a line saying so.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientSession, LoggingFnT

LIGHT_PACKAGES = ("mcp", "mcp.client")
"""Packages whose `__init__` imports far more than a client needs (the second imports `mcp.Client`, which
imports the SDK's server)."""
CLIENT_MODULES = (
    "mcp_types",
    "mcp.shared.exceptions",
    "mcp.shared.message",
    "mcp.client.session",
    "mcp.client._probe",  # negotiate_auto: the SDK's own era negotiation, as mcp.Client uses it
    "mcp.client.streamable_http",
    "mcp.client.sse",
    "httpx2",
)
T = TypeVar("T")


class Unanswerable(Exception):
    """A server answered with something this client cannot act on (it asked for input first)."""


RELIST_PAGES = 20
"""Pages of tools/list read while recovering from a stale tool listing."""

_lock = threading.Lock()


def load() -> None:
    """Import the SDK's client side (not its server side); safe to call again, and from any thread."""
    for name in LIGHT_PACKAGES:
        _lazy_package(name)
    for name in CLIENT_MODULES:
        importlib.import_module(name)


def _lazy_package(name: str) -> None:
    """Register package `name` with its submodules importable but its `__init__` not yet run; the first
    attribute looked up on it runs the `__init__` (once), so the package behaves as usual from then on."""
    with _lock:
        if name in sys.modules:
            return
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            raise ImportError(f"No package named {name!r}", name=name)
        module = importlib.util.module_from_spec(spec)
        loader = spec.loader

        def run_init(attribute: str) -> Any:
            with _lock:
                if module.__dict__.get("__getattr__") is run_init:
                    del module.__dict__["__getattr__"]
                    loader.exec_module(module)
            try:
                return module.__dict__[attribute]
            except KeyError:
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

        module.__dict__["__getattr__"] = run_init
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            sys.modules[parent].__dict__[child] = module  # as an import binds a submodule on its package


def is_lazy(name: str) -> bool:
    """True while package `name` is registered by `load()` and its `__init__` has not run (for tests)."""
    module = sys.modules.get(name)
    return isinstance(module, ModuleType) and "__getattr__" in module.__dict__


class Session:
    """One negotiated MCP session over `transport` (an async context manager yielding the read and write
    streams). Enter it to connect; leaving closes the session, then the transport."""

    def __init__(
        self,
        transport: AbstractAsyncContextManager[tuple[Any, Any]],
        *,
        client_info: mcp_types.Implementation,
        logging_callback: LoggingFnT | None = None,
    ) -> None:
        self._transport = transport
        self._client_info = client_info
        self._logging_callback = logging_callback
        self._session: ClientSession | None = None
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> Session:
        from mcp.client._probe import negotiate_auto
        from mcp.client.session import ClientSession

        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport)
            session = ClientSession(read, write, client_info=self._client_info, logging_callback=self._logging_callback)
            await stack.enter_async_context(session)
            await negotiate_auto(session)
            self._session = session
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, tb)

    @property
    def session(self) -> ClientSession:
        if self._session is None:
            raise RuntimeError("the MCP session is not connected")
        return self._session

    # ---- what the handshake told us ----

    @property
    def protocol_version(self) -> str:
        return self.session.protocol_version or ""

    @property
    def server_info(self) -> mcp_types.Implementation | None:
        return self.session.server_info

    @property
    def server_capabilities(self) -> mcp_types.ServerCapabilities:
        import mcp_types

        return self.session.server_capabilities or mcp_types.ServerCapabilities()

    @property
    def instructions(self) -> str | None:
        return self.session.instructions

    # ---- requests ----

    async def list_tools(self, cursor: str | None = None) -> mcp_types.ListToolsResult:
        return await self.session.list_tools(params=_page(cursor))

    async def list_prompts(self, cursor: str | None = None) -> mcp_types.ListPromptsResult:
        return await self.session.list_prompts(params=_page(cursor))

    async def list_resources(self, cursor: str | None = None) -> mcp_types.ListResourcesResult:
        return await self.session.list_resources(params=_page(cursor))

    async def list_resource_templates(self, cursor: str | None = None) -> mcp_types.ListResourceTemplatesResult:
        return await self.session.list_resource_templates(params=_page(cursor))

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        return _answered(await self.session.read_resource(uri, allow_input_required=True))

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> mcp_types.GetPromptResult:
        return _answered(await self.session.get_prompt(name, arguments, allow_input_required=True))

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> mcp_types.CallToolResult:
        """tools/call; on a 2026-07-28 connection a `HEADER_MISMATCH` refusal (our listing of the tool is stale)
        re-lists the tools and resends once, as the spec asks."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import HEADER_MISMATCH
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        try:
            return await self._call_tool(name, arguments)
        except MCPError as exc:
            if exc.code != HEADER_MISMATCH or self.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                raise
        cursor: str | None = None
        for _ in range(RELIST_PAGES):
            page = await self.list_tools(cursor)
            cursor = page.next_cursor
            if cursor is None or any(tool.name == name for tool in page.tools):
                break
        return await self._call_tool(name, arguments)

    async def _call_tool(self, name: str, arguments: dict[str, Any] | None) -> mcp_types.CallToolResult:
        import mcp_types

        result = _answered(await self.session.call_tool(name, arguments, allow_input_required=True))
        if not isinstance(result, mcp_types.CallToolResult):  # only a claimed extension shape, which we never claim
            raise Unanswerable(f"the server answered with an unknown result ({type(result).__name__})")
        return result


INPUT_KINDS = {
    "elicitation/create": "an answer from the user",
    "sampling/createMessage": "a completion from the client's model",
    "roots/list": "the client's workspace roots",
}


def _answered(result: T | mcp_types.InputRequiredResult) -> T:
    """`result`, unless the server asked for input first (2026-07-28 `input_required`), which this client cannot
    give: then Unanswerable, naming what it wanted."""
    import mcp_types

    if not isinstance(result, mcp_types.InputRequiredResult):
        return result
    wanted = sorted({INPUT_KINDS.get(r.method, r.method) for r in (result.input_requests or {}).values()})
    what = ", ".join(wanted) or "more input"
    raise Unanswerable(f"the server asked for {what} before answering, which react-agent-mini cannot provide")


def schema_problem(exc: BaseException) -> str:
    """A pydantic ValidationError as one short line: where the first problem is, what it is, how many more."""
    errors = getattr(exc, "errors", None)
    found: list[Any] = errors() if callable(errors) else []
    if not found:
        return "not valid"
    first = found[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "the message"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"{where}: {first.get('msg', 'not valid')}{more}"


def _page(cursor: str | None) -> mcp_types.PaginatedRequestParams | None:
    import mcp_types

    return None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
