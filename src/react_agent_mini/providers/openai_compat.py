"""OpenAI-compatible Chat Completions (DeepSeek, OpenAI, OpenRouter, Groq, Cerebras, Mistral, Z.ai, Gemini, Hugging
Face, Ollama, vLLM, llama.cpp, …): the provider. Our messages go out in the server's dialect (`openai_messages.py`,
`dialects.py`); its answer comes in through `openai_stream.py`.

The wire format only: credentials, the client and the call itself are the shared provider part
(`http_provider.py`).

Wire facts this adapter relies on:
- streamed tool calls arrive as fragments keyed by `index`, their `arguments` split anywhere inside the JSON;
- usage comes in a last chunk with empty `choices` when `stream_options.include_usage` is set;
- a call's `id` is not always unique or present (local servers number every call `call_0`, or send none);
  any id may be sent back, so repeats and blanks are replaced by fresh ones (`with_distinct_call_ids`);
- which server this is comes from the base URL's host, else from what its answers carried (`dialects.py`): it
  decides what reasoning goes back and in what form.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..vision import supports_vision
from . import dialects
from .base import ModelRequest
from .dialects import Dialect
from .errors import ProviderError
from .http_provider import HttpProvider
from .openai_messages import ERROR_PREFIX, to_openai_messages, to_openai_tools
from .openai_stream import OpenAIStreamAssembler
from .openai_usage import parse_usage
from .think_tags import opens_reasoning
from .wire_layout import OPENAI_PATH, openai_body, openai_headers


class OpenAICompatProvider(HttpProvider):
    """Streams chat completions from any OpenAI-compatible server."""

    name: ClassVar[str] = "openai"
    path: ClassVar[str] = OPENAI_PATH
    id_prefix: ClassVar[str] = "call_"
    _seen: str = ""
    """The server the answers named (`dialects.seen`), when the base URL's host names none."""
    _opens_reasoning: bool = False
    """An answer began inside the reasoning (a lone `</think>`): later ones are read as starting there."""

    @property
    def dialect(self) -> Dialect:
        """The rules for what goes back: the host's, else those of the server the answers named, else generic."""
        return dialects.for_url(self.base_url) or dialects.DIALECTS.get(self._seen, dialects.GENERIC)

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the request."""
        images = supports_vision(self.model)
        messages = to_openai_messages(request.system, request.messages, self.dialect, images=images)
        return openai_body(self.model, messages, request.tools, request.max_tokens or self.max_tokens)

    def headers(self) -> dict[str, str]:
        """The key as a bearer token."""
        return openai_headers(self.api_key, self.auth_token)

    def new_stream(self) -> OpenAIStreamAssembler:
        return OpenAIStreamAssembler(open_at_start=self._opens_reasoning or opens_reasoning(self.model))

    def learn(self, reader: Any) -> None:
        """What a finished answer said about the server: its name, and whether it opens reasoning in the prompt."""
        if isinstance(reader, OpenAIStreamAssembler):
            self._seen = self._seen or reader.seen
            self._opens_reasoning = self._opens_reasoning or reader.lone_close


__all__ = [
    "ERROR_PREFIX",
    "OpenAICompatProvider",
    "OpenAIStreamAssembler",
    "ProviderError",
    "parse_usage",
    "to_openai_messages",
    "to_openai_tools",
]
