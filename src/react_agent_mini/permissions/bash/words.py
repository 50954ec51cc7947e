"""Words of a command line as bash sees them: quotes removed, expansions found, and for each character whether
bash may still expand it (the mask the deny matcher expands braces, tildes and globs from).

`scan_word` is the scanner `syntax.py` runs over every word tree-sitter reports; it must meet exactly the expansions
tree-sitter found (see `syntax.py`). The checks on parameter expansions and arithmetic live here too: they judge
the text of one expansion.
"""

from __future__ import annotations

import re

import msgspec

__all__ = ["ANSI_C", "LITERAL", "UNKNOWN", "UNQUOTED", "Refused", "Word", "scan_word"]


class Refused(Exception):
    """Raised for anything we will not vouch for."""


LITERAL = "."
"""Mask of a character that is exactly itself (quoted, escaped, or part of a static word)."""
UNQUOTED = "g"
"""Mask of an unquoted character: bash may expand it (`{a,b}`, `~`, `*`)."""
UNKNOWN = "e"
"""Mask of a character of an expansion (`$x`, `$(...)`, `$"..."`): its value is only known when the shell runs."""
ANSI_C = "a"
"""Mask of the source text of a `$'...'` string: its value is the decoded text."""


class Word(msgspec.Struct, frozen=True):
    value: str
    """Quotes removed; expansions kept as their source text."""
    static: bool
    """The value is exactly what the command receives: no expansion, glob or brace of any kind."""
    operand: bool
    """Certainly one or more words none of which starts with `-` (so it cannot be an option)."""
    single: bool
    """Certainly exactly one word (no word splitting, glob or brace expansion)."""
    mask: str = ""
    """For a word that is not static: one mask character per character of `value` (`LITERAL`, `UNQUOTED`,
    `UNKNOWN`, `ANSI_C`); empty for a static word, whose every character is literal."""


# --------------------------------------------------------------------------------------------------------------------
# Words

_NAME_START = re.compile(r"[A-Za-z_]")
_SPECIAL_PARAMS = set("@*#?$!-") | set("0123456789")
_DQ_ESCAPABLE = set('$`"\\\n')
_BLANKS = " \t\n"
_OPERATOR_CHARS = ";&|<>()"
_DELIMITERS = frozenset(_BLANKS + _OPERATOR_CHARS + "`")
_WORDISH_TOKEN = re.compile(r"[-A-Za-z!{}\[\]]+")
"""Anonymous tokens that bash reads as words (keywords, `{`, `[[`, `!`): they need blanks around them, like words."""


_PLAIN_WORD = re.compile(r"[^#\s'\"\\$`*?\[{~;&|<>()][^\s'\"\\$`*?\[{~;&|<>()]*")
"""A word with nothing to unquote or expand (the common case, scanned without the loop below)."""


def _starts_expansion(nxt: str) -> bool:
    return nxt in ("{", "(", "[") or nxt in _SPECIAL_PARAMS or bool(_NAME_START.match(nxt))


def _expands(source: str, i: int, end: int) -> bool:
    """Whether the `$` or backtick at `i` starts an expansion. A backslash-newline after `$` vanishes before bash
    reads on, so `$\\<newline>(rm x)` is a command substitution too."""
    if source[i] == "`":
        return True
    nxt = source[i + 1] if i + 1 < end else ""
    return source[i] == "$" and (_starts_expansion(nxt) or source.startswith("\\\n", i + 1))


def _brace_candidate(rest: str) -> bool:
    """Whether an unquoted `{` may start a brace expansion (`{a,b}`, `{1..3}`); `{}` and a lone `{` are literal."""
    close = rest.find("}")
    return close > 0 and ("," in rest[:close] or ".." in rest[:close] or "{" in rest[1:close])


def scan_word(source: str, start: int, end: int, parts: dict[int, tuple[int, str]], *, pattern: bool = False) -> Word:
    """Remove quotes from `source[start:end]` the way bash does.

    `parts` maps the start of each expansion tree-sitter found to its end and kind; the scanner must meet each of them
    at a position where bash expands, and must find no other expansion, or it raises `Refused`. `pattern` allows the
    unquoted `( ) |` of a `[[ == ]]` pattern.
    """
    text = source[start:end]
    if not parts and _PLAIN_WORD.fullmatch(text):
        return Word(value=text, static=True, operand=not text.startswith("-"), single=True)
    out: list[str] = []
    mask: list[str] = []  # one mask character per character of `out`
    static = True
    splits = False
    multi = False
    lead: str | None = None  # "dash", "safe" or "unknown", decided by the first thing that produces characters
    in_dq = False
    dq_mask = LITERAL  # inside `$"..."` the text is a key into the locale's catalogue: UNKNOWN
    met = 0
    i = start

    def first(kind: str) -> None:
        nonlocal lead
        if lead is None:
            lead = kind

    def literal(ch: str, kind: str = LITERAL) -> None:
        first("dash" if ch == "-" else "safe")
        out.append(ch)
        mask.append(kind)

    def raw(text: str, kind: str) -> None:
        out.append(text)
        mask.append(kind * len(text))

    while i < end:
        part = parts.get(i)
        if part is not None:
            part_end, part_kind = part
            met += 1
            # `<(...)` becomes a pipe's name (/dev/fd/N), not a file of ours: its text stands for itself
            raw(source[i:part_end], LITERAL if part_kind == "process_substitution" else UNKNOWN)
            static = False
            if part_kind == "process_substitution":
                first("safe")  # becomes /dev/fd/N
            else:
                first("unknown")
                if not in_dq:
                    splits = True
            i = part_end
            continue
        c = source[i]
        nxt = source[i + 1] if i + 1 < end else ""
        if in_dq:
            if c == '"':
                in_dq = False
                i += 1
            elif c == "\\" and nxt in _DQ_ESCAPABLE:
                if nxt != "\n":
                    literal(nxt, dq_mask)
                i += 2
            elif _expands(source, i, end):
                raise Refused(f"an expansion the parser did not recognise in {text!r}")
            else:
                literal(c, dq_mask)
                i += 1
            continue
        if c == "'":
            close = source.find("'", i + 1, end)
            if close < 0:
                raise Refused(f"unbalanced quote in {text!r}")
            for ch in source[i + 1 : close]:
                literal(ch)
            i = close + 1
        elif c == '"':
            in_dq, dq_mask = True, LITERAL
            i += 1
        elif c == "\\":
            if nxt == "\n":
                i += 2
            elif nxt:
                literal(nxt)
                i += 2
            else:
                literal("\\")
                i += 1
        elif c == "$" and nxt in ("'", '"'):
            # $'...' (ANSI-C) and $"..." (locale) strings: we do not decode them, so their value is unknown.
            static = False
            first("unknown")
            if nxt == '"':
                in_dq, dq_mask = True, UNKNOWN
                i += 2
            else:
                close = i + 2
                while close < end and source[close] != "'":
                    close += 2 if source[close] == "\\" else 1
                if close >= end:
                    raise Refused(f"unbalanced quote in {text!r}")
                raw(source[i : close + 1], ANSI_C)
                i = close + 1
        elif _expands(source, i, end):
            raise Refused(f"an expansion the parser did not recognise in {text!r}")
        elif c in _BLANKS or (c in _OPERATOR_CHARS and not (pattern and c in "()|")) or (c == "#" and i == start):
            raise Refused("the parser skipped part of the command (it disagrees with bash about where a word ends)")
        elif c == "~" and (i == start or source[i - 1] in "=:"):
            # Tilde expansion: a home directory at the start of a word, and after `=` or `:` in `name=~/x`.
            prefix_end = i + 1
            while prefix_end < end and source[prefix_end] not in "/:" and source[prefix_end] not in "'\"\\$`":
                prefix_end += 1
            static = False
            first("safe")
            raw(source[i:prefix_end], UNQUOTED)
            i = prefix_end
        elif c in "*?" or (c == "[" and "]" in source[i:end]) or (c == "{" and _brace_candidate(source[i:end])):
            # Globs and brace expansion: the result is unknown, and `*` could match a file named `-i`.
            static = False
            multi = True
            first("unknown")
            raw(c, UNQUOTED)
            i += 1
        else:
            literal(c, UNQUOTED)
            i += 1
    if in_dq:
        raise Refused(f"unbalanced quote in {text!r}")
    if met != len(parts):
        raise Refused(f"the parser saw an expansion inside quotes in {text!r}")
    value = "".join(out)
    operand = (lead == "safe" and not splits) if not static else not value.startswith("-")
    single = static or not (splits or multi)
    return Word(value=value, static=static, operand=operand, single=single, mask="" if static else "".join(mask))


# Patterns used on rare paths stay strings, compiled (and cached by `re`) on first use: importing this module is part
# of the first Bash call's latency.
_PLAIN_PARAM = r"#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])"
_PARAM_WITH_OPERATOR = r"(?s)[A-Za-z_][A-Za-z0-9_]*(?::?[-+?]|%%?|##?|//?|\^\^?|,,?)(.*)"
_SIMPLE_EXPANSION = r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])"


def _check_parameter(value: str) -> None:
    """Refuse parameter expansions that can assign (`${X:=v}`), evaluate arithmetic (`${a[i]}`, `${x:i}`), expand
    prompts (`${x@P}`), go indirect (`${!x}`) or run a command (`${x:-$(rm y)}`: the quoting rules inside `${}`
    differ between quoted and unquoted words, so we do not follow substitutions into them)."""
    if re.fullmatch(_PLAIN_PARAM, value):
        return
    match = re.fullmatch(_PARAM_WITH_OPERATOR, value)
    if match and not any(ch in match.group(1) for ch in "$`"):
        return
    raise Refused(f"the parameter expansion ${{{value}}} is too complex to analyse")


_ARITHMETIC_OPERAND = r"(?:0[xX][0-9A-Fa-f]+|[0-9]+|\$[#?$!]|\$\{#[A-Za-z_][A-Za-z0-9_]*\}|\$\{[#?$!]\})"
_LITERAL_ARITHMETIC = rf"(?:[\s+\-*/%<>=!&|^~?:(),]|{_ARITHMETIC_OPERAND})*"
_NUMERIC_WORD = rf"[+-]?{_ARITHMETIC_OPERAND}|\"{_ARITHMETIC_OPERAND}\""
_ASSIGNED = (
    r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--)"
)
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def _check_arithmetic(text: str) -> None:
    """Refuse arithmetic on anything but literal numbers (see the module docstring)."""
    if re.fullmatch(_LITERAL_ARITHMETIC, text):
        return
    assigned = re.search(_ASSIGNED, text)
    if assigned:
        name = next(g for g in assigned.groups() if g)
        raise Refused(f"the arithmetic `{_one_line(text)}` assigns {name}")
    name_match = re.search(_NAME, text)
    if name_match:
        raise Refused(
            f"the arithmetic `{_one_line(text)}` evaluates the value of {name_match.group()}, where an array "
            "subscript can run commands"
        )
    raise Refused(f"the arithmetic `{_one_line(text)}` uses something other than literal numbers")


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _escaped(source: str, index: int) -> bool:
    """Whether the character at `index` follows an odd number of backslashes."""
    count = 0
    while index - count - 1 >= 0 and source[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _heredoc_delimiter(text: str) -> tuple[str, bool]:
    """The delimiter bash looks for (quote removal, no expansion) and whether the word was quoted."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        c = text[i]
        if c == "'":
            close = text.find("'", i + 1)
            if close < 0:
                raise Refused("unsupported here-document delimiter")
            out.append(text[i + 1 : close])
            quoted = True
            i = close + 1
        elif c == '"':
            close = i + 1
            while close < len(text) and text[close] != '"':
                if text[close] == "\\" and close + 1 < len(text) and text[close + 1] in '$`"\\':
                    close += 1
                out.append(text[close])
                close += 1
            if close >= len(text):
                raise Refused("unsupported here-document delimiter")
            quoted = True
            i = close + 1
        elif c == "\\" and i + 1 < len(text) and text[i + 1] != "\n":
            out.append(text[i + 1])
            quoted = True
            i += 2
        elif c in _DELIMITERS or c == "\\" or c == "`" or (c == "$" and text[i + 1 : i + 2] in ("'", '"')):
            raise Refused("unsupported here-document delimiter")
        else:
            out.append(c)
            i += 1
    if not out:
        raise Refused("an empty here-document delimiter")
    return "".join(out), quoted
