"""The provider part both HTTP wire formats share: credentials, base URL, the httpx client, the time limits.

A provider over HTTP is this part plus one wire format, a subclass that says what a request sends (`path`,
`build_body`, `headers`) and how its stream is read (`new_stream`: a reader fed each event's data). This part
opens the client on the first call, posts the body, feeds the reader until the stream says it is over, makes the
tool-call ids distinct, and closes the client; its `repr` never shows the key. Transport failures become our
errors in `http.py`, below both.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import msgspec

from ..events import ModelEvent, ModelResponse
from ..trace import trace
from .base import ModelRequest, trace_response, with_distinct_call_ids
from .http import FIRST_BYTE_TIMEOUT, STREAM_IDLE_TIMEOUT, new_client, post_sse

if TYPE_CHECKING:
    import httpx


class StreamReader(Protocol):
    """How one wire format reads a streamed answer. Pure: fed each event's `data`, no I/O."""

    @property
    def stopped(self) -> bool:
        """The stream said it is over: read no further."""
        ...

    def take(self, data: str) -> Iterator[ModelEvent]:
        """Take one event's data; yield the deltas it carries."""
        ...

    def end(self) -> Iterator[ModelEvent]:
        """The stream is over: the deltas still held back (a tag cut at a chunk's end, say)."""
        ...

    def finish(self) -> ModelResponse:
        """The complete response; StreamInterrupted when the stream ended before it was complete."""
        ...


class HttpProvider(msgspec.Struct):
    """Streams model calls over HTTP in the wire format of a subclass."""

    api_key: str
    """The key (never shown: `repr` leaves it out)."""
    base_url: str
    model: str
    """The model id requests are sent with (a driving program may switch it between turns)."""
    max_tokens: int | None = None
    """The output limit when a request names none; None leaves it to the wire format's default."""
    auth_token: str = ""
    """A bearer token sent instead of the key (ANTHROPIC_AUTH_TOKEN: gateways that expect one)."""
    idle_timeout: float = STREAM_IDLE_TIMEOUT
    """Seconds of silence mid-stream after which the stream counts as dropped."""
    first_byte_timeout: float = FIRST_BYTE_TIMEOUT
    """Seconds from the request until the first line of the answer, after which the attempt counts as failed."""
    _client: httpx.AsyncClient | None = None

    name: ClassVar[str]
    """`openai` or `anthropic`: what errors and traces call the provider."""
    path: ClassVar[str]
    """Where requests go, after the base URL."""
    id_prefix: ClassVar[str]
    """Fresh tool-call ids look like the wire format's own (`call_…`, `toolu_…`)."""

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the request (the wire format's)."""
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        """The request's headers: the credentials as the wire format sends them, and its own."""
        raise NotImplementedError

    def new_stream(self) -> StreamReader:
        """A reader for one streamed answer (the wire format's)."""
        raise NotImplementedError

    def learn(self, reader: Any) -> None:
        """What a complete answer tells about the server, for the requests after it (the wire format's; none)."""

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        """One model call: the deltas as they arrive, then the response."""
        if self._client is None:
            self._client = new_client(self.base_url)
        trace("api.request", messages=len(request.messages), tools=len(request.tools), model=self.model)
        url = self.base_url.rstrip("/") + self.path
        reader = self.new_stream()
        body = self.build_body(request)
        post = post_sse(
            self._client,
            url,
            headers=self.headers(),
            body=body,
            provider=self.name,
            idle_timeout=self.idle_timeout,
            first_byte_timeout=self.first_byte_timeout,
            base_url=self.base_url,
        )
        async with aclosing(post) as events:
            async for sse in events:
                for event in reader.take(sse.data):
                    yield event
                if reader.stopped:
                    break
        for event in reader.end():
            yield event
        # A result is matched to its call by id alone; a server (or a proxy) does not always keep them unique.
        response = with_distinct_call_ids(reader.finish(), request.messages, self.id_prefix)
        self.learn(reader)
        trace_response(response)
        yield response

    async def aclose(self) -> None:
        """Release the client's connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
