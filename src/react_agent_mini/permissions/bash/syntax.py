"""Parse a command line with tree-sitter-bash and reduce it to what the permission check judges: every simple
command in source order (including those in substitutions, compound commands, function bodies and `[ ]` / `[[ ]]`
tests) with its words unquoted, the problems found outside simple commands (compound redirections, function
definitions), whether any redirection writes, and the refusals: what we will not analyse, which makes the whole line
`parsed=False`. `tree.py` says why the tree is checked against bash's own rules, and how.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .compound import Compound
from .redirects import Redirections
from .tree import _EXPANSIONS, _REDIRECTS, _TOKENS, _WORD_PIECES, _WORDS, MAX_DEPTH, Entry, Redirect, Syntax, _parse
from .words import (
    _SIMPLE_EXPANSION,
    Refused,
    Word,
    _check_arithmetic,
    _check_parameter,
    _heredoc_delimiter,
    _one_line,
    scan_word,
)

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Entry", "Refused", "Syntax", "Word", "_parse", "read"]


class _Walker(Redirections, Compound):
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

    def attach(self, entry: Entry, redirect: Redirect, words: list[tuple[int, Word]], ends: list[int]) -> None:
        if redirect.problem:
            entry.redirect_problems.append(redirect.problem)
        self.result.writes |= redirect.writes
        words.extend(redirect.words)
        entry.targets.extend(redirect.targets)
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
                    self.result.targets.extend(redirect.targets)  # `while read l; do ...; done < f`
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
        return scan_word(self.source, start, end, parts)

    # -- words

    def word(self, node: Node, *, pattern: bool = False) -> Word:
        """Analyse the expansions inside a word (walking substitutions) and return its unquoted form."""
        start, end = self.span(node)
        parts: dict[int, tuple[int, str]] = {}
        if node.type not in ("variable_name", "test_operator"):
            self.collect(node, parts)
        return scan_word(self.source, start, end, parts, pattern=pattern)

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
