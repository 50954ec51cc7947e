"""Our small error hierarchy for model calls. Adapters map HTTP and stream failures here, in one place each.

Every error carries a one-line `message` fit to show a user, and says whether a retry may help.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import provider_registry

if TYPE_CHECKING:
    from ..messages import Usage


class ProviderError(Exception):
    """A model call failed."""

    retryable: bool = False
    max_attempts: int | None = None
    """At most this many attempts for this kind of failure (None: as many as the retry policy allows)."""
    configuration: bool = False
    """The user's setup is wrong (no such model, not this kind of endpoint): `ram` exits 2, as for a missing key."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked us to wait (from `retry-after`/`retry-after-ms`), if any."""
        self.usage: Usage | None = None
        """What the failed call used, when the server said it before failing (its tokens were billed)."""


class AuthenticationError(ProviderError):
    """The key was refused (401/403)."""


class BadRequestError(ProviderError):
    """The request was refused as invalid (400/404/413/422): retrying the same request cannot help."""


class ModelNotFound(BadRequestError):
    """404 (or DeepSeek's 400 "Model Not Exist"): the server has no model by the name we sent."""

    configuration = True


class EndpointNotFound(BadRequestError):
    """404 that does not say why: the server has no such model, or the base URL is not this kind of endpoint."""

    configuration = True


class RateLimitError(ProviderError):
    """429: too many requests or tokens."""

    retryable = True


class ServerError(ProviderError):
    """408/409/5xx/529: the provider failed or is overloaded."""

    retryable = True


class ConnectionFailed(ProviderError):
    """No response: connection refused, reset, or timed out before the first byte."""

    retryable = True


class FirstByteTimeout(ConnectionFailed):
    """Nothing came back (no headers, or headers and no line) within the first-byte limit."""


class StreamInterrupted(ProviderError):
    """The stream stopped before the response was complete (connection dropped midway)."""

    retryable = True


class ModelCallInvalid(ProviderError):
    """The server refused the tool call the model generated (Groq's `tool_use_failed`: it did not parse, or did not
    match the tool's schema). Another attempt often gets a valid call, so it is tried once more; after that the
    model is told its call was invalid (`invalid_call.py`), as a wrong call it made itself would be."""

    retryable = True
    max_attempts = 2

    def __init__(self, message: str, failed_generation: str, *, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.failed_generation = failed_generation
        """What the model generated, as the server quoted it (may be "")."""


class MalformedStream(ProviderError):
    """The provider sent something that is not its documented wire format."""


class MissingConfiguration(ProviderError):
    """No key, unknown provider name: a setup problem the user must fix."""


def base_url_variable(provider: str) -> str:
    """The environment variable that sets `provider`'s base URL, for hints (`provider_registry`)."""
    spec = provider_registry.get(provider)
    return spec.base_url_variable if spec is not None and spec.base_url_variable else "the base URL"


def error_for_status(
    status: int,
    detail: str,
    *,
    provider: str,
    retry_after: float | None,
    model: str = "",
    url: str = "",
    base_url: str = "",
    code: str = "",
    failed_generation: str | None = None,
    text: str = "",
) -> ProviderError:
    """The error for a non-2xx HTTP answer; `detail` is the provider's own message, `model` the model asked for,
    `url` where and `base_url` the endpoint as set (for the hint when the server has no such model or no such
    endpoint); `code` the error's own code (`tool_use_failed`, `insufficient_quota`, …) and `failed_generation`
    Groq's copy of a call the model got wrong; `text` the line to show instead of `<provider> API error <status>`."""
    text = text or f"{provider} API error {status}: {detail}".strip()
    if code == "tool_use_failed" or failed_generation is not None:
        return ModelCallInvalid(text, failed_generation or "", status=status)
    if status in (401, 403):
        return AuthenticationError(f"{text} (check your API key)", status=status)
    named = f'model "{model}"' if model else "the model"
    at = f" at {base_url}" if base_url else ""
    spec = provider_registry.get(provider)
    model_variable = spec.model_variable if spec is not None and spec.model_variable else "the model variable"
    if (status == 404 and _MENTIONS_MODEL.search(detail)) or (status == 400 and _NO_SUCH_MODEL.search(detail)):
        hint = f"{named} was not found{at}: choose another with --model or {model_variable}"
        return ModelNotFound(f"{text} ({hint})", status=status)
    if status == 404 and (url or base_url):
        endpoint = base_url or url
        kind = spec.endpoint_kind if spec is not None and spec.endpoint_kind else "the endpoint this provider needs"
        hint = (
            f"{named} not found at {endpoint}, or {endpoint} is not {kind}: requests go to {url or endpoint}; "
            f"check --model or {model_variable}, and {base_url_variable(provider)}"
        )
        return EndpointNotFound(f"{text} ({hint})", status=status)
    if status == 429 and code in _NOT_A_RATE:
        return BadRequestError(text, status=status)  # out of credits: waiting does not help
    if status == 429:
        return RateLimitError(text, status=status, retry_after=retry_after)
    if status in (408, 409) or status >= 500:
        return ServerError(text, status=status, retry_after=retry_after)
    if status in (400, 413) and (_TOO_LONG.search(detail) or code == "context_length_exceeded"):
        error = ContextTooLong(f"{text} ({CONTEXT_TOO_LONG_HINT})", status=status)
        error.limit_tokens = stated_limit(detail)
        return error
    return BadRequestError(text, status=status)


_NOT_A_RATE = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
"""429 codes that mean no money rather than too fast (OpenAI's)."""

STREAM_STATUS = {
    "server_error": 500,
    "api_error": 500,
    "internal_error": 500,
    "internal_server_error": 500,
    "service_unavailable": 503,
    "overloaded_error": 529,
    "timeout": 408,
    "rate_limit_exceeded": 429,
    "rate_limit_error": 429,
    "insufficient_quota": 429,
    "invalid_request_error": 400,
    "invalid_request_message_order": 400,
    "context_length_exceeded": 400,
    "tool_use_failed": 400,
    "request_too_large": 413,
    "authentication_error": 401,
    "invalid_api_key": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "model_not_found": 404,
}
"""The HTTP status an error's `code` or `type` stands for, when an error arrives inside a 200 stream without one."""


def error_in_stream(
    detail: str,
    *,
    provider: str,
    status: int | None = None,
    code: str = "",
    kind: str = "",
    failed_generation: str | None = None,
    model: str = "",
) -> ProviderError:
    """The error for an error object inside a 200 stream: classified by the status it states, else by what its
    code or type stands for, as an HTTP answer with that status would be. One that says nothing of the kind is
    taken for a server failure (retried), as before."""
    text = f"{provider} API error in stream: {detail}".strip()
    if status is None:
        status = STREAM_STATUS.get(code) or STREAM_STATUS.get(kind)
    if status is None and _TOO_LONG.search(detail):
        status = 400
    if status is None:
        return ModelCallInvalid(text, failed_generation) if failed_generation is not None else ServerError(text)
    return error_for_status(
        status,
        detail,
        provider=provider,
        retry_after=None,
        model=model,
        code=code or kind,
        failed_generation=failed_generation,
        text=text,
    )


class ContextTooLong(BadRequestError):
    """400/413 because the request does not fit the model's context window."""

    limit_tokens: int | None = None
    """The window the provider stated, when its message says it."""


_LIMIT_PATTERNS = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.IGNORECASE),  # OpenAI, DeepSeek, vLLM
    re.compile(
        r"> ?(\d[\d,]*) maximum", re.IGNORECASE
    ),  # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
    re.compile(r"context (?:window|length)(?: of| is)? (\d[\d,]*)", re.IGNORECASE),
)


def stated_limit(detail: str) -> int | None:
    """The context window a refusal states (`... maximum context length is 65536 tokens ...`), if it does."""
    for pattern in _LIMIT_PATTERNS:
        found = pattern.search(detail)
        if found:
            value = int(found.group(1).replace(",", ""))
            if value >= 1000:
                return value
    return None


CONTEXT_TOO_LONG_HINT = (
    "the conversation is longer than the model's window: in the REPL /compact shrinks it and /clear starts "
    "afresh; CONTEXT_WINDOW_TOKENS set to the model's real window makes compaction start in time"
)
"""What a context-length refusal says when nothing more is known; a session that could not make the request fit
says instead what fills it (`with_hint`)."""


def with_hint(message: str, hint: str) -> str:
    """A context-length refusal's `message` with `hint` in place of the general `CONTEXT_TOO_LONG_HINT`."""
    return f"{message.removesuffix(f' ({CONTEXT_TOO_LONG_HINT})')} ({hint})"


_MENTIONS_MODEL = re.compile(r"\bmodel", re.IGNORECASE)
_NO_SUCH_MODEL = re.compile(
    r"model[^.]*\b(?:not exist|does not exist|not found)|unknown model|no such model|model_not_found", re.IGNORECASE
)
_TOO_LONG = re.compile(
    r"context[ _-]?length|context window|maximum context|prompt is too long|too many tokens|"
    r"reduce the length|input is too long|exceeds? the (?:model's )?(?:maximum|max)",
    re.IGNORECASE,
)
