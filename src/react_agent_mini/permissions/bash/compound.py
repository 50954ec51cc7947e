"""Everything besides plain simple commands: tests (`[ ]`, `[[ ]]`), declarations, arithmetic commands, loops,
`case` and function definitions."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .tree import _ARITHMETIC_TESTS, _CONDITIONAL_TOKENS, _REDIRECTS, _SEPARATORS, _TEST_TOKENS, _WORDS, Entry, Walk
from .words import _BLANKS, _NUMERIC_WORD, Refused, Word, _check_arithmetic, _expands

if TYPE_CHECKING:
    from tree_sitter import Node


class Compound(Walk):
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
                self.result.targets.extend(redirect.targets)  # `f() { ...; } > f`: when it is called
            else:
                raise Refused(f"unsupported function part ({child.type})")
        self.result.problems.append((start, f"defines the shell function {name}"))
