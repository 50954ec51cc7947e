"""Glob's pattern language as a regular expression over `/`-separated relative paths.

`*` and `?` stay inside one path component, `**` as a whole component spans any number of directories (a
trailing one, everything below), `[...]`/`[!...]` are classes (a negated one never matches `/`), `{a,b}`
alternates, and `\\` escapes the next character. Glob matches its pattern here, against the files `rg --files`
lists, so the pattern means the same whatever ripgrep's own `--glob` rules would make of it.
"""

from __future__ import annotations

import re


class GlobError(ValueError):
    """A glob that cannot be translated (e.g. an unclosed `{`)."""


def translate_glob(pattern: str) -> str:
    """A regex source that matches (with `fullmatch`) the `/`-separated relative paths `pattern` matches."""
    out: list[str] = []
    i, n, braces = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole:
                if j == n:
                    out.append(".*")  # trailing `**`: everything below
                    i = j
                else:
                    out.append("(?:[^/]*/)*")  # `**/`: zero or more directories
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            cls, i = _translate_class(pattern, i)
            out.append(cls)
            continue
        elif c == "{":
            braces += 1
            out.append("(?:")
        elif c == "," and braces:
            out.append("|")
        elif c == "}" and braces:
            braces -= 1
            out.append(")")
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    if braces:
        raise GlobError(f"unclosed '{{' in glob {pattern}")
    return "".join(out)


def _translate_class(pattern: str, start: int) -> tuple[str, int]:
    """`[...]` at `start` as a regex class, and the index after it; an unclosed `[` is a literal."""
    j = start + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            # A negated class never matches the separator (gitignore's FNM_PATHNAME).
            return "[" + ("^/" if negate else "") + "".join(body) + "]", j + 1
        if c == "\\" and j + 1 < len(pattern):
            body.append(re.escape(pattern[j + 1]))
            j += 2
        else:
            body.append("-" if c == "-" else re.escape(c))
            j += 1
        first = False
    return re.escape("["), start + 1
