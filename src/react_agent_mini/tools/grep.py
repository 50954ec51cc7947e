"""Grep: search file contents with a regular expression, through ripgrep or a pure-Python twin of it.

Both engines produce the same intermediate results, which one renderer turns into text:

* files_with_matches: paths, shown newest first by modification time;
* count: `(path, n)`, shown by path;
* content: per file, rg's `--heading --line-number` body (`N:text` matches, `N-text` context, `--` between
  non-adjacent groups), shown by path. rg prints files in whatever order its threads finish, so sorting here
  is what makes results (and `offset` paging) stable.

The fallback translates the Rust regex dialect into Python's `re` where they differ (`(?<name>`, `\\z`,
`\\x{..}`, `[[:alpha:]]`, counted repetitions), rejects what Rust rejects (look-around, backreferences, a
literal newline outside multiline mode) with rg's wording, and refuses `\\p{..}` classes it cannot run.
Explicit binary files are screened before either engine runs, so both answer alike.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

import msgspec

from .base import ModelTool, ToolContext, ToolOutput
from .glob import dated
from .ignore import FILE_TYPES, Overrides, TypeFilter, walk_files
from .paths import display, resolve
from .ripgrep import find_rg, run_rg

DEFAULT_HEAD_LIMIT = 250
MAX_LINE_CHARS = 500
"""Longer lines are cut (minified code would otherwise flood the context)."""
MAX_OUTPUT_CHARS = 100_000
"""Whatever head_limit says, a page stops growing here; the paging note tells where to continue."""
_BINARY_PROBE = 64 * 1024
"""rg decides a walked file is binary from a NUL in its first buffer; the fallback looks at the same amount."""

NonNegative = Annotated[int, msgspec.Meta(ge=0)]
Mode = Literal["files_with_matches", "content", "count"]


class GrepArgs(msgspec.Struct):
    pattern: Annotated[
        str,
        msgspec.Meta(
            description="The regular expression to search for (Rust regex syntax, as ripgrep): `def \\w+`, "
            "`log.*Error`. Escape metacharacters to match them literally: `interface\\{\\}`, `\\.`, `\\(`."
        ),
    ]
    path: Annotated[
        str | None,
        msgspec.Meta(
            description="A file or directory to search, relative to the workspace root or absolute. Omit it to "
            "search the whole workspace."
        ),
    ] = None
    glob: Annotated[
        str | None,
        msgspec.Meta(
            description="Only search files matching this glob: `*.py`, `*.{ts,tsx}`, `src/**/*.rs`; several "
            "separated by spaces or commas; `!*.min.js` excludes. As in rg, a glob also reaches files that .gitignore "
            "lists (but not ignored directories)."
        ),
    ] = None
    type: Annotated[
        str | None,
        msgspec.Meta(
            description="Only search files of this ripgrep type: py, js, ts, rust, go, java, c, cpp, md, json, "
            "yaml, ... More efficient than glob for standard types."
        ),
    ] = None
    output_mode: Annotated[
        Mode,
        msgspec.Meta(
            description="files_with_matches: paths of matching files, newest first (default). content: the "
            "matching lines as path:line:text. count: path:N, the number of matching lines per file."
        ),
    ] = "files_with_matches"
    ignore_case: Annotated[bool, msgspec.Meta(description="Case-insensitive search.")] = msgspec.field(
        default=False, name="-i"
    )
    line_numbers: Annotated[bool, msgspec.Meta(description="Show line numbers in content mode (default true).")] = (
        msgspec.field(default=True, name="-n")
    )
    after: Annotated[
        NonNegative | None, msgspec.Meta(description="Lines of context after each match (content mode).")
    ] = msgspec.field(default=None, name="-A")
    before: Annotated[
        NonNegative | None, msgspec.Meta(description="Lines of context before each match (content mode).")
    ] = msgspec.field(default=None, name="-B")
    context: Annotated[
        NonNegative | None,
        msgspec.Meta(description="Lines of context before and after each match (content mode)."),
    ] = msgspec.field(default=None, name="-C")
    multiline: Annotated[
        bool,
        msgspec.Meta(
            description="Let the pattern span lines: `.` and `\\s` also match newlines, e.g. "
            "`struct Foo \\{[\\s\\S]*?\\}`. Slower; default false (matches stay within one line)."
        ),
    ] = False
    head_limit: Annotated[
        NonNegative | None,
        msgspec.Meta(
            description=f"Show at most this many entries (lines in content mode, files otherwise); default "
            f"{DEFAULT_HEAD_LIMIT}, 0 for no limit."
        ),
    ] = None
    offset: Annotated[
        NonNegative, msgspec.Meta(description="Skip this many entries first (to page through large results).")
    ] = 0


class _Spec(NamedTuple):
    """One search, decided from the arguments."""

    root: Path
    target: Path
    pattern: str
    mode: Mode
    ignore_case: bool
    multiline: bool
    before: int
    after: int
    globs: list[str]
    types: list[str]


class _Found(msgspec.Struct):
    """What a search found, before sorting and paging (only the list for its mode is filled).

    Paths stay bytes (as rg prints them; they sort like their text) and are decoded only when shown. Content
    blocks point into one buffer, rg's whole output, so the megabytes of a broad search are never copied."""

    files: list[bytes] = msgspec.field(default_factory=list)
    counts: list[tuple[bytes, int]] = msgspec.field(default_factory=list)
    blocks: list[tuple[bytes, bytes, int, int]] = msgspec.field(default_factory=list)
    """Content mode: (path, buffer, start, end): the file's body is `buffer[start:end]`."""
    entries: int = 0
    """Content mode: the lines in all bodies, `--` separators excluded."""
    truncated: bool = False


class SearchError(ValueError):
    """The search cannot run: the message is the model-facing text."""


# --- Rust regex → Python re (fallback only) -----------------------------------------------------------------

_NEWLINE_NOT_ALLOWED = 'the literal "\\n" is not allowed in a regex'
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_PYTHON_ERRORS = (
    ("missing ), unterminated subpattern", "unclosed group"),
    ("unbalanced parenthesis", "unopened group"),
    ("unterminated character set", "unclosed character class"),
    ("nothing to repeat", "repetition operator missing expression"),
    ("bad escape", "unrecognized escape sequence"),
)


def _escape(p: str, i: int, multiline: bool, in_class: bool) -> tuple[str, int]:
    """The Python form of the escape at `p[i]` (a backslash), and the index after it."""
    if i + 1 >= len(p):
        raise SearchError("incomplete escape sequence, reached end of pattern prematurely")
    d = p[i + 1]
    if d == "x":
        if p.startswith("{", i + 2):
            close = p.find("}", i)
            digits, end = (p[i + 3 : close], close + 1) if close > 0 else ("", len(p))
        else:
            digits, end = p[i + 2 : i + 4], i + 4
        if not re.fullmatch(r"[0-9A-Fa-f]{1,8}", digits) or int(digits, 16) > 0x10FFFF:
            raise SearchError("invalid hexadecimal escape")
        char = chr(int(digits, 16))
        if char == "\n" and not multiline:
            raise SearchError(_NEWLINE_NOT_ALLOWED)
        return re.escape(char), end
    if d == "n" and not multiline:
        raise SearchError(_NEWLINE_NOT_ALLOWED)
    if d in "123456789" and not in_class:
        raise SearchError("backreferences are not supported")
    if d in "pP":
        raise SearchError("Unicode classes such as \\p{L} need ripgrep, which is not installed")
    if not in_class:
        if d == "z":
            return "\\Z", i + 2
        if d == "<":
            return "\\b(?=\\w)", i + 2  # Rust's start-of-word boundary
        if d == ">":
            return "\\b(?<=\\w)", i + 2
        if d in "AbB":
            return "\\" + d, i + 2
    if d in "dDsSwWntrfva" or not d.isalnum():
        return "\\" + d, i + 2
    raise SearchError("unrecognized escape sequence")


def _class(p: str, i: int, multiline: bool) -> tuple[str, int]:
    """The Python form of the bracket class at `p[i]`, and the index after it."""
    j = i + 1
    out = ["["]
    negated = p.startswith("^", j)
    if negated:
        out.append("^")
        j += 1
    if p.startswith("]", j):
        out.append("\\]")
        j += 1
    while j < len(p):
        c = p[j]
        if c == "]":
            out.append("]")
            return "".join(out), j + 1
        if c == "[":
            posix = re.match(r"\[:(\^?)([a-z]+):\]", p[j:])
            if posix and posix[2] in _POSIX_CLASSES and not posix[1]:
                out.append(_POSIX_CLASSES[posix[2]])
                j += posix.end()
                continue
            out.append("\\[")
            j += 1
            continue
        if c == "\\":
            # A negated class may name the newline: `[^\n]` is how a line-bound "anything" is written.
            piece, j = _escape(p, j, multiline or negated, in_class=True)
            out.append(piece)
            continue
        if c == "\n" and not (multiline or negated):
            raise SearchError(_NEWLINE_NOT_ALLOWED)
        out.append("\\" + c if c in "&~|" else c)  # Python warns about these doubled (future set syntax)
        j += 1
    raise SearchError("unclosed character class")


def rust_to_python(pattern: str, multiline: bool) -> str:
    """`pattern` (Rust regex syntax) as a Python `re` pattern; SearchError with rg's reason when Rust rejects it."""
    out: list[str] = []
    i, n = 0, len(pattern)
    can_repeat = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            piece, i = _escape(pattern, i, multiline, in_class=False)
            out.append(piece)
            can_repeat = True
        elif c == "[":
            piece, i = _class(pattern, i, multiline)
            out.append(piece)
            can_repeat = True
        elif c == "(":
            if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
                raise SearchError("look-around, including look-ahead and look-behind, is not supported")
            if pattern.startswith("(?<", i):
                out.append("(?P<")
                i += 3
            elif pattern.startswith("(?", i):
                end = len(pattern)
                for stop in (":", ")", ">"):
                    found = pattern.find(stop, i)
                    if found >= 0:
                        end = min(end, found + 1)
                out.append(pattern[i:end])
                i = end
            else:
                out.append("(")
                i += 1
            can_repeat = False
        elif c == "|":
            out.append("|")
            i += 1
            can_repeat = False
        elif c in "*+?":
            if not can_repeat:
                raise SearchError("repetition operator missing expression")
            out.append(c)
            i += 1
            if pattern.startswith("?", i):
                out.append("?")
                i += 1
        elif c == "{":
            if not can_repeat:
                raise SearchError("repetition operator missing expression")
            close = pattern.find("}", i)
            if close < 0:
                raise SearchError("unclosed counted repetition")
            bounds = pattern[i + 1 : close].replace(" ", "")
            if not re.fullmatch(r"\d+(?:,\d*)?", bounds):
                raise SearchError("repetition quantifier expects a valid decimal")
            out.append("{" + bounds + "}")
            i = close + 1
            if pattern.startswith("?", i):
                out.append("?")
                i += 1
        else:
            if c == "\n" and not multiline:
                raise SearchError(_NEWLINE_NOT_ALLOWED)
            out.append(c)
            i += 1
            can_repeat = True
    return "".join(out)


def compile_rust_regex(pattern: str, *, ignore_case: bool, multiline: bool) -> re.Pattern[str]:
    """The fallback's compiled form of `pattern`, with rg's flags; SearchError(reason) if invalid."""
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0) | (re.DOTALL if multiline else 0)
    try:
        return re.compile(rust_to_python(pattern, multiline), flags)
    except re.error as exc:
        message = exc.msg
        for python, rust in _PYTHON_ERRORS:
            if message.startswith(python):
                message = rust
                break
        raise SearchError(message) from None


def can_match_newline(pattern: str) -> bool:
    """Whether a multiline pattern may match a newline (rg then counts matches, not lines). A syntactic guess:
    `.`, `\\n`, `\\s`, `\\W`, `\\D`, `\\p`, a newline, or a class that admits one."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            if pattern[i + 1] in "nsWDpP" or re.match(r"x(?:\{0*[aA]\}|0[aA])", pattern[i + 1 :]):
                return True
            i += 2
        elif c == "[":
            j = i + 1
            negated = pattern.startswith("^", j)
            j += 1 if negated else 0
            j += 1 if pattern.startswith("]", j) else 0
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            body = pattern[i + 1 : j]
            names_newline = any(s in body for s in ("\\n", "\\s", "\n", "[:space:]")) or bool(
                re.search(r"\\x(?:\{0*[aA]\}|0[aA])", body)
            )
            if names_newline != negated or (not negated and ("\\W" in body or "\\D" in body)):
                return True
            i = j + 1
        elif c in ".\n":
            return True
        else:
            i += 1
    return False


# --- the pure-Python engine ----------------------------------------------------------------------------------


def _read_text(path: str) -> str | None:
    """The decoded text of a file as rg sees it (BOM-sniffed), or None if binary or unreadable."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_BINARY_PROBE)
            utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
            if b"\0" in head and not utf16:
                return None
            data = head + handle.read()
    except OSError:
        return None
    if utf16:
        return data.decode("utf-16", "replace")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _is_binary(path: Path) -> bool:
    """True when an explicitly named file holds a NUL byte (checked by both engines, so both answer alike)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_BINARY_PROBE)
            if head.startswith((b"\xff\xfe", b"\xfe\xff")):
                return False
            while head:
                if b"\0" in head:
                    return True
                head = handle.read(1 << 20)
    except OSError:
        return False
    return False


def _lines(text: str) -> list[str]:
    """The lines rg sees: split on `\n` only (a `\r` stays, as in rg's output), no empty line after a final
    newline, none at all in an empty file."""
    lines = text.split("\n")
    if text.endswith("\n") or not text:
        lines.pop()
    return lines


def _hits(text: str, lines: list[str], regex: re.Pattern[str], spanning: bool) -> tuple[list[int], int]:
    """Indices of the lines rg reports as matching, and the number `rg --count` gives for the file.

    Line by line unless the pattern is multiline and may match a newline: then rg counts matches, not lines,
    and a match reports every line it touches."""
    if not lines:
        return [], 0
    if not spanning:
        search = regex.search
        if not search(text):
            return [], 0
        found = [i for i, line in enumerate(lines) if search(line)]
        return found, len(found)
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    limit = len(text) if not text.endswith("\n") else len(text) - 1
    lines_hit: set[int] = set()
    matches = 0
    for match in regex.finditer(text):
        start, end = match.span()
        if start > limit:
            break  # the empty "line" after a final newline does not exist for rg
        first = bisect.bisect_right(starts, start) - 1
        last = bisect.bisect_right(starts, end - 1 if end > start else start) - 1
        lines_hit.update(range(first, last + 1))
        matches += 1
    return sorted(lines_hit), matches


def _body(lines: list[str], hits: list[int], before: int, after: int) -> tuple[bytes, int]:
    """A file's matches in rg's `--heading --line-number` form, and how many lines that is."""
    hit_set = set(hits)
    if before or after:
        shown: Iterable[int] = sorted(
            {j for h in hits for j in range(max(0, h - before), min(len(lines), h + after + 1))}
        )
    else:
        shown = hits
    parts: list[str] = []
    previous = -2
    for i in shown:
        if previous >= 0 and i != previous + 1 and (before or after):  # rg marks gaps only around context
            parts.append("--")
        parts.append(f"{i + 1}{':' if i in hit_set else '-'}{lines[i]}")
        previous = i
    return "\n".join(parts).encode("utf-8", "replace"), len(parts) - parts.count("--")


def _python_search(spec: _Spec, regex: re.Pattern[str], stop: threading.Event) -> _Found:
    root = str(spec.root)
    prefix = root.rstrip(os.sep) + os.sep
    overrides = Overrides([*spec.globs, "!.git"])  # last, as rg gets it: no glob can re-include .git/
    types = TypeFilter(spec.types) if spec.types else None
    spanning = spec.multiline and can_match_newline(spec.pattern)
    found = _Found()
    for path in walk_files(str(spec.target), root=root, overrides=overrides, types=types, stop=stop.is_set):
        text = _read_text(path)
        if text is None:
            continue
        shown = os.fsencode((path[len(prefix) :] if path.startswith(prefix) else path).replace(os.sep, "/"))
        if spec.mode == "files_with_matches" and not spanning:
            # Cheap path: one search over the whole text settles it, unless the match crossed a newline or sits
            # on the empty "line" after a final newline, which rg does not have: then look line by line.
            match = regex.search(text)
            phantom = match is not None and match.start() == len(text) and (not text or text.endswith("\n"))
            if match and (("\n" not in match.group() and not phantom) or any(map(regex.search, _lines(text)))):
                found.files.append(shown)
            continue
        lines = _lines(text)
        hits, count = _hits(text, lines, regex, spanning)
        if not hits:
            continue
        if spec.mode == "files_with_matches":
            found.files.append(shown)
        elif spec.mode == "count":
            found.counts.append((shown, count))
        else:
            body, entries = _body(lines, hits, spec.before, spec.after)
            found.blocks.append((shown, body, 0, len(body)))
            found.entries += entries
    return found


# --- the ripgrep engine --------------------------------------------------------------------------------------


def _rg_options(spec: _Spec) -> list[str]:
    options = ["--with-filename", "--ignore-case" if spec.ignore_case else "--case-sensitive"]
    if spec.multiline:
        options += ["--multiline", "--multiline-dotall"]
    if spec.mode == "files_with_matches":
        options.append("--files-with-matches")
    elif spec.mode == "count":
        options.append("--count")
    else:
        options += ["--heading", "--line-number", f"--before-context={spec.before}", f"--after-context={spec.after}"]
    options += [f"--type={t}" for t in spec.types]
    options += [f"--glob={g}" for g in spec.globs]
    options.append(f"--regexp={spec.pattern}")
    return options


def _rg_failure(spec: _Spec, stderr: str) -> str:
    """rg's complaint as model-facing text."""
    if "regex parse error" in stderr:
        reasons = [line[len("error:") :].strip() for line in stderr.splitlines() if line.startswith("error:")]
        return _invalid(spec.pattern, reasons[-1] if reasons else stderr.strip().splitlines()[-1])
    if _NEWLINE_NOT_ALLOWED in stderr:
        return _invalid(spec.pattern, _NEWLINE_NOT_ALLOWED)
    if "unrecognized file type" in stderr:
        return _unknown_type(stderr.rsplit(":", 1)[-1].strip())
    return "Grep failed: " + " ".join(stderr.replace("rg: ", "").split())


def _parse_rg(spec: _Spec, stdout: bytes, truncated: bool) -> _Found:
    found = _Found(truncated=truncated)
    if truncated:  # drop the record that was cut in the middle
        if spec.mode == "files_with_matches":
            stdout = stdout[: stdout.rfind(b"\0") + 1]
        elif spec.mode == "count" or (cut := stdout.rfind(b"\n\n")) < 0:
            stdout = stdout[: stdout.rfind(b"\n") + 1]
        else:
            stdout = stdout[: cut + 1]
    if spec.mode == "files_with_matches":
        found.files.extend(p for p in stdout.split(b"\0") if p)
    elif spec.mode == "count":
        for line in stdout.splitlines():
            path, _, number = line.rpartition(b"\0")
            if path:
                found.counts.append((path, int(number)))
    else:
        # `path\0body` per file, files separated by a blank line; a NUL only ever follows a path (binary files are
        # skipped), so the NULs locate the files and the blank line before each path ends the previous body.
        end_of_output = len(stdout) - 1 if stdout.endswith(b"\n") else len(stdout)
        starts: list[tuple[int, int]] = []
        nul = stdout.find(b"\0")
        while nul >= 0:
            starts.append((stdout.rfind(b"\n", 0, nul) + 1, nul))
            nul = stdout.find(b"\0", nul + 1)
        for i, (start, nul) in enumerate(starts):
            end = starts[i + 1][0] - 2 if i + 1 < len(starts) else end_of_output
            found.blocks.append((stdout[start:nul], stdout, nul + 1, end))
        # Every line of every body: the newlines inside bodies (all but the two per gap between files), plus one
        # per body for its last line; less the `--` lines.
        if found.blocks:
            inner = stdout.count(b"\n", 0, end_of_output) - 2 * (len(found.blocks) - 1)
            separators = stdout.count(b"\n--\n") if spec.before or spec.after else 0  # `--` only comes with context
            found.entries = inner + len(found.blocks) - separators
    return found


# --- rendering ---------------------------------------------------------------------------------------------


def _invalid(pattern: str, reason: str) -> str:
    text = f"Invalid regex {pattern}: {reason}"
    if reason == _NEWLINE_NOT_ALLOWED:
        text += ". Set multiline: true to match across lines."
    return text


def _unknown_type(name: str) -> str:
    return (
        f'Unknown file type "{name}". Use glob instead (e.g. "*.{name}"), or a known type such as py, js, ts, '
        "rust, go, java, c, cpp, md, json."
    )


def _clean(text: str) -> str:
    """Undecodable bytes (kept as surrogates for stat) become U+FFFD: the model gets valid text."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _cut(text: str) -> str:
    text = text.rstrip("\r")
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]} [... {len(text) - MAX_LINE_CHARS} more characters]"


def _page_note(offset: int, shown: int, total: int) -> str:
    """Where this page sits in the results; empty when it is the whole of them."""
    if shown == 0:
        return f"[No results past offset {offset}: the search found {total}.]"
    end = offset + shown
    if end < total:
        return f"[Showing results {offset + 1}..{end} of {total}. Use offset={end} to see more.]"
    return f"[Showing results {offset + 1}..{end} of {total}.]" if offset else ""


def _render_entries(entries: Iterable[str], offset: int, limit: int) -> list[str]:
    """One page of files or counts, within head_limit and the character budget."""
    out: list[str] = []
    budget = MAX_OUTPUT_CHARS
    for i, entry in enumerate(entries):
        if i < offset:
            continue
        if (limit and len(out) >= limit) or budget - len(entry) < 0 < len(out):
            break
        out.append(entry)
        budget -= len(entry) + 1
    return out


def _render_content(spec: _Spec, found: _Found, offset: int, limit: int, numbers: bool) -> tuple[list[str], int]:
    """Lines of the requested page and the number of entries shown (context lines are entries; `--` are not)."""
    found.blocks.sort(key=lambda block: block[0])
    context = bool(spec.before or spec.after)
    out: list[str] = []
    budget = MAX_OUTPUT_CHARS
    shown = 0
    skip = offset
    for path_bytes, buffer, start, end in found.blocks:
        if skip:
            size = buffer.count(b"\n", start, end) + 1 - buffer.count(b"\n--\n", start, end)
            if skip >= size:
                skip -= size
                continue
        path = os.fsdecode(path_bytes)
        gap = context and bool(out)  # rg separates files with `--` when it prints context
        for raw in buffer[start:end].split(b"\n"):
            if raw == b"--":
                gap = bool(out)
                continue
            if skip:
                skip -= 1
                continue
            digits = len(raw) - len(raw.lstrip(b"0123456789"))
            sep = chr(raw[digits]) if digits < len(raw) else ":"
            text = _cut(raw[digits + 1 :].decode("utf-8", "replace"))
            line = f"{path}{sep}{raw[:digits].decode()}{sep}{text}" if numbers else f"{path}{sep}{text}"
            if (limit and shown >= limit) or (budget - len(line) < 0 < shown):
                return out, shown
            if gap:
                out.append("--")
                gap = False
            out.append(line)
            budget -= len(line) + 1
            shown += 1
    return out, shown


def _render(spec: _Spec, found: _Found, offset: int, limit: int, numbers: bool) -> str:
    if spec.mode == "content":
        lines, shown = _render_content(spec, found, offset, limit, numbers)
        total = found.entries
    elif spec.mode == "count":
        found.counts.sort()
        total = len(found.counts)
        lines = _render_entries((f"{os.fsdecode(p)}:{n}" for p, n in found.counts), offset, limit)
        shown = len(lines)
    else:
        by_date = dated(spec.root, found.files)
        total = len(by_date)
        lines = _render_entries((os.fsdecode(p) for _, p in by_date), offset, limit)
        shown = len(lines)
    if total == 0:
        text = f"No matches for {spec.pattern}."
    else:
        note = _page_note(offset, shown, total)
        text = "\n".join([*lines, note] if note else lines)
    if found.truncated:
        text += (
            "\n[The search produced too much output and was stopped early: totals are incomplete. "
            "Narrow the pattern, path, glob or type.]"
        )
    return _clean(text)


def _split(raw: str | None) -> list[str]:
    """Globs or type names separated by spaces or commas (a comma inside `{}` belongs to its glob)."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for c in raw or "":
        if depth == 0 and (c == "," or c.isspace()):
            out.append("".join(current))
            current = []
            continue
        depth += (c == "{") - (c == "}" and depth > 0)
        current.append(c)
    out.append("".join(current))
    return [piece for piece in out if piece]


class GrepTool(ModelTool[GrepArgs]):
    name = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep). Use it instead of grep or rg in Bash.\n"
        "- pattern is Rust regex syntax (like PCRE without look-around or backreferences). Escape "
        "metacharacters to match them literally: `interface\\{\\}` finds `interface{}`, `\\.` a dot, `\\(` a "
        "parenthesis.\n"
        "- Narrow the files with glob (`*.py`, `*.{ts,tsx}`, `src/**/*.rs`) or type (rg's file types: py, js, "
        "ts, rust, go, java, c, cpp, md, json, yaml...).\n"
        "- output_mode: files_with_matches (default) lists matching files, newest first; content shows "
        "matching lines as `path:line:text` (context lines as `path-line-text`, `--` between groups; use "
        "-A/-B/-C for context, -n for line numbers); count gives `path:N` matching lines per file. Content and "
        "count are ordered by path.\n"
        "- Matches stay within one line unless multiline is true.\n"
        "- Respects .gitignore, skips binary files and .git/, searches hidden files. Paths are relative to the "
        "workspace root.\n"
        f"- Shows at most head_limit entries (default {DEFAULT_HEAD_LIMIT}; 0 for all) and says how to get "
        f"the next page with offset. Lines over {MAX_LINE_CHARS} characters are cut.\n"
        "- Use Glob to find files by name."
    )
    args_model = GrepArgs
    read_only = True
    concurrency_safe = True
    status_field = "pattern"

    def __init__(self, *, use_rg: bool = True, rg_path: str | None = None) -> None:
        """`use_rg=False` forces the pure-Python engine; `rg_path` overrides where rg is looked for."""
        self._use_rg = use_rg
        self._rg_path = rg_path

    async def call(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        if "\0" in args.pattern:
            return ToolOutput(_invalid(args.pattern, "it contains a NUL character; write \\x00 instead"), is_error=True)
        try:
            return await self._grep(args, ctx)
        except (OSError, ValueError) as exc:  # e.g. a NUL in the path, an unreadable root
            return ToolOutput(f"Grep failed: {exc}", is_error=True)

    async def _grep(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.cwd.resolve()
        raw_path = None if args.path in (None, "", "undefined", "null") else args.path
        target = resolve(root, raw_path or ".")
        if not target.exists():
            return ToolOutput(f"Path does not exist: {raw_path}", is_error=True)
        content = args.output_mode == "content"
        spec = _Spec(
            root=root,
            target=target,
            pattern=args.pattern,
            mode=args.output_mode,
            ignore_case=args.ignore_case,
            multiline=args.multiline,
            before=_context(args.before, args.context) if content else 0,
            after=_context(args.after, args.context) if content else 0,
            globs=_split(args.glob),
            types=_split(args.type),
        )
        limit = DEFAULT_HEAD_LIMIT if args.head_limit is None else args.head_limit
        if target.is_file() and await asyncio.to_thread(_is_binary, target):
            return ToolOutput(f"No matches for {args.pattern}: {display(root, target)} is a binary file.")
        rg = (self._rg_path or find_rg()) if self._use_rg else None
        found = await self._search_rg(rg, spec) if rg else None
        if found is None:
            found = await self._search_python(spec)
        if isinstance(found, str):
            return ToolOutput(found, is_error=True)
        if ctx.read_denied is not None:
            found = _without_denied(found, root, ctx.read_denied)
        text = await asyncio.to_thread(_render, spec, found, args.offset, limit, args.line_numbers)
        return ToolOutput(text)

    async def _search_rg(self, rg: str, spec: _Spec) -> _Found | str | None:
        """rg's findings, an error text, or None when rg could not be started."""
        paths = [] if spec.target == spec.root else [display(spec.root, spec.target)]
        try:
            result = await run_rg(rg, _rg_options(spec), paths, spec.root)
        except OSError:
            return None
        if result.returncode == 2 and result.stderr.strip():
            return _rg_failure(spec, result.stderr)
        return await asyncio.to_thread(_parse_rg, spec, result.stdout, result.truncated)

    async def _search_python(self, spec: _Spec) -> _Found | str:
        try:
            regex = compile_rust_regex(spec.pattern, ignore_case=spec.ignore_case, multiline=spec.multiline)
        except SearchError as exc:
            return _invalid(spec.pattern, str(exc))
        unknown = [t for t in spec.types if t not in FILE_TYPES]
        if unknown:
            return _unknown_type(unknown[0])
        stop = threading.Event()
        try:
            return await asyncio.to_thread(_python_search, spec, regex, stop)
        finally:
            stop.set()  # also when cancelled: the worker thread notices at its next directory


def _without_denied(found: _Found, root: Path, denied: Callable[[Path], bool]) -> _Found:
    """The findings minus files the permission rules forbid reading."""

    def hidden(raw: bytes) -> bool:
        return denied(resolve(root, os.fsdecode(raw)))

    blocks = [b for b in found.blocks if not hidden(b[0])]
    entries = found.entries
    if len(blocks) != len(found.blocks):  # recount the lines left, `--` separators excluded
        entries = sum(
            sum(1 for line in buffer[start:end].splitlines() if line != b"--") for _, buffer, start, end in blocks
        )
    return _Found(
        files=[f for f in found.files if not hidden(f)],
        counts=[c for c in found.counts if not hidden(c[0])],
        blocks=blocks,
        entries=entries,
        truncated=found.truncated,
    )


def _context(specific: int | None, both: int | None) -> int:
    """rg's rule: -A/-B win over -C for their side."""
    if specific is not None:
        return specific
    return both or 0
