"""The text a custom command sends, made from its body and the arguments typed after its name (pure functions).

- `$ARGUMENTS` is everything after the name; `$1`, `$2`, … the words of it (quotes group words, as in a shell); a
  missing one is empty. A body that names neither gets the arguments appended (`ARGUMENTS: …`), so they are never
  lost, as Claude Code does.
- `` !`command` `` marks a shell command whose output takes its place; `@path` a file to attach. `bang_commands`
  and `mentions` find them (`invoke` runs and reads them, through the permission policy).
"""

from __future__ import annotations

import re
import shlex

_ARGUMENT = re.compile(r"\$(ARGUMENTS|\d+)")
BANG = re.compile(r"!`([^`\n]+)`")
_MENTION = re.compile(r"(?<![\w@/`$])@([\w./~+-][^\s`'\"<>()\[\]{},;|&]*)")
_TRAILING = ".,:;!?"


def split_arguments(args: str) -> list[str]:
    """The words of `args`, with quotes grouping words (unbalanced quotes: split on whitespace)."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def substitute(body: str, args: str) -> str:
    """`body` with `$ARGUMENTS` and `$N` replaced (in one pass: what the arguments contain is not expanded again)."""
    args = args.strip()
    words = split_arguments(args)

    def value(found: re.Match[str]) -> str:
        if found[1] == "ARGUMENTS":
            return args
        index = int(found[1])
        return words[index - 1] if 0 < index <= len(words) else ""

    if _ARGUMENT.search(body) is None:
        return f"{body}\n\nARGUMENTS: {args}" if args else body
    return _ARGUMENT.sub(value, body)


def bang_commands(text: str) -> list[str]:
    """The commands of the `` !`…` `` spans of `text`, in order."""
    return [found[1].strip() for found in BANG.finditer(text) if found[1].strip()]


def replace_bangs(text: str, outputs: list[str]) -> str:
    """`text` with the n-th `` !`…` `` span replaced by `outputs[n]`."""
    remaining = iter(outputs)
    return BANG.sub(lambda found: next(remaining, found[0]) if found[1].strip() else found[0], text)


def mentions(text: str) -> list[str]:
    """The `@path` words of `text` (an e-mail address is not one), each once, in order, without trailing
    punctuation."""
    found: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        path = match[1].rstrip(_TRAILING)
        if path and ":" not in path:  # `@server:uri` is an MCP resource, attached by the host
            found[path] = None
    return list(found)
