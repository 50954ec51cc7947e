"""Parse a command line with tree-sitter-bash and reduce it to what the permission check judges: every simple
command in source order (including those in substitutions, compound commands, function bodies and `[ ]` / `[[ ]]`
tests) with its words unquoted, the problems found outside simple commands (compound redirections, function
definitions), whether any redirection writes, and the refusals: what we will not analyse, which makes the whole line
`parsed=False`. `tree.py` says why the tree is checked against bash's own rules, and how.

The walk is all here: every step that can lead to another statement (a substitution in a word or in a redirection's
target, a loop body, the command a here-document's line goes on with), so that it never leaves this file to come
back to it. Below it, called and never calling back: `redirects.py` judges redirections and here-document bodies,
`compound.py` the parts of tests, declarations, arithmetic and loops, `tree.py` parses and holds the positions and
the checked children of a node, `words.py` reads one word.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import compound
from .evaluated import arithmetic_runs, variable_runs
from .redirects import check_heredoc, file_redirect, heredoc_operator, is_redirect_word, redirect_operator
from .tree import (
    _CONDITIONAL_TOKENS,
    _EXPANSIONS,
    _FILE_REDIRECT_OPERATORS,
    _HEREDOC_CONTINUATIONS,
    _REDIRECTS,
    _SEPARATORS,
    _TEST_TOKENS,
    _TOKENS,
    _WORD_PIECES,
    _WORDS,
    MAX_DEPTH,
    Entry,
    Redirect,
    Syntax,
    Walk,
    _error_near,
    _parse,
    _stub_delimiters,
)
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


class _Walker(Walk):
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
            compound.arithmetic_command(self, node)
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

    # -- redirections

    def redirect(self, node: Node) -> Redirect:
        """Analyse one redirection: whether it writes (or reads the network), and the words it carries."""
        if node.type == "heredoc_redirect":
            return self.heredoc(node)
        operator, text = redirect_operator(self, node)
        targets: list[tuple[int, Word]] = []
        for field_name, child in self.kids(node, _FILE_REDIRECT_OPERATORS | {"<<<"}):
            if is_redirect_word(self, child, field_name, operator, text, first=not targets):
                targets.append((self.span(child)[0], self.word(child)))
        return file_redirect(self.span(node)[1], operator, text, targets)

    def heredoc(self, node: Node) -> Redirect:
        """A here-document: `<<[-]WORD`, then (tree-sitter's way) the rest of the command line, then the body."""
        result = Redirect()
        operator = heredoc_operator(node)
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
                result.targets.extend(inner.targets)
                result.end = max(result.end, inner.end)
            else:
                self.statement(child)  # the rest of the pipeline or list: `cat <<EOF | grep x`
        check_heredoc(
            self,
            node,
            operator,
            delimiter,
            start_end=start_end,
            body_start=body_start,
            end_node=(end_node_start, end_node_end),
        )
        return result

    # -- tests and declarations

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
                self.flatten(node, _CONDITIONAL_TOKENS | {"[[", "]]"}, words, conditional=True)
                entry.problem = compound.conditional_problem(self, node)
                judged = compound.evaluated_operands(self, node)
                entry.evaluated = [
                    word
                    for start, word in words
                    if (judged.get(start) == "var" and variable_runs(word))
                    or (judged.get(start) == "arith" and arithmetic_runs(word))
                ]
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
        keyword = compound.declaration_keyword(node)
        words.append((self.span(keyword)[0], Word(value=keyword.type, static=True, operand=True, single=True)))
        for _, child in self.kids(node, compound.DECLARATIONS):
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
                words.append((start, compound.regex(self, child)))
            elif child.type in _WORDS:
                words.append((start, self.word(child, pattern=conditional and child.type == "extglob_pattern")))
            else:
                raise Refused(f"unsupported test part ({child.type})")
        words.extend(compound.operator_words(self, node))

    # -- compound commands

    def for_loop(self, node: Node) -> None:
        for field_name, child in self.kids(node, _SEPARATORS | {"for", "select", "in"}):
            if field_name == "variable" and child.type == "variable_name":
                compound.loop_variable(self.text(child))
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
        self.statement(compound.c_style_for_body(self, node))

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
                self.result.targets.extend(redirect.targets)  # `f() { ...; } > f`: when it is called
            else:
                raise Refused(f"unsupported function part ({child.type})")
        self.result.problems.append((start, f"defines the shell function {name}"))

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
