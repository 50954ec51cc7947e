"""How a command line is parsed (tree-sitter-bash) and why the tree is checked against bash's own rules; the base
of the walker (`syntax.py`) that reduces the tree to what the permission check judges.

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

Arithmetic (`$(( ))`, `$[ ]`, `(( ))`, C-style `for`) is only accepted on literal numbers and `$#` `$?` `$$` `$!`
`${#name}`: bash evaluates a variable's value as an expression, and an array subscript in it (`a[$(rm x)]`, from a
file name a loop picked up) runs commands. The other words bash evaluates so (`[[ -eq ]]` and `[[ -v ]]` operands,
`let`, the variables `read`, `declare`, `printf -v` assign) parse, and count as code only known when it runs
(`evaluated.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from .words import _BLANKS, _DELIMITERS, _WORDISH_TOKEN, Refused, Word, _heredoc_delimiter, _one_line

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

__all__ = ["MAX_DEPTH", "Entry", "Refused", "Syntax", "Walk"]

MAX_DEPTH = 64
"""Deeper nesting of statements and substitutions is refused."""


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


# --------------------------------------------------------------------------------------------------------------------
# Results


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
    targets: list[Word] = []
    """The files its redirections read or write, in source order."""
    evaluated: list[Word] = []
    """`[[ ]]`: the operands bash evaluates as code (`evaluated.py`: `[[ 'a[$(...)]' -eq 0 ]]`, `[[ -v 'a[...]' ]]`)."""


class Syntax(msgspec.Struct):
    entries: list[Entry] = []
    problems: list[tuple[int, str]] = []
    """Problems outside any simple command: a redirection of a compound command, a function definition."""
    refusals: list[tuple[int, str]] = []
    writes: bool = False
    top: list[Entry | str] = []
    """The top-level statements: their entry, or their node type when they are not one simple command."""
    targets: list[Word] = []
    """Files read or written by redirections of compound commands and functions (`{ ...; } > f`)."""


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


class Redirect(msgspec.Struct):
    problem: str | None = None
    writes: bool = False
    words: list[tuple[int, Word]] = []
    """Words bash gives the command although tree-sitter put them in the redirection (`ls > f x`, `cat <<EOF -n`)."""
    end: int = 0
    """Where the redirection's own text ends (before any here-document body or continuation)."""
    targets: list[Word] = []
    """The files it reads (`<`) or writes (`>`, `>>`, `&>`, `>|`, `>&file`); none for descriptors and here-documents."""


class Walk:
    """Positions, the checked list of a node's children, and the result being built; `syntax._Walker` walks."""

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

    def refuse_at(self, position: int, refused: Refused) -> None:
        self.result.refusals.append((position, str(refused)))
