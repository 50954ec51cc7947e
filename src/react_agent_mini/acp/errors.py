"""The JSON-RPC errors `ram acp` answers with, each carrying a message a person can read (the `acp` package's own
constructors put a generic one, such as "Invalid params", in the message and the reason in `data`)."""

from __future__ import annotations

from typing import Any

from acp import RequestError

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
NOT_FOUND = -32002


def invalid_request(text: str) -> RequestError:
    return RequestError(INVALID_REQUEST, text)


def invalid_params(text: str) -> RequestError:
    return RequestError(INVALID_PARAMS, text)


def not_found(text: str) -> RequestError:
    """A session (or other resource) that does not exist."""
    return RequestError(NOT_FOUND, text)


def internal(text: str, data: Any = None) -> RequestError:
    return RequestError(INTERNAL_ERROR, text, data)


def auth_required(text: str) -> RequestError:
    return RequestError(AUTH_REQUIRED, f"Authentication required: {text}")
