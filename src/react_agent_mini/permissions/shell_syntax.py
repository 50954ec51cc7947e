"""The parser-facing half of `shell.py`: parse a command line with tree-sitter-bash and reduce it to what the rules
judge, refusing wherever the tree might not be what bash will run.

`read` returns every simple command in source order (including those in substitutions, compound commands, function
bodies and `[ ]` / `[[ ]]` tests) with its words unquoted, the problems found outside simple commands (compound
redirections, function definitions), whether any redirection writes, and the refusals: what we will not analyse,
which makes the whole line `parsed=False`.

tree-sitter-bash is not bash: it recovers from errors instead of failing, and its grammar differs from bash's in
places. So the tree is never trusted on its own (each rule below was found by running commands through both):

* any `ERROR` or `MISSING` node refuses the line;
* every node type and every anonymous token is checked against what its parent may hold (an unknown one refuses),
  and the source between siblings must be spaces, tabs, newlines or `\\`-newline continuations, with real whitespace
  wherever two words would otherwise touch. tree-sitter silently skips `\\ ` and `\\r`, reads `[ -f x && rm y ]`
  as one test, `[ a > b ]` as a comparison, `echo a\\<newline>b` as two words and `$"x"` as `$` and `"x"`; bash
  does not;
* a simple command, a redirection or a `[ ]` test never spans a newline (tree-sitter can read `wc -l<newline>grep x`
  as one command), and digits right before `<` / `>` are a file descriptor, not an argument;
* words tree-sitter hangs on a redirection are the command's arguments (`git branch 2>&- topic` creates a branch),
  a redirection it hangs on a whole `a && b > f` or `a | b > f` belongs to the last command, and `<& -x` (which bash
  splits into `<&-` and the argument `x`) is refused;
* an anonymous token must be exactly its text (tree-sitter reads `sed -n p f -i<<EOF` as `sed -n p f` and a `<<`
  token `-i<<`), and a comment must be one: `#` to the end of its line;
* words are unquoted by our own scanner, which must meet exactly the expansions tree-sitter found (a `$(` or
  backtick it did not report, or one it reported inside quotes, refuses; `$\\<newline>(` is a `$(` to bash), and
  refuses unquoted blanks and operators inside a word;
* here-documents are checked line by line against bash's rules (delimiter quote removal, `<<-` tab stripping,
  backslash-newline joining in unquoted bodies, a terminator closing `$(...)`), so that no line bash would run is
  mistaken for body text; a here-document must start on a one-line command line, one per line.

Arithmetic (`$(( ))`, `$[ ]`, `(( ))`, C-style `for`, `[[ -eq ]]` operands) is only accepted on literal numbers and
`$#` `$?` `$$` `$!` `${#name}`: bash evaluates a variable's value as an expression, and an array subscript in it
(`a[$(rm x)]`, from a file name a loop picked up) runs commands.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

__all__ = ["MAX_DEPTH", "Entry", "Refused", "Syntax", "Word", "read"]

MAX_DEPTH = 64
"""Deeper nesting of statements and substitutions is refused."""


class Refused(Exception):
    """Raised for anything we will not vouch for."""


# --------------------------------------------------------------------------------------------------------------------
# The parser: imported on the first `analyze` (tens of milliseconds), built once and reused.

_parser: Parser | None = None
_lock = threading.Lock()


def _parse(data: bytes) -> Tree:
    global _parser
    with _lock:  # a Parser is not safe to share between threads
        if _parser is None:
            try:
                import tree_sitter
                import tree_sitter_bash

                _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
            except (ImportError, ValueError) as error:  # not installed, or a grammar too new for the runtime
                raise Refused(f"the shell parser is unavailable ({error})") from None
        return _parser.parse(data)


# --------------------------------------------------------------------------------------------------------------------
# Results


class Word(msgspec.Struct, frozen=True):
    value: str
    """Quotes removed; expansions kept as their source text."""
    static: bool
    """The value is exactly what the command receives: no expansion, glob or brace of any kind."""
    operand: bool
    """Certainly one or more words none of which starts with `-` (so it cannot be an option)."""
    single: bool
    """Certainly exactly one word (no word splitting, glob or brace expansion)."""


class Entry(msgspec.Struct):
    """One simple command, or one `[[ ]]` conditional."""

    start: int
    text: str
    words: list[Word] = []
    assignments: list[Word] = []
    conditional: bool = False
    """A `[[ ]]` command: judged here (`problem`), not by the command table."""
    problem: str | None = None
    refusal: str | None = None
    redirect_problems: list[str] = []


class Syntax(msgspec.Struct):
    entries: list[Entry] = []
    problems: list[tuple[int, str]] = []
    """Problems outside any simple command: a redirection of a compound command, a function definition."""
    refusals: list[tuple[int, str]] = []
    writes: bool = False
    top: list[Entry | str] = []
    """The top-level statements: their entry, or their node type when they are not one simple command."""


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


def _scan_word(source: str, start: int, end: int, parts: dict[int, tuple[int, str]], *, pattern: bool = False) -> Word:
    """Remove quotes from `source[start:end]` the way bash does.

    `parts` maps the start of each expansion tree-sitter found to its end and kind; the scanner must meet each of them
    at a position where bash expands, and must find no other expansion, or it raises `Refused`. `pattern` allows the
    unquoted `( ) |` of a `[[ == ]]` pattern.
    """
    text = source[start:end]
    if not parts and _PLAIN_WORD.fullmatch(text):
        return Word(value=text, static=True, operand=not text.startswith("-"), single=True)
    out: list[str] = []
    static = True
    splits = False
    multi = False
    lead: str | None = None  # "dash", "safe" or "unknown", decided by the first thing that produces characters
    in_dq = False
    met = 0
    i = start

    def first(kind: str) -> None:
        nonlocal lead
        if lead is None:
            lead = kind

    def literal(ch: str) -> None:
        first("dash" if ch == "-" else "safe")
        out.append(ch)

    while i < end:
        part = parts.get(i)
        if part is not None:
            part_end, part_kind = part
            met += 1
            out.append(source[i:part_end])
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
                    literal(nxt)
                i += 2
            elif _expands(source, i, end):
                raise Refused(f"an expansion the parser did not recognise in {text!r}")
            else:
                literal(c)
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
            in_dq = True
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
                in_dq = True
                i += 2
            else:
                close = i + 2
                while close < end and source[close] != "'":
                    close += 2 if source[close] == "\\" else 1
                if close >= end:
                    raise Refused(f"unbalanced quote in {text!r}")
                out.append(source[i : close + 1])
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
            out.append(source[i:prefix_end])
            i = prefix_end
        elif c in "*?" or (c == "[" and "]" in source[i:end]) or (c == "{" and _brace_candidate(source[i:end])):
            # Globs and brace expansion: the result is unknown, and `*` could match a file named `-i`.
            static = False
            multi = True
            first("unknown")
            out.append(c)
            i += 1
        else:
            literal(c)
            i += 1
    if in_dq:
        raise Refused(f"unbalanced quote in {text!r}")
    if met != len(parts):
        raise Refused(f"the parser saw an expansion inside quotes in {text!r}")
    value = "".join(out)
    operand = (lead == "safe" and not splits) if not static else not value.startswith("-")
    return Word(value=value, static=static, operand=operand, single=static or not (splits or multi))


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


# --------------------------------------------------------------------------------------------------------------------
# Node kinds

_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
_WORD_PIECES = frozenset(
    {
        "word",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "number",
        "extglob_pattern",
        "brace_expression",
    }
)
_WORDS = _EXPANSIONS | _WORD_PIECES
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})

_SEPARATORS = frozenset({";", "&", "\n"})
_TOKENS: dict[str, frozenset[str]] = {
    "program": _SEPARATORS,
    "list": _SEPARATORS | {"&&", "||"},
    "pipeline": frozenset({"|", "|&"}),
    "negated_command": frozenset({"!"}),
    "subshell": _SEPARATORS | {"(", ")"},
    "compound_statement": _SEPARATORS | {"{", "}"},
    "if_statement": _SEPARATORS | {"if", "then", "fi"},
    "elif_clause": _SEPARATORS | {"elif", "then"},
    "else_clause": _SEPARATORS | {"else"},
    "while_statement": _SEPARATORS | {"while", "until"},
    "do_group": _SEPARATORS | {"do", "done"},
    "command_substitution": _SEPARATORS | {"$(", "`", ")"},
    "process_substitution": _SEPARATORS | {"<(", ">(", ")"},
}
_FILE_REDIRECT_OPERATORS = frozenset({"<", ">", ">>", "&>", "&>>", ">&", "<&", ">|", ">&-", "<&-"})
_HEREDOC_CONTINUATIONS = frozenset({"|", "|&", "&&", "||"})
_INLINE = frozenset(
    {
        "command",
        "command_name",
        "file_redirect",
        "herestring_redirect",
        "redirected_statement",
        "declaration_command",
        "unset_command",
        "variable_assignment",
        "variable_assignments",
    }
)

_TEST_TOKENS = frozenset({"=", "==", "!=", "!", "-a", "-o"})
"""Operators `[ ]` may hold; `( ) < > && || =~` there mean something else to bash than to tree-sitter."""
_CONDITIONAL_TOKENS = _TEST_TOKENS | {"&&", "||", "(", ")", "=~", "<", ">"}
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_SAFE_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr")


# --------------------------------------------------------------------------------------------------------------------
# Walking the tree


class _Redirect(msgspec.Struct):
    problem: str | None = None
    writes: bool = False
    words: list[tuple[int, Word]] = []
    """Words bash gives the command although tree-sitter put them in the redirection (`ls > f x`, `cat <<EOF -n`)."""
    end: int = 0
    """Where the redirection's own text ends (before any here-document body or continuation)."""


class _Walker:
    def __init__(self, source: str, data: bytes, stub_from: int | None) -> None:
        self.source = source
        self.result = Syntax()
        self.depth = 0
        self.stub_from = stub_from
        """In a text completed with here-document terminators, where the completion starts."""
        self.heredoc_spans: list[tuple[int, int]] = []
        self._offsets: list[int] | None = None
        if not source.isascii():
            offsets = [0] * (len(data) + 1)
            position = 0
            for index, char in enumerate(source):
                size = len(char.encode("utf-8", errors="surrogatepass"))
                for k in range(size):
                    offsets[position + k] = index
                position += size
            offsets[position] = len(source)
            self._offsets = offsets

    # -- positions and text

    def at(self, byte: int) -> int:
        return byte if self._offsets is None else self._offsets[byte]

    def span(self, node: Node) -> tuple[int, int]:
        if self._offsets is None:
            return node.start_byte, node.end_byte
        return self._offsets[node.start_byte], self._offsets[node.end_byte]

    def text(self, node: Node) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    # -- structure

    def kids(
        self,
        node: Node,
        tokens: Iterable[str] = (),
        bounds: tuple[int, int] | None = None,
        *,
        inline: bool | None = None,
    ) -> list[tuple[str | None, Node]]:
        """The named children of `node` with their field names, after checking that nothing between them was skipped
        and that every anonymous child is one of `tokens`. In an `inline` node (a simple command, a redirection, a
        `[ ]` test) a newline between children ends the command for bash."""
        allowed = frozenset(tokens)
        inline = node.type in _INLINE if inline is None else inline
        start, end = bounds if bounds is not None else self.span(node)
        named: list[tuple[str | None, Node]] = []
        previous = start
        previous_wordish = False
        for index, child in enumerate(node.children):
            child_start, child_end = self.span(child)
            wordish = child.is_named or bool(_WORDISH_TOKEN.fullmatch(child.type))
            self.gap(previous, child_start, check_touch=previous_wordish and wordish, inline=inline)
            previous, previous_wordish = child_end, wordish
            if child.type == "comment":
                comment, before = self.source[child_start:child_end], self.source[child_start - 1 : child_start]
                if not comment.startswith("#") or "\n" in comment or (before and before in "<>"):
                    raise Refused("the parser read part of the command as a comment")
                continue
            if not child.is_named:
                if child.type not in allowed:
                    raise Refused(f"unsupported shell syntax `{_one_line(self.text(child))}` in {node.type}")
                if self.source[child_start:child_end] != child.type:
                    # tree-sitter's here-document scanner reads `cat -v<<EOF` as `cat` and a `<<` token `-v<<`.
                    raise Refused(
                        f"the parser read `{_one_line(self.source[child_start:child_end])}` as `{child.type}`"
                    )
                continue
            named.append((node.field_name_for_child(index), child))
        self.gap(previous, end, check_touch=False, inline=inline)
        return named

    def gap(self, start: int, end: int, *, check_touch: bool, inline: bool = False) -> None:
        """Only blanks and line continuations may separate two nodes, two words (or keywords) may not touch (bash
        would read them as one word), and inside a simple command there is no newline (bash would end it there:
        tree-sitter sometimes reads `wc -l<newline>grep x` as one command)."""
        if start > end:
            raise Refused("the parser skipped part of the command")
        text = self.source[start:end]
        joined = text.replace("\\\n", "")
        if inline and "\n" in joined:
            raise Refused("the parser read a command across a newline")
        if joined.strip(_BLANKS) or ("\\\n" in text and not joined):
            # `\<newline>` vanishes before bash splits words: `ec\<newline>ho` is `echo`, `&\<newline>&` is `&&`.
            raise Refused(f"the parser skipped part of the command ({text.strip(' ')!r})")
        left, right = self.source[start - 1 : start], self.source[end : end + 1]
        if check_touch and not joined and left not in _DELIMITERS and right not in _DELIMITERS:
            raise Refused("the parser split a word that bash reads as one")

    def statement(self, node: Node) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Refused("the command is nested too deeply")
        try:
            self._statement(node)
        finally:
            self.depth -= 1

    def _statement(self, node: Node) -> None:
        kind = node.type
        if kind == "command":
            self.simple(node, [])
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind in ("test_command", "declaration_command", "unset_command"):
            self.special(node, [])
        elif kind in ("variable_assignment", "variable_assignments"):
            self.assignments_only(node, [])
        elif kind in _REDIRECTS:
            self.bare_redirects(node, [node])  # `$(< file)`
        elif kind == "compound_statement" and node.children and node.children[0].type == "((":
            self.arithmetic_command(node)
        elif kind in _TOKENS and not kind.endswith("_substitution"):
            for _, child in self.kids(node, _TOKENS[kind]):
                self.statement(child)
        elif kind == "for_statement":
            self.for_loop(node)
        elif kind == "c_style_for_statement":
            self.c_style_for(node)
        elif kind == "case_statement":
            self.case(node)
        elif kind == "function_definition":
            self.function(node)
        else:
            raise Refused(f"unsupported shell construct ({kind})")

    def refuse_at(self, position: int, refused: Refused) -> None:
        self.result.refusals.append((position, str(refused)))

    # -- simple commands

    def simple(self, node: Node, outer: list[Node]) -> Entry:
        """A `command` node, with the redirections tree-sitter put around it (`outer`)."""
        words: list[tuple[int, Word]] = []
        assignments: list[Word] = []
        entry = Entry(start=self.span(node)[0], text="")
        ends = [self.span(node)[1]]
        for field_name, child in self.kids(node):
            child_start = self.span(child)[0]
            try:
                if child.type == "variable_assignment":
                    assignments.append(self.assignment(child))
                elif field_name == "name" and child.type == "command_name":
                    (_, inner), *rest = self.kids(child) or [(None, child)]
                    if rest or inner.type not in _WORDS:
                        raise Refused("an unusual command name")
                    words.append((child_start, self.word(inner)))
                elif field_name == "argument" and child.type in _WORDS:
                    self.not_a_descriptor(child)
                    words.append((child_start, self.word(child)))
                elif child.type in _REDIRECTS:
                    self.attach(entry, self.redirect(child), words, ends)
                else:
                    raise Refused(f"unsupported command part ({child.type})")
            except Refused as refused:
                # Keep walking so that `commands` is as complete as possible for display.
                if field_name in ("name", "argument"):
                    placeholder = Word(value=self.text(child), static=False, operand=False, single=False)
                    words.append((child_start, placeholder))
                entry.refusal = entry.refusal or str(refused)
                self.refuse_at(child_start, refused)
        for redirect in outer:
            self.attach(entry, self.redirect(redirect), words, ends)
        entry.words = [w for _, w in sorted(words, key=lambda pair: pair[0])]
        entry.assignments = assignments
        return self.add(entry, ends)

    def not_a_descriptor(self, node: Node) -> None:
        """Digits right before `<` or `>` are a file descriptor to bash (`ls 2>&-`), even after a continuation, where
        tree-sitter reads an argument."""
        start, end = self.span(node)
        if self.source[start:end].isdigit():
            after = end
            while self.source.startswith("\\\n", after):
                after += 2
            if self.source[after : after + 1] in ("<", ">"):
                raise Refused("the parser read a file descriptor as an argument")

    def attach(self, entry: Entry, redirect: _Redirect, words: list[tuple[int, Word]], ends: list[int]) -> None:
        if redirect.problem:
            entry.redirect_problems.append(redirect.problem)
        self.result.writes |= redirect.writes
        words.extend(redirect.words)
        ends.append(redirect.end)

    def add(self, entry: Entry, ends: list[int]) -> Entry:
        entry.text = self.source[entry.start : max(ends)]
        self.result.entries.append(entry)
        return entry

    def redirected(self, node: Node, outer: list[Node] | None = None) -> None:
        """A statement with redirections; `outer` are those of an enclosing `redirected_statement`."""
        body: Node | None = None
        redirects: list[Node] = []
        for field_name, child in self.kids(node):
            if field_name == "body" and body is None:
                body = child
            elif child.type in _REDIRECTS:
                redirects.append(child)
            else:
                raise Refused(f"unsupported redirection ({child.type})")
        redirects += outer or []
        if body is None:
            self.bare_redirects(node, redirects)
        else:
            self.redirected_body(body, redirects)

    def redirected_body(self, body: Node, redirects: list[Node]) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Refused("the command is nested too deeply")
        try:
            if body.type == "command":
                self.simple(body, redirects)
            elif body.type in ("test_command", "declaration_command", "unset_command"):
                self.special(body, redirects)
            elif body.type in ("variable_assignment", "variable_assignments"):
                self.assignments_only(body, redirects)
            elif body.type == "redirected_statement":
                self.redirected(body, redirects)
            elif body.type in ("pipeline", "list", "negated_command"):
                # tree-sitter hangs `a && b > f` on the whole list; to bash the redirection is the last command's.
                statements = self.kids(body, _TOKENS[body.type])
                for _, child in statements[:-1]:
                    self.statement(child)
                if statements:
                    self.redirected_body(statements[-1][1], redirects)
            else:
                self.statement(body)
                for child in redirects:
                    redirect = self.redirect(child)
                    self.result.writes |= redirect.writes
                    if redirect.words:
                        raise Refused("words after the redirection of a compound command")
                    if redirect.problem:
                        self.result.problems.append((self.span(child)[0], redirect.problem))
        finally:
            self.depth -= 1

    def bare_redirects(self, node: Node, redirects: list[Node]) -> None:
        """Redirections without a command (`> f`, `2>&1`): a simple command with no words."""
        entry = Entry(start=self.span(node)[0], text="")
        words: list[tuple[int, Word]] = []
        ends = [entry.start]
        for child in redirects:
            self.attach(entry, self.redirect(child), words, ends)
        entry.words = [w for _, w in sorted(words, key=lambda pair: pair[0])]
        self.add(entry, ends)

    def assignments_only(self, node: Node, redirects: list[Node]) -> None:
        """`A=1` or `A=1 B=2` on their own: they assign shell variables."""
        entry = Entry(start=self.span(node)[0], text="")
        nodes = [child for _, child in self.kids(node)] if node.type == "variable_assignments" else [node]
        words: list[tuple[int, Word]] = []
        ends = [self.span(node)[1]]
        for child in nodes:
            try:
                if child.type != "variable_assignment":
                    raise Refused(f"unsupported assignment part ({child.type})")
                entry.assignments.append(self.assignment(child))
            except Refused as refused:
                entry.refusal = entry.refusal or str(refused)
                self.refuse_at(self.span(child)[0], refused)
        for child in redirects:
            self.attach(entry, self.redirect(child), words, ends)
        entry.words = [w for _, w in sorted(words, key=lambda pair: pair[0])]
        self.add(entry, ends)

    def special(self, node: Node, redirects: list[Node]) -> None:
        """`[ ]`, `[[ ]]`, `export`/`declare`/`local`/`readonly`/`typeset` and `unset`: one command whose words are
        the flattened tree."""
        entry = Entry(start=self.span(node)[0], text="")
        ends = [self.span(node)[1]]
        words: list[tuple[int, Word]] = []
        opener = node.children[0].type if node.children else ""
        try:
            if node.type == "test_command" and opener == "[[":
                entry.conditional = True
                entry.problem = self.conditional(node, words)
            elif node.type == "test_command":
                if opener != "[":
                    raise Refused(f"unsupported test ({opener})")
                self.flatten(node, _TEST_TOKENS | {"[", "]"}, words, conditional=False)
            else:
                self.declaration(node, words)
        except Refused as refused:
            entry.refusal = str(refused)
            self.refuse_at(entry.start, refused)
            words = [(entry.start, Word(value=self.text(node), static=False, operand=False, single=False))]
        for child in redirects:
            self.attach(entry, self.redirect(child), words, ends)
        entry.words = [w for _, w in sorted(words, key=lambda pair: pair[0])]
        self.add(entry, ends)

    def declaration(self, node: Node, words: list[tuple[int, Word]]) -> None:
        tokens = {"declare", "typeset", "export", "readonly", "local", "unset", "unsetenv"}
        keyword = node.children[0]
        if keyword.is_named or keyword.type not in tokens:
            raise Refused(f"unsupported {node.type}")
        words.append((self.span(keyword)[0], Word(value=keyword.type, static=True, operand=True, single=True)))
        for _, child in self.kids(node, tokens):
            start = self.span(child)[0]
            if child.type == "variable_assignment":
                words.append((start, self.assignment(child)))
            elif child.type == "variable_name" or child.type in _WORDS:
                words.append((start, self.word(child)))
            else:
                raise Refused(f"unsupported {keyword.type} argument ({child.type})")

    def flatten(self, node: Node, tokens: frozenset[str], words: list[tuple[int, Word]], *, conditional: bool) -> None:
        """The words of a test, in source order: operators as literal words, operands unquoted. `[ ]` is a simple
        command, so it ends at a newline; `[[ ]]` may span lines."""
        for _, child in self.kids(node, tokens, inline=not conditional):
            start = self.span(child)[0]
            if child.type in ("unary_expression", "binary_expression", "parenthesized_expression"):
                self.flatten(child, tokens, words, conditional=conditional)
            elif child.type == "test_operator":
                words.append((start, self.word(child)))
            elif child.type == "regex" and conditional:
                words.append((start, self.regex(child)))
            elif child.type in _WORDS:
                words.append((start, self.word(child, pattern=conditional and child.type == "extglob_pattern")))
            else:
                raise Refused(f"unsupported test part ({child.type})")
        for child in node.children:
            if not child.is_named and child.type != "comment":
                value = self.text(child)
                words.append((self.span(child)[0], Word(value=value, static=True, operand=True, single=True)))

    def conditional(self, node: Node, words: list[tuple[int, Word]]) -> str | None:
        """`[[ ]]`: no word splitting or globbing, so expansions cannot turn into operators; but `-v`/`-R` and the
        operands of `-eq`... are evaluated as arithmetic."""
        self.flatten(node, _CONDITIONAL_TOKENS | {"[[", "]]"}, words, conditional=True)
        problem: str | None = None
        stack = [node]
        while stack:
            current = stack.pop()
            stack.extend(current.children)
            if current.type not in ("test_operator", "word") or self.text(current) not in (
                "-v",
                "-R",
                *_ARITHMETIC_TESTS,
            ):
                continue
            operator = self.text(current)
            if operator in ("-v", "-R"):
                problem = problem or f"[[ {operator} ]] evaluates array subscripts, which can run commands"
                continue
            parent = current.parent
            operands = (
                [parent.child_by_field_name("left"), parent.child_by_field_name("right")]
                if parent is not None and parent.type == "binary_expression"
                else [None]
            )
            if any(o is None or not re.fullmatch(_NUMERIC_WORD, self.text(o)) for o in operands):
                problem = problem or (
                    f"[[ {operator} ]] evaluates its operands as arithmetic, where an array subscript can run commands"
                )
        return problem

    def regex(self, node: Node) -> Word:
        """The right side of `=~`: bash expands it, so refuse anything that may expand, and anything that would end
        the word for bash."""
        text = self.text(node)
        for k, ch in enumerate(text):
            if _expands(text, k, len(text)) or ch in _BLANKS or ch in ";&<>\\":
                raise Refused(f"the regular expression {text!r} is too complex to analyse")
        return Word(value=text, static=False, operand=True, single=True)

    def assignment(self, node: Node) -> Word:
        """`NAME=value` / `NAME+=value`: its expansions are analysed; arrays are refused (subscripts are arithmetic)."""
        start, end = self.span(node)
        parts: dict[int, tuple[int, str]] = {}
        for field_name, child in self.kids(node, ("=", "+=")):
            if field_name == "name" and child.type == "variable_name":
                continue
            if field_name == "value" and child.type in _WORDS:
                self.collect(child, parts)
            else:
                raise Refused(f"arrays are not analysed ({child.type} in `{_one_line(self.text(node))}`)")
        return _scan_word(self.source, start, end, parts)

    # -- words

    def word(self, node: Node, *, pattern: bool = False) -> Word:
        """Analyse the expansions inside a word (walking substitutions) and return its unquoted form."""
        start, end = self.span(node)
        parts: dict[int, tuple[int, str]] = {}
        if node.type not in ("variable_name", "test_operator"):
            self.collect(node, parts)
        return _scan_word(self.source, start, end, parts, pattern=pattern)

    def collect(self, node: Node, parts: dict[int, tuple[int, str]]) -> None:
        kind = node.type
        if kind in _EXPANSIONS:
            start, end = self.span(node)
            parts[start] = (end, kind)
            self.expansion(node)
            return
        if kind not in _WORD_PIECES:
            raise Refused(f"unsupported word part ({kind})")
        for child in node.children:
            if child.is_named:
                self.collect(child, parts)

    def expansion(self, node: Node) -> None:
        kind = node.type
        text = self.text(node)
        if kind == "simple_expansion":
            if not re.fullmatch(_SIMPLE_EXPANSION, text):
                raise Refused(f"unsupported expansion {text!r}")
        elif kind == "expansion":
            if not (text.startswith("${") and text.endswith("}")):
                raise Refused(f"unsupported expansion {text!r}")
            _check_parameter(text[2:-1])
        elif kind == "arithmetic_expansion":
            if text.startswith("$((") and text.endswith("))"):
                _check_arithmetic(text[3:-2])
            elif text.startswith("$[") and text.endswith("]"):
                _check_arithmetic(text[2:-1])
            else:
                raise Refused(f"unsupported arithmetic {text!r}")
        else:
            if text.startswith("`") and "\\" in text[1:-1]:
                # Inside backticks, backslashes change what is quoted before the inner command is parsed.
                raise Refused("backslashes inside backticks")
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise Refused("the command is nested too deeply")
            try:
                for _, child in self.kids(node, _TOKENS[kind]):
                    self.statement(child)
            finally:
                self.depth -= 1

    # -- redirections

    def redirect(self, node: Node) -> _Redirect:
        """Analyse one redirection: whether it writes (or reads the network), and the words it carries."""
        if node.type == "heredoc_redirect":
            return self.heredoc(node)
        result = _Redirect(end=self.span(node)[1])
        text = _one_line(self.text(node))
        operators = [c.type for c in node.children if not c.is_named]
        if len(operators) != 1:
            raise Refused(f"unsupported redirection `{text}`")
        operator = operators[0]
        targets: list[tuple[int, Word]] = []
        for field_name, child in self.kids(node, _FILE_REDIRECT_OPERATORS | {"<<<"}):
            if child.type == "file_descriptor" and field_name == "descriptor":
                descriptor_end = self.span(child)[1]
                if not self.text(child).isdigit() or self.source[descriptor_end] not in "<>&":
                    raise Refused(f"unsupported redirection `{text}`")
            elif child.type in _WORDS:
                raw = self.text(child)
                if not targets and operator in ("<&", ">&") and raw.startswith("-") and raw != "-":
                    # `<& -d x` is `<&-` and the arguments `d x` to bash: it splits the dash off.
                    raise Refused(f"bash reads `{text}` as closing a descriptor and an argument")
                targets.append((self.span(child)[0], self.word(child)))
            else:
                raise Refused(f"unsupported redirection `{text}`")
        if operator in (">&-", "<&-"):
            result.words = targets  # `2>&- x`: the close takes no word, so `x` is an argument of the command
            return result
        target = targets[0][1] if targets else None
        result.words = targets[1:]
        if operator in ("<", "<&", "<<<"):
            if operator == "<" and target is not None and target.value.startswith(("/dev/tcp/", "/dev/udp/")):
                result.problem = f"opens a network connection (`{text}`)"
            return result
        if target is None:
            raise Refused(f"unsupported redirection `{text}`")
        if operator == ">&" and target.static and (target.value.isdigit() or target.value == "-"):
            return result  # `2>&1`, `>&2`: duplicates a descriptor
        if target.static and target.value in _SAFE_DEVICES:
            return result
        result.writes = True
        if target.static:
            result.problem = f"writes to {target.value} (`{text}`)"
        else:
            result.problem = f"writes to a file named by an expansion (`{text}`)"
        return result

    def heredoc(self, node: Node) -> _Redirect:
        """A here-document: `<<[-]WORD`, then (tree-sitter's way) the rest of the command line, then the body."""
        result = _Redirect()
        operator = node.children[0].type if node.children else ""
        if operator not in ("<<", "<<-"):
            raise Refused("unsupported here-document")
        delimiter: tuple[str, bool] | None = None
        start_end = body_start = end_node_start = end_node_end = -1
        for field_name, child in self.kids(node, {"<<", "<<-"} | _HEREDOC_CONTINUATIONS):
            child_start, child_end = self.span(child)
            if child.type == "heredoc_start":
                delimiter = _heredoc_delimiter(self.text(child))
                result.end = start_end = child_end
            elif child.type == "heredoc_body":
                body_start = child_start
            elif child.type == "heredoc_end":
                end_node_start, end_node_end = child_start, child_end
            elif body_start >= 0 or delimiter is None:
                raise Refused("unsupported here-document")
            elif field_name == "argument" and child.type in _WORDS:
                result.words.append((child_start, self.word(child)))
                result.end = child_end
            elif child.type in _REDIRECTS:
                inner = self.redirect(child)
                result.problem = result.problem or inner.problem
                result.writes |= inner.writes
                result.words.extend(inner.words)
                result.end = max(result.end, inner.end)
            else:
                self.statement(child)  # the rest of the pipeline or list: `cat <<EOF | grep x`
        if delimiter is None or end_node_start < 0:
            raise Refused("a here-document without its delimiter")
        word, quoted = delimiter
        source = self.source
        region_start = source.rfind("\n", 0, body_start if body_start >= 0 else end_node_start) + 1
        end_line = source.rfind("\n", 0, end_node_start) + 1
        # The body starts on the line after the one holding `<<` (one logical line: no continuation, no newline
        # inside a quoted word), and ends on the first line that is exactly the delimiter.
        head = source[start_end:region_start]
        if head.count("\n") != 1 or not head.endswith("\n") or _escaped(source, region_start - 1):
            raise Refused("a here-document on a command line that spans several lines")
        tabs = "\t" if operator == "<<-" else ""
        lines = source[region_start:end_line].split("\n")[:-1] if end_line > region_start else []
        for line in lines:
            if line.lstrip(tabs).startswith(word):
                raise Refused("a here-document whose body holds a line starting with its delimiter")
            if not quoted and (len(line) - len(line.rstrip("\\"))) % 2 == 1:
                raise Refused("a here-document with a backslash-newline in its body")
        terminator = source[end_line:end_node_end]
        if terminator.lstrip(tabs) != word or source[end_node_end : end_node_end + 1] not in ("", "\n"):
            raise Refused("a here-document whose terminator bash would not recognise")
        body = source[region_start:end_line]
        if not quoted and any(token in body for token in ("`", "$(", "${", "$[")):
            raise Refused("a here-document whose body contains substitutions")
        if self.stub_from is not None and (body or end_line < self.stub_from):
            raise Refused("a here-document body in a single command's text")
        for other_start, other_end in self.heredoc_spans:
            if other_start < end_node_end and self.at(node.start_byte) < other_end:
                raise Refused("several here-documents on one line")
        self.heredoc_spans.append((self.at(node.start_byte), end_node_end))
        return result

    # -- compound commands

    def arithmetic_command(self, node: Node) -> None:
        """`(( expr ))`: a test, or an assignment; see `_check_arithmetic`."""
        start, end = self.span(node)
        text = self.source[start:end]
        if not (text.startswith("((") and text.endswith("))")):
            raise Refused("unsupported arithmetic command")
        _check_arithmetic(text[2:-2])

    def for_loop(self, node: Node) -> None:
        for field_name, child in self.kids(node, _SEPARATORS | {"for", "select", "in"}):
            if field_name == "variable" and child.type == "variable_name":
                name = self.text(child)
                # The loop variable is assigned in the current shell: `for PATH in /tmp/evil; do ls; done` runs
                # /tmp/evil/ls. Lower-case names are not environment variables by convention, except proxy settings.
                if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or name.endswith("_proxy"):
                    raise Refused(f"the for loop assigns ${name}, which may be an environment variable")
            elif field_name == "body":
                self.statement(child)
            elif field_name == "value" and child.type in _WORDS:
                try:
                    self.word(child)
                except Refused as refused:
                    self.refuse_at(self.span(child)[0], refused)
            else:
                raise Refused(f"unsupported for loop part ({child.type})")

    def c_style_for(self, node: Node) -> None:
        children = node.children
        open_index = next((k for k, c in enumerate(children) if c.type == "(("), -1)
        close_index = next((k for k, c in enumerate(children) if c.type == "))"), -1)
        body = node.child_by_field_name("body")
        if open_index != 1 or close_index < open_index or body is None or children[0].type != "for":
            raise Refused("unsupported for loop")
        if any(self.text(children[k]) != children[k].type for k in (0, open_index, close_index)):
            raise Refused("the parser skipped part of the command")
        end = self.span(node)[1]
        open_end = self.span(children[open_index])[1]
        close_start, close_end = self.span(children[close_index])
        body_start, body_end = self.span(body)
        self.gap(self.span(children[0])[1], self.span(children[open_index])[0], check_touch=False)
        if self.source[close_end:body_start].replace(";", " ").strip(_BLANKS) or body_end != end:
            raise Refused("the parser skipped part of the command")
        for expression in self.source[open_end:close_start].split(";"):
            _check_arithmetic(expression)
        self.statement(body)

    def case(self, node: Node) -> None:
        for field_name, child in self.kids(node, _SEPARATORS | {"case", "in", "esac"}):
            if field_name == "value" and child.type in _WORDS:
                self.word(child)
            elif child.type == "case_item":
                for item_field, part in self.kids(child, _SEPARATORS | {"(", ")", "|", ";;", ";&", ";;&"}):
                    if item_field == "value" and part.type in _WORDS:
                        self.word(part, pattern=part.type == "extglob_pattern")
                    else:
                        self.statement(part)
            else:
                raise Refused(f"unsupported case part ({child.type})")

    def function(self, node: Node) -> None:
        start = self.span(node)[0]
        name = "?"
        for field_name, child in self.kids(node, {"function", "(", ")"}):
            if field_name == "name":
                name = self.text(child)
            elif field_name == "body":
                self.statement(child)
            elif field_name == "redirect" and child.type in _REDIRECTS:
                redirect = self.redirect(child)
                self.result.writes |= redirect.writes
                if redirect.words:
                    raise Refused("words after the redirection of a function")
            else:
                raise Refused(f"unsupported function part ({child.type})")
        self.result.problems.append((start, f"defines the shell function {name}"))


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


# --------------------------------------------------------------------------------------------------------------------
# Entry point


def _error_near(node: Node) -> str:
    """Describe the first ERROR or MISSING node for the reason."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            snippet = _one_line(current.text.decode(errors="replace") if current.text else "", 40)
            return f"near `{snippet}`" if snippet else "(something is missing)"
        stack.extend(reversed([c for c in current.children if c.has_error or c.is_missing]))
    return ""


def _stub_delimiters(node: Node) -> list[str]:
    """The delimiters of the here-documents in an error tree, to complete a command's text with empty bodies."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "heredoc_start" and current.text is not None:
            found.append(_heredoc_delimiter(current.text.decode())[0])
        stack.extend(reversed(current.children))
    return found


_SINGLE = frozenset(
    {"command", "test_command", "declaration_command", "unset_command", "variable_assignment", "variable_assignments"}
)


def _single(node: Node) -> bool:
    """Whether a top-level statement is one simple command (with its redirections)."""
    while node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is None:
            return True
        node = body
    return node.type in _SINGLE


def read(command: str, *, stub_heredocs: bool = False) -> Syntax:
    """Parse and walk `command`; raise `Refused` for anything we will not analyse at all.

    `stub_heredocs` accepts here-document redirections without their bodies, as in a `SimpleCommand.text`: the text
    is completed with the terminators, and any body is refused."""
    data = command.encode("utf-8", errors="surrogatepass")
    tree = _parse(data)
    stub_from: int | None = None
    if tree.root_node.has_error and stub_heredocs and "<<" in command:
        delimiters = _stub_delimiters(tree.root_node)
        if delimiters:
            stub_from = len(command)
            command = command + "\n" + "\n".join(delimiters) + "\n"
            data = command.encode("utf-8", errors="surrogatepass")
            tree = _parse(data)
    root = tree.root_node
    if root.has_error:
        raise Refused(f"could not parse the command {_error_near(root)}".rstrip())
    walker = _Walker(command, data, stub_from)
    try:
        for _, child in walker.kids(root, _TOKENS["program"], bounds=(0, len(command))):
            before = len(walker.result.entries)
            walker.statement(child)
            child_start = walker.span(child)[0]
            own = [e for e in walker.result.entries[before:] if e.start == child_start]
            walker.result.top.append(own[0] if own and _single(child) else child.type)
    except RecursionError:
        raise Refused("the command is nested too deeply") from None
    return walker.result
