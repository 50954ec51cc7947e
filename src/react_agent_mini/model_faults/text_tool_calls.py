"""Tool calls a model wrote as text, because the server that runs it did not parse them into tool calls.

A local server (vLLM, SGLang, llama.cpp, LM Studio, a proxy) puts the tools into the prompt through the model's chat
template and then reads the model's answer with a tool-call parser: with the parser off, or the wrong one for the
model, the calls arrive as answer text. Four formats are read here, each only outside Markdown code (fenced or
inline, where a model explaining a format writes it):

- Hermes / Qwen2.5 / Qwen3: `<tool_call>{"name": "Bash", "arguments": {"command": "ls"}}</tool_call>`;
- Qwen3-Coder: `<tool_call><function=Bash><parameter=command>ls</parameter></function></tool_call>` (values are
  text; a field the schema types otherwise is read as JSON);
- Llama 3: `<|python_tag|>{"name": "Bash", "parameters": {...}}`, or such an object as the whole answer;
- Mistral: `[TOOL_CALLS][{"name": "Bash", "arguments": {...}}]`, or `[TOOL_CALLS]Bash[ARGS]{...}`.

The calls found become the message's tool_use blocks (the text around them stays its text), so they pass through
the same validation, hooks, permission and runner as any call, and the user is told once per run which server flag
turns the parser on. They go back to the server as ordinary structured calls and `role: tool` results: the chat
template that rendered the tools renders those too (in the model's own format: `<tool_call>` and
`<tool_response>` for Qwen), since only the parser of the model's output was off — and a server that could not
take them would not have taken the tools in the first place.

Only a name the session offers is read from a bare JSON answer (it may be a JSON answer the user asked for); after a
marker, any name is (an unknown one gets the runner's "Unknown tool" result, naming the tools that exist).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import msgspec

from ..messages import ContentBlock, Message, TextBlock, ToolUseBlock
from ..tools.base import ToolRegistry

MARKERS = ("<tool_call>", "<function=", "<|python_tag|>", "[TOOL_CALLS]")
"""What starts a text call in each format (a bare JSON object aside)."""

SERVER_FLAGS: Mapping[str, tuple[str, str, str]] = {
    "hermes": ("Hermes `<tool_call>` JSON", "hermes", "qwen25"),
    "qwen3_coder": ("Qwen3-Coder `<function=…>` XML", "qwen3_coder", "qwen3_coder"),
    "llama3": ("Llama 3 JSON", "llama3_json", "llama3"),
    "mistral": ("Mistral `[TOOL_CALLS]`", "mistral", "mistral"),
}
"""Per format: how the user is told it, and the parser to name to vLLM and to SGLang."""

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
"""Markdown code: fenced blocks and inline spans, where a model writes a format it explains."""
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\n]+)>(.*?)(?:</function>|(?=<function=)|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|\Z)", re.DOTALL)
_PYTHON_TAG = re.compile(r"<\|python_tag\|>(.*?)(?:<\|eom_id\|>|<\|eot_id\|>|\Z)", re.DOTALL)
_MISTRAL = re.compile(r"\[TOOL_CALLS\](.*?)(?=\[TOOL_CALLS\]|\Z)", re.DOTALL)
_MISTRAL_ARGS = re.compile(r"^\s*([\w.-]+)(?:\[CALL_ID\][\w-]*)?\[ARGS\](.*)$", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
_BLANK_LINES = re.compile(r"\n{3,}")


class TextCall(msgspec.Struct, frozen=True):
    """One call found in the text."""

    name: str
    arguments: Mapping[str, Any]
    error: str = ""
    """Why the arguments could not be read (the call is answered with it, as a structured call's would be)."""


def might_hold_calls(text: str) -> bool:
    """Cheap first look (it runs on every answer without tool calls): a marker, or an answer that is a JSON object."""
    return any(marker in text for marker in MARKERS) or text.lstrip().startswith("{")


def lift(message: Message, tools: ToolRegistry, new_id: Callable[[], str]) -> tuple[Message, str] | None:
    """`message` with the tool calls its text holds as tool_use blocks, and the line telling the user which server
    flag to set (the message unchanged when the calls in it could not be read); None when its text holds none."""
    text = message.text
    if message.tool_uses or not might_hold_calls(text):
        return None
    found = read_calls(text, tools)
    if found is None:
        return None
    form, calls, rest = found
    if not calls:
        return message, notice(form, read=False)
    uses = [ToolUseBlock(f"call_text_{new_id()[:20]}", c.name, c.arguments, input_error=c.error) for c in calls]
    blocks: list[ContentBlock] = [b for b in message.content if not isinstance(b, TextBlock)]
    if rest := _BLANK_LINES.sub("\n\n", rest).strip():
        blocks.append(TextBlock(rest))
    return msgspec.structs.replace(message, content=(*blocks, *uses)), notice(form)


def notice(form: str, *, read: bool = True) -> str:
    """The line for the user: what the server sent, and the flag that turns its tool-call parser on."""
    described, vllm, sglang = SERVER_FLAGS[form]
    did = "ram read them and runs them as usual" if read else "ram could not read them, so none ran"
    return (
        f"The server sent the model's tool calls as text ({described}), not as tool calls; {did}. Turn on the "
        f"server's tool-call parser: vLLM `--enable-auto-tool-choice --tool-call-parser {vllm}`, SGLang "
        f"`--tool-call-parser {sglang}`, llama.cpp `--jinja`; with Ollama, use a model whose template supports tools."
    )


def read_calls(text: str, tools: ToolRegistry) -> tuple[str, list[TextCall], str] | None:
    """The format, the calls and the text left around them (no calls: a marker whose call could not be read);
    None when the text outside Markdown code holds no call."""
    outside = _CODE.sub(lambda m: "\x00" * len(m.group()), text)  # same length: what is found maps back to `text`
    marked: str | None = None
    for form, pattern, group, read in _READERS:
        spans: list[tuple[int, int]] = []
        calls: list[TextCall] = []
        for match in pattern.finditer(outside):
            marked = marked or form
            got = list(read(text[match.start(group) : match.end(group)], tools))
            if got:
                calls += got
                spans.append(match.span())
        if calls:
            if form == "hermes" and any("<function=" in text[a:b] for a, b in spans):
                form = "qwen3_coder"  # its XML inside `<tool_call>`
            return form, calls, _without(text, spans)
    whole = outside.strip()
    if whole.startswith("{") and whole.endswith("}"):  # Llama 3 JSON without its tag: only a name we offer
        bare = _json_calls(text.strip(), tools, marked=False)
        calls = [c for c in bare if not c.error and tools.get(c.name) is not None]
        if calls:
            return "llama3", calls, ""
    return (marked, [], text) if marked is not None else None


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    kept, at = [], 0
    for start, end in spans:
        kept.append(text[at:start])
        at = end
    kept.append(text[at:])
    return "".join(kept)


def _hermes(body: str, tools: ToolRegistry) -> Iterator[TextCall]:
    """The inside of one `<tool_call>`: a JSON object, or Qwen3-Coder's `<function=…>` XML."""
    if "<function=" in body:
        yield from _xml(body, tools)
    else:
        yield from _json_calls(body.strip(), tools)


def _xml(body: str, tools: ToolRegistry) -> Iterator[TextCall]:
    for function in _FUNCTION.finditer(body):
        name = function.group(1).strip()
        properties = _properties(tools, name)
        arguments: dict[str, Any] = {}
        for parameter in _PARAMETER.finditer(function.group(2)):
            key = parameter.group(1).strip()
            arguments[key] = _xml_value(parameter.group(2), properties.get(key))
        yield TextCall(name, arguments)


def _xml_value(raw: str, spec: Any) -> Any:
    """A parameter's text (one newline either side is the format's), as JSON when its schema says it is not a
    string (a number, a flag, a list)."""
    value = raw.removeprefix("\n").removesuffix("\n")
    kinds = _types(spec)
    if not kinds or "string" in kinds:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _types(spec: Any) -> set[str]:
    """The JSON types a property's schema allows (`{"integer"}` for `integer | null`)."""
    if not isinstance(spec, Mapping):
        return set()
    kind = spec.get("type")
    found = (
        {kind}
        if isinstance(kind, str)
        else {k for k in kind if isinstance(k, str)}
        if isinstance(kind, list)
        else set()
    )
    for option in spec.get("anyOf") or spec.get("oneOf") or ():
        found |= _types(option)
    return found - {"null"}


def _properties(tools: ToolRegistry, name: str) -> Mapping[str, Any]:
    tool = tools.get(name)
    if tool is None:
        return {}
    try:
        properties = tool.input_schema().get("properties")
    except Exception:  # a schema is never worth a failure here
        return {}
    return properties if isinstance(properties, Mapping) else {}


def _mistral(body: str, tools: ToolRegistry) -> Iterator[TextCall]:
    """After `[TOOL_CALLS]`: a JSON array of calls (v3), or `name[ARGS]{...}` (v11 and later)."""
    if match := _MISTRAL_ARGS.match(body):
        arguments, error = _object(match.group(2).strip())
        yield TextCall(match.group(1), arguments, error)
        return
    yield from _json_calls(body.strip(), tools)


def _json_calls(raw: str, tools: ToolRegistry, *, marked: bool = True) -> Iterator[TextCall]:
    """`{"name", "arguments" | "parameters"}` objects — one, a list, or several in a row (Llama 3 separates them
    with `;`). After a marker, JSON that does not parse but names a tool is that call, answered with the JSON
    error (a call cut off by the output limit)."""
    values, error = _json_values(raw)
    if not values and marked and (name := _NAME.search(raw)) is not None:
        yield TextCall(name.group(1), {}, f"arguments were invalid JSON ({error})")
        return
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
                continue
            arguments = item.get("arguments", item.get("parameters", {}))
            if isinstance(arguments, str):  # some write the arguments as a JSON string, as the wire format does
                parsed, problem = _object(arguments)
                yield TextCall(item["name"], parsed, problem)
            elif isinstance(arguments, Mapping):
                yield TextCall(item["name"], dict(arguments))
            else:
                yield TextCall(item["name"], {}, "arguments must be a JSON object")


def _json_values(raw: str) -> tuple[list[Any], str]:
    """The JSON values `raw` holds one after another (separated by space, `;` or `,`), and the JSON error that
    stopped the reading ("" when none did)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at = 0
    while True:
        while at < len(raw) and raw[at] in " \t\r\n;,":
            at += 1
        if at >= len(raw):
            return values, ""
        try:
            value, at = decoder.raw_decode(raw, at)
        except ValueError as exc:
            return values, str(exc)
        values.append(value)


def _object(raw: str) -> tuple[dict[str, Any], str]:
    """A JSON object's fields, or no fields and why (with the JSON error's position)."""
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        return {}, f"arguments were invalid JSON ({exc})"
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object"
    return value, ""


Reader = Callable[[str, ToolRegistry], Iterator[TextCall]]

_READERS: tuple[tuple[str, re.Pattern[str], int, Reader], ...] = (
    ("hermes", _TOOL_CALL, 1, _hermes),
    ("qwen3_coder", _FUNCTION, 0, _xml),
    ("llama3", _PYTHON_TAG, 1, _json_calls),
    ("mistral", _MISTRAL, 1, _mistral),
)
"""Per format: the pattern of one call, the group of it its reader reads, the reader. In the order tried; the first
that finds calls wins (a Qwen3-Coder call wrapped in `<tool_call>` is read by the first, its bare `<function=…>`
form by the second)."""
