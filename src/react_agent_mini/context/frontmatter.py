"""Frontmatter of Claude Code's command and agent files, read as leniently as Claude Code reads it.

Those files are written by hand and are often not valid YAML: `argument-hint: [message]` is a YAML list,
`argument-hint: [pr] [priority]` does not parse, `allowed-tools: Bash(git add:*)` is fine. So each one-line
`key: value` is taken as the text it shows (surrounding quotes removed), and YAML is asked only for keys whose
value is a block below them (`tools:` followed by `- Read` lines, `description: >`), which also keeps the YAML
parser off the startup path for the usual files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .skills import parse_frontmatter

_LINE = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_BLOCK_MARKS = frozenset({"", "|", ">", "|-", ">-", "|+", ">+"})


def read_fields(raw: str, path: Path, warnings: list[str]) -> dict[str, str]:
    """The frontmatter's top-level keys as text (a YAML list is joined with `, `)."""
    fields: dict[str, str] = {}
    blocks: list[str] = []
    for line in raw.splitlines():
        found = _LINE.match(line)
        if found is None:
            continue
        key, value = found[1], found[2] or ""
        if value in _BLOCK_MARKS:
            blocks.append(key)
        else:
            fields[key] = _unquoted(value)
    if blocks:
        data = parse_frontmatter(raw, path, warnings, "those values are ignored")
        for key in blocks:
            value = data.get(key)
            if isinstance(value, list):
                fields[key] = ", ".join(str(item) for item in value if item is not None)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                fields[key] = " ".join(str(value).split())
    return fields


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value
