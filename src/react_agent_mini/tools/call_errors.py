"""What the runner tells the model about a call it will not run because the call itself is wrong.

Three mistakes models make, each answered so the next try can be right: a tool name that is not offered (the
result names the tools that are, and the nearest one: `Read` for `read_file`, `Bash` for `shell` — names other
agents' tools go by); arguments that are not a JSON object (the adapter's reason, with the JSON error's position,
and the fields the tool takes); a field the tool does not take (`offest`: did you mean `offset`?). The runner
refuses a field it does not know rather than run the call without it: a mistyped `timeout` or `offset` would
otherwise run the call as the model did not mean it (Claude Code refuses such a call too).

Only the model's own input is checked for unknown fields (an input a PreToolUse hook or a permission answer put
instead is the program's, validated as before), and only for the built-in kind of tool (`ModelTool`, whose input is
a msgspec Struct) and tools whose schema says `additionalProperties: false`: an MCP server's schema without that
word allows any field, as JSON Schema does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from .base import Tool

FOREIGN_NAMES: Mapping[str, str] = {
    **dict.fromkeys(("readfile", "viewfile", "openfile", "cat", "view", "readfiles"), "Read"),
    **dict.fromkeys(("writefile", "createfile", "writetofile", "savefile", "newfile"), "Write"),
    **dict.fromkeys(
        ("editfile", "strreplace", "strreplaceeditor", "replaceinfile", "searchreplace", "applydiff", "modifyfile"),
        "Edit",
    ),
    **dict.fromkeys(
        (
            "shell",
            "runcommand",
            "executecommand",
            "runshellcommand",
            "runterminalcmd",
            "runterminalcommand",
            "terminal",
            "exec",
            "execute",
            "bash",
            "sh",
            "command",
        ),
        "Bash",
    ),
    **dict.fromkeys(("findfiles", "listfiles", "listdir", "listdirectory", "ls", "filesearch", "glob"), "Glob"),
    **dict.fromkeys(("grep", "search", "searchfiles", "grepsearch", "searchcode", "ripgrep", "rg"), "Grep"),
    **dict.fromkeys(("fetch", "webfetch", "fetchurl", "readurl", "httpget", "browse"), "WebFetch"),
    **dict.fromkeys(("websearch", "searchweb", "googlesearch", "internetsearch"), "WebSearch"),
    **dict.fromkeys(("todowrite", "writetodos", "updatetodos", "todo", "todolist"), "TodoWrite"),
    **dict.fromkeys(("task", "subagent", "dispatchagent", "agent"), "Agent"),
}
"""Other agents' tool names (Aider, Cline, Codex, Gemini CLI, Qwen Code, OpenHands, the OpenAI examples), folded as
`_folded` folds them, and ours that they mean."""

MAX_FIELDS_SHOWN = 12
"""Fields listed in a message; a tool with more (an MCP server's) gets `…` after them."""

_PREFIX = re.compile(r"^(?:functions?|tools?|default_api)[.:]", re.IGNORECASE)
"""A namespace some models put before a name (`functions.Bash`)."""


def unknown_tool(name: str, available: Sequence[str], input_error: str = "") -> str:
    """The result for a call to a tool that is not offered (`input_error`: the adapter could not read the call
    either, and its name may be a stand-in: that is said first)."""
    nearest = nearest_name(name, available, FOREIGN_NAMES)
    hint = f" Did you mean {nearest}?" if nearest else ""
    first = f"Invalid call: {input_error}. " if input_error else ""
    return f"{first}Unknown tool: {name}.{hint} Available tools: {', '.join(available) or '(none)'}."


def unreadable_arguments(tool: Tool, name: str, reason: str) -> str:
    """The result for a call whose arguments did not parse as a JSON object (`reason`: the adapter's words)."""
    return f"Invalid input for {name}: {reason}. Nothing ran. {_takes(tool, name)}"


def unknown_fields(tool: Tool, raw: Mapping[str, Any]) -> str:
    """Why `raw` has fields `tool` does not take (`""` when it has none, or the tool takes any)."""
    known = known_fields(tool)
    if known is None:
        return ""
    extra = [key for key in raw if key not in known]
    if not extra:
        return ""
    missing = [key for key in _required(tool) if key not in raw]
    parts = []
    for key in extra:
        nearest = nearest_name(key, [k for k in known if k not in raw])
        if nearest is None and len(extra) == 1 and len(missing) == 1:
            nearest = missing[0]  # one field the tool lacks, one it needs: surely that one
        parts.append(f"`{key}` (did you mean `{nearest}`?)" if nearest else f"`{key}`")
    which = "is not a field" if len(extra) == 1 else "are not fields"
    needed = "".join(f"; {key}: field required" for key in missing)
    return f"{', '.join(parts)} {which} of {tool.name}{needed}. Nothing ran. {_takes(tool, tool.name)}"


def known_fields(tool: Tool) -> frozenset[str] | None:
    """The fields `tool` takes, as the model names them; None when it takes any."""
    model = getattr(tool, "args_model", None)
    if isinstance(model, type) and issubclass(model, msgspec.Struct):
        fields = _struct_fields.get(model)
        if fields is None:
            fields = _struct_fields[model] = frozenset(f.encode_name for f in msgspec.structs.fields(model))
        return fields
    try:
        schema = tool.input_schema()
    except Exception:  # a schema is never worth a failure here: take the call as it is
        return None
    properties = schema.get("properties")
    if schema.get("additionalProperties") is False and isinstance(properties, Mapping):
        return frozenset(properties)
    return None


_struct_fields: dict[type, frozenset[str]] = {}
"""Per argument Struct (one per kind of tool: few, and they live as long as the program)."""


def fields_summary(schema: Mapping[str, Any]) -> str:
    """`command (string, required), timeout (integer), …`: what a tool's input holds, from its schema."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return ""
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    shown = []
    for name, spec in list(properties.items())[:MAX_FIELDS_SHOWN]:
        kind = _kind(spec)
        notes = ", ".join(filter(None, (kind, "required" if name in needed else "")))
        shown.append(f"{name} ({notes})" if notes else str(name))
    more = ", …" if len(properties) > MAX_FIELDS_SHOWN else ""
    return ", ".join(shown) + more


def _required(tool: Tool) -> list[str]:
    try:
        required = tool.input_schema().get("required")
    except Exception:  # a schema is never worth a failure here
        return []
    return [key for key in required if isinstance(key, str)] if isinstance(required, list) else []


def _takes(tool: Tool, name: str) -> str:
    try:
        summary = fields_summary(tool.input_schema())
    except Exception:  # a schema is never worth a failure here
        summary = ""
    if not summary:
        return "Send the call again with its arguments as one JSON object."
    return f"Send the call again with its arguments as one JSON object; {name} takes: {summary}."


def _kind(spec: Any) -> str:
    """A property's JSON type (`integer` for `integer | null`), or "" when the schema does not say."""
    if not isinstance(spec, Mapping):
        return ""
    kind = spec.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return " or ".join(k for k in kind if isinstance(k, str) and k != "null")
    options = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(options, list):
        return " or ".join(dict.fromkeys(k for k in map(_kind, options) if k and k != "null"))
    return ""


def nearest_name(name: str, names: Iterable[str], foreign: Mapping[str, str] | None = None) -> str | None:
    """The one of `names` that `name` most likely means: the same name in other spelling (`todo_write`, `BASH`,
    `functions.Bash`), one of `foreign`'s (folded) names for it, the one name it is part of (or that is part of it),
    or a close misspelling; None when none is close."""
    candidates = {_folded(n): n for n in names}
    wanted = _folded(_PREFIX.sub("", name))
    if not wanted:
        return None
    if wanted in candidates:
        return candidates[wanted]
    if foreign is not None and (ours := foreign.get(wanted)) is not None and _folded(ours) in candidates:
        return candidates[_folded(ours)]
    within = [
        n
        for folded, n in candidates.items()
        if min(len(folded), len(wanted)) >= 3 and (wanted in folded or folded in wanted)
    ]
    if len(within) == 1:  # `path` for `file_path`, `timeout_ms` for `timeout`, `MultiEdit` for `Edit`
        return within[0]
    import difflib  # only when a call is wrong: not on the startup path

    close = difflib.get_close_matches(wanted, list(candidates), n=1, cutoff=0.7)
    return candidates[close[0]] if close else None


def _folded(name: str) -> str:
    """Lower case, letters and digits only: `read_file`, `readFile` and `Read-File` are one name."""
    return "".join(c for c in name.lower() if c.isalnum())
