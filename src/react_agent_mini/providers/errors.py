"""Our small error hierarchy for model calls. Adapters map HTTP and stream failures here, in one place each.

Every error carries a one-line `message` fit to show a user, and says whether a retry may help.
"""

from __future__ import annotations

import re


class ProviderError(Exception):
    """A model call failed."""

    retryable: bool = False
    configuration: bool = False
    """The user's setup is wrong (no such model, not this kind of endpoint): `ram` exits 2, as for a missing key."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked us to wait (from `retry-after`/`retry-after-ms`), if any."""


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


class MalformedStream(ProviderError):
    """The provider sent something that is not its documented wire format."""


class MissingConfiguration(ProviderError):
    """No key, unknown provider name: a setup problem the user must fix."""


MODEL_VARIABLES = {"openai": "OPENAI_MODEL", "anthropic": "ANTHROPIC_MODEL"}
"""The environment variable that chooses each provider's model."""
BASE_URL_VARIABLES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
ENDPOINT_KINDS = {"openai": "an OpenAI-compatible endpoint", "anthropic": "an Anthropic Messages endpoint"}


def error_for_status(
    status: int,
    detail: str,
    *,
    provider: str,
    retry_after: float | None,
    model: str = "",
    url: str = "",
    base_url: str = "",
) -> ProviderError:
    """The error for a non-2xx HTTP answer; `detail` is the provider's own message, `model` the model asked for,
    `url` where and `base_url` the endpoint as set (for the hint when the server has no such model or no such
    endpoint)."""
    text = f"{provider} API error {status}: {detail}".strip()
    if status in (401, 403):
        return AuthenticationError(f"{text} (check your API key)", status=status)
    named = f'model "{model}"' if model else "the model"
    at = f" at {base_url}" if base_url else ""
    model_variable = MODEL_VARIABLES.get(provider, "the model variable")
    if (status == 404 and _MENTIONS_MODEL.search(detail)) or (status == 400 and _NO_SUCH_MODEL.search(detail)):
        hint = f"{named} was not found{at}: choose another with --model or {model_variable}"
        return ModelNotFound(f"{text} ({hint})", status=status)
    if status == 404 and (url or base_url):
        endpoint = base_url or url
        kind = ENDPOINT_KINDS.get(provider, "the endpoint this provider needs")
        hint = (
            f"{named} not found at {endpoint}, or {endpoint} is not {kind}: requests go to {url or endpoint}; "
            f"check --model or {model_variable}, and {BASE_URL_VARIABLES.get(provider, 'the base URL')}"
        )
        return EndpointNotFound(f"{text} ({hint})", status=status)
    if status == 429:
        return RateLimitError(text, status=status, retry_after=retry_after)
    if status in (408, 409) or status >= 500:
        return ServerError(text, status=status, retry_after=retry_after)
    if status in (400, 413) and _TOO_LONG.search(detail):
        error = ContextTooLong(f"{text} ({CONTEXT_TOO_LONG_HINT})", status=status)
        error.limit_tokens = stated_limit(detail)
        return error
    return BadRequestError(text, status=status)


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
