"""The error a server sent, read from whichever shape it came in: an HTTP error body or an error in a 200 stream.

The shapes, by server:
- OpenAI, DeepSeek, Groq, Ollama, vLLM: `{"error": {"message", "type", "code", "param"}}`; Groq adds
  `failed_generation` (the call the model got wrong, `code: "tool_use_failed"`) and, in a stream, `status_code`.
- OpenRouter: `{"error": {"code": <HTTP status>, "message", "metadata": {"provider_name", "raw"}}}`, also as a
  `data:` event of a 200 stream; "Provider returned error" means the reason is in `metadata.raw` (itself often the
  upstream provider's JSON error). https://openrouter.ai/docs/api/reference/errors-and-debugging
- Anthropic: `{"type": "error", "error": {"type", "message"}}`, also as a stream's `error` event.
- Mistral: `{"object": "error", "message", "type", "code"}` (its `message` may be an object of validation details).
- Cerebras: `{"message", "type", "param", "code"}`.
- Gemini's OpenAI compatibility: a list, `[{"error": {"code", "message", "status"}}]`.
- Hugging Face's router and servers behind it: `{"error": "…"}` or `{"detail": "…"}`.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec


class ErrorInfo(msgspec.Struct, frozen=True):
    """An error as a server stated it."""

    message: str
    """The server's own words, with the upstream reason after it when a gateway relayed it."""
    code: str = ""
    """`error.code` as text (`tool_use_failed`, `context_length_exceeded`, `429`, …); "" when none."""
    kind: str = ""
    """`error.type` (`invalid_request_error`, `server_error`, `overloaded_error`, …) or Gemini's `status`."""
    status: int | None = None
    """An HTTP status the error states itself (OpenRouter's numeric `code`, Groq's `status_code`)."""
    failed_generation: str | None = None
    """Groq: what the model generated when its tool call could not be parsed or validated."""


def error_in(value: Any) -> ErrorInfo | None:
    """The error a decoded JSON value is, or carries; None when it is not an error."""
    if isinstance(value, list):
        return next((info for item in value if (info := error_in(item)) is not None), None)
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    if isinstance(error, dict):
        return _from_object(error)
    if isinstance(error, str) and error:
        return ErrorInfo(error)
    if value.get("object") == "error" or (value.get("type") == "error" and "message" in value):
        return _from_object(value)
    return None


def error_from_body(body: bytes) -> ErrorInfo:
    """The error an HTTP error body states (its text, shortened, when it is not one of the shapes above)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        value = json.loads(text)
    except ValueError:
        return ErrorInfo(text[:300] or "(empty body)")
    found = error_in(value)
    if found is not None:
        return found
    if isinstance(value, dict):
        for key in ("message", "detail"):
            if value.get(key):
                return _from_object({**value, "message": value[key]})
    return ErrorInfo(text[:300])


def _from_object(error: dict[str, Any]) -> ErrorInfo:
    message = _text(error.get("message")) or _text(error.get("detail")) or _text(error.get("msg"))
    metadata = error.get("metadata")
    if isinstance(metadata, dict):
        upstream = _upstream(metadata)
        if upstream and upstream not in message:
            message = f"{message} ({upstream})" if message else upstream
    code = error.get("code")
    status = error.get("status_code") or error.get("raw_status_code")
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code < 600:
        status = status or code
    failed = error.get("failed_generation")
    return ErrorInfo(
        message or "(no message)",
        code="" if code is None else str(code),
        kind=str(error.get("type") or error.get("status") or ""),
        status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        failed_generation=failed if isinstance(failed, str) else None,
    )


def _upstream(metadata: dict[str, Any]) -> str:
    """OpenRouter's relayed reason: `provider_name: raw`, the raw error read as an error when it is one."""
    raw = metadata.get("raw")
    if isinstance(raw, str):
        try:
            inner = error_in(json.loads(raw))
        except ValueError:
            inner = None
        raw = inner.message if inner is not None else raw
    elif raw is not None:
        inner = error_in(raw)
        raw = inner.message if inner is not None else json.dumps(raw, ensure_ascii=False)[:300]
    name = metadata.get("provider_name")
    raw_text = str(raw or "").strip()[:500]
    if name and raw_text:
        return f"{name}: {raw_text}"
    return raw_text or (f"from {name}" if name else "")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    if isinstance(value, dict) and isinstance(value.get("detail"), list):  # Mistral's validation details
        value = value["detail"]
    if isinstance(value, list):
        parts = [_detail_line(item) for item in value]
        return "; ".join(p for p in parts if p)[:500]
    return json.dumps(value, ensure_ascii=False)[:300]


def _detail_line(item: Any) -> str:
    if isinstance(item, dict) and isinstance(item.get("msg"), str):
        where = ".".join(str(p) for p in item.get("loc") or () if p != "body")
        return f"{where}: {item['msg']}" if where else item["msg"]
    return _text(item)
