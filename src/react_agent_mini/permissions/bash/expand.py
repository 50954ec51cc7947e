"""What bash makes of a word before a program sees it, for the path checks: `$'...'` decoded, braces
(`{secrets,nope}/key`, `{1..3}`), tildes (`~`, `~+`, `~-`, `~user`) and globs, in bash's order and only where the
characters are unquoted (the word's mask, `words.py`). A word whose value is only known when the shell runs (`$x`,
`$(...)`, `$"..."`), that expands to too many words, or whose tilde names a directory we cannot know (`~-` before
any `cd`) is unknowable: callers treat it as reaching anywhere, and every Read/Edit deny rule applies to it.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from .words import ANSI_C, LITERAL, UNKNOWN, UNQUOTED, Word

MAX_WORDS = 256
"""More words than this from one word's braces: unknowable."""
MAX_MATCHES = 500
"""More matches than this from one glob: unknowable."""

_Piece = tuple[str, str]
"""A word being expanded: its text and its mask, one character each."""


class Places:
    """Where the shell is: the directories it may be in (None: not knowable), `$OLDPWD` (None: not knowable), and
    whether `$HOME` and `$PWD` are still what they were (the command line may assign them: `HOME=x; cat ~/y`).
    A directory may be named through a link, as `$PWD` names it after `cd lnk` (`cd ..` goes on from there)."""

    __slots__ = ("cwds", "home", "oldpwd", "pwd")

    def __init__(
        self, cwds: list[Path] | None, oldpwd: list[Path] | None = None, *, home: bool = True, pwd: bool = True
    ) -> None:
        self.cwds = cwds
        self.oldpwd = oldpwd
        self.home = home
        self.pwd = pwd

    def moved(self, cwds: list[Path] | None, oldpwd: list[Path] | None = None) -> Places:
        """The same shell in other directories (None: not knowable)."""
        return Places(cwds, oldpwd, home=self.home, pwd=self.pwd)


def expand(word: Word, places: Places) -> tuple[list[Path], list[Path], list[str]] | None:
    """The paths `word` names once bash has expanded it, relative ones resolved from every directory the shell may be
    in (links followed); the same paths as written, where that differs (`alias/key` for a link `alias`: a rule
    may name either); and the words the expansion produced (a glob's matches). None when that is unknowable."""
    piece = _piece(word)
    if piece is None:
        return None
    braced = _braces(piece)
    if braced is None:
        return None
    paths: list[Path] = []
    lexical: list[Path] = []
    words: list[str] = []
    for text, mask in braced:
        tilded = _tilde(text, mask, places)
        if tilded is None:
            return None
        for base, (text2, mask2) in tilded:
            found = _glob(text2, mask2, base, places)
            if found is None:
                return None
            paths += [real(root, name) for root, name in found[0]]
            lexical += [Path(os.path.normpath(root / name)) for root, name in found[0]]
            words += found[1]
    paths = list(dict.fromkeys(paths))
    return paths, [p for p in dict.fromkeys(lexical) if p not in paths], words


def _piece(word: Word) -> _Piece | None:
    if word.static:
        return word.value, LITERAL * len(word.value)
    mask = word.mask or UNQUOTED * len(word.value)  # a hand-built word: assume bash may expand all of it
    if UNKNOWN in mask or (not word.mask and re.search(r"\$[A-Za-z_{(@*#?!$-]|`|\$\"", word.value)):
        return None
    if ANSI_C not in mask:
        return word.value, mask
    text: list[str] = []
    out_mask: list[str] = []
    for kind, group in itertools.groupby(zip(word.value, mask, strict=True), key=lambda pair: pair[1]):
        chunk = "".join(c for c, _ in group)
        if kind == ANSI_C:
            chunk = ansi_c_value(chunk)
            kind = LITERAL
        text.append(chunk)
        out_mask.append(kind * len(chunk))
    return "".join(text), "".join(out_mask)


# -- braces


def _braces(piece: _Piece, depth: int = 0) -> list[_Piece] | None:
    """Bash's brace expansion: `a{b,c}d` is `abd acd`, `{1..3}` is `1 2 3`; anything else stays as it is."""
    text, mask = piece
    start = 0
    while True:
        open_at = _next_unquoted(text, mask, "{", start)
        if open_at < 0:
            return [piece]
        body = _brace_body(text, mask, open_at)
        if body is None:
            start = open_at + 1
            continue
        close_at, parts = body
        head, tail = (text[:open_at], mask[:open_at]), (text[close_at + 1 :], mask[close_at + 1 :])
        if depth > 8:
            return None
        out: list[_Piece] = []
        for part in parts:
            done = _braces((head[0] + part[0] + tail[0], head[1] + part[1] + tail[1]), depth + 1)
            if done is None or len(out) + len(done) > MAX_WORDS:
                return None
            out += done
        return out


def _next_unquoted(text: str, mask: str, char: str, start: int) -> int:
    for i in range(start, len(text)):
        if text[i] == char and mask[i] == UNQUOTED:
            return i
    return -1


def _brace_body(text: str, mask: str, open_at: int) -> tuple[int, list[_Piece]] | None:
    """The closing brace and the alternatives of a brace expression at `open_at`; None when it is not one."""
    depth = 0
    commas: list[int] = []
    for i in range(open_at, len(text)):
        if mask[i] != UNQUOTED:
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                if commas:
                    cuts = [open_at, *commas, i]
                    return i, [(text[a + 1 : b], mask[a + 1 : b]) for a, b in itertools.pairwise(cuts)]
                sequence = _sequence(text[open_at + 1 : i], mask[open_at + 1 : i])
                return (i, sequence) if sequence is not None else None
        elif text[i] == "," and depth == 1:
            commas.append(i)
    return None


_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def _sequence(body: str, mask: str) -> list[_Piece] | None:
    match = _SEQUENCE.fullmatch(body)
    if match is None or LITERAL in mask:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text and int(step_text) else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step > MAX_WORDS:
            return [("", "")] * (MAX_WORDS + 1)  # too many: the caller gives up
        padded = first.lstrip("-").startswith("0") or last.lstrip("-").startswith("0")
        width = max(len(first), len(last)) if padded else 0
        values = range(a, b + (1 if b >= a else -1), step if b >= a else -step)
        texts = [str(v).zfill(width) if width else str(v) for v in values]
    elif first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        texts = [chr(c) for c in range(a, b + (1 if b >= a else -1), step if b >= a else -step)]
    else:
        return None
    return [(t, LITERAL * len(t)) for t in texts]


# -- tildes


def _tilde(text: str, mask: str, places: Places) -> list[tuple[Path | None, _Piece]] | None:
    """`~`, `~+`, `~-` and `~user` at the start of the word; each result with the directory it is relative to
    (None: the word is absolute or relative to the shell's directories)."""
    if not text.startswith("~") or mask[:1] != UNQUOTED:
        return [(None, (text, mask))]
    slash = text.find("/")
    prefix = text[: slash if slash >= 0 else len(text)]
    if any(m != UNQUOTED for m in mask[: len(prefix)]):
        return [(None, (text, mask))]  # a quoted character in the prefix: no tilde expansion
    rest = (text[len(prefix) :], mask[len(prefix) :])
    if re.fullmatch(r"~[+-]?\d+", prefix):
        return None  # `~1`, `~+2`, `~-1`: entries of the directory stack, which only the shell knows
    if (prefix == "~" and not places.home) or (prefix in ("~+", "~-") and not places.pwd):
        return None  # the command line assigns HOME, PWD or OLDPWD: only the shell knows what the tilde is now
    if prefix in ("~+", "~-"):
        dirs = places.cwds if prefix == "~+" else places.oldpwd
        if dirs is None:
            return None  # `$PWD` after a `cd` we cannot follow, `$OLDPWD` before any `cd`: only the shell knows
        return [(d, ("." + rest[0], LITERAL + rest[1])) for d in dirs]
    home = os.path.expanduser(prefix)
    if home == prefix:
        return [(None, (text, mask))]  # `~nosuchuser`: bash leaves the word as it is
    return [(None, (home + rest[0], LITERAL * len(home) + rest[1]))]


# -- globs


def _glob(text: str, mask: str, base: Path | None, places: Places) -> tuple[list[tuple[Path, str]], list[str]] | None:
    """Every (directory, name) a word names once its glob is expanded from each directory it may be relative to
    (bash passes a glob that matches nothing on as it is), and the matches themselves."""
    bases = [base] if base is not None else places.cwds
    if bases is None and not text.startswith("/"):
        return None  # relative to a directory we cannot know
    roots = bases or [Path("/")]
    if not any(m == UNQUOTED and c in "*?[" for c, m in zip(text, mask, strict=True)):
        return [(root, text) for root in roots], []
    pattern = _pattern(text, mask)
    if pattern is None:
        return None
    named: list[tuple[Path, str]] = []
    words: list[str] = []
    for root in roots:
        try:
            found = list(itertools.islice(glob.iglob(pattern, root_dir=root), MAX_MATCHES + 1))
        except (OSError, ValueError, re.error):
            return None
        if len(found) > MAX_MATCHES:
            return None
        words += found
        named += [(root, match) for match in found] or [(root, text)]
    return named, words


def _pattern(text: str, mask: str) -> str | None:
    """The word as a pattern for Python's `glob`, which reads brackets differently from bash: `[^x]` is a
    negation to bash (`[!x]` to Python), and bash knows classes (`[[:alpha:]]`, `[[=e=]]`, `[[.a.]]`) that Python
    reads as plain characters. None when a bracket holds what we cannot translate (a class, a quoted character)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if mask[i] != UNQUOTED:
            out.append(glob.escape(char))
        elif char == "[" and (close := _bracket_end(text, i)) > 0:
            body, body_mask = text[i + 1 : close], mask[i + 1 : close]
            if any(m != UNQUOTED for m in body_mask) or any(k in body for k in ("[:", "[=", "[.")):
                return None
            out.append("[" + ("!" + body[1:] if body.startswith("^") else body) + "]")
            i = close
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _bracket_end(text: str, start: int) -> int:
    """Where the bracket expression opened at `start` closes (a `]` right after `[`, `[!` or `[^` is a member);
    -1 when it does not close, and bash reads the `[` as itself."""
    k = start + 1
    if text[k : k + 1] in ("!", "^"):
        k += 1
    if text[k : k + 1] == "]":
        k += 1
    while k < len(text):
        if text.startswith(("[:", "[=", "[."), k):
            end = text.find(text[k + 1] + "]", k + 2)  # a class inside the bracket ends with `:]`, `=]`, `.]`
            if end < 0:
                return -1
            k = end + 2
            continue
        if text[k] == "]":
            return k
        k += 1
    return -1


def real(base: Path, text: str) -> Path:
    """`text` (relative to `base`) with `..` and symbolic links resolved; never raising (a loop, or a name too long
    to look up, leaves the rest of the path as it is)."""
    try:
        return (base / text).resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.normpath(base / text))


# -- ANSI-C quoting

_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_ANSI_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def ansi_c_value(word: str) -> str:
    """`word` with each `$'...'` (bash's ANSI-C quoting) replaced by the text it stands for: `$'\\x2ftmp'` is
    `/tmp`, `$'rm'` is `rm`. Other text is left as it is."""
    if "$'" not in word:
        return word
    return _ANSI_C.sub(lambda m: _ansi_c_decode(m.group(1)), word)


def _ansi_c_decode(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        i += 2
        if code in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[code])
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = re.match(f"[0-9A-Fa-f]{{1,{width}}}", body[i:])
            if digits:
                out.append(chr(min(int(digits.group(0), 16), 0x10FFFF)))
                i += len(digits.group(0))
            else:
                out.append("\\" + code)
        elif code in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i - 1 :])
            assert digits is not None
            out.append(chr(int(digits.group(0), 8) & 0xFF))
            i += len(digits.group(0)) - 1
        elif code == "c" and i < len(body):
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append(code)  # \\ \' \" \? and unknown escapes
    return "".join(out)


def strings(words: Sequence[Word]) -> list[str]:
    """The values of `words` with `$'...'` decoded (what a program name or an option looks like to the program)."""
    return [ansi_c_value(w.value) for w in words]
