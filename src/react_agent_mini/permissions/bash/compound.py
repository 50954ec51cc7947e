"""What the parts of tests (`[ ]`, `[[ ]]`), declarations, arithmetic commands and loops mean to bash, judged once
the walker (`syntax.py`) has reached them: `[[ ]]`'s operators that evaluate arithmetic (and which operands they
evaluate as code), the right side of `=~`, `(( ))`, a for loop's variable, a C-style `for`'s header. The walking
itself (bodies, words, `case` and function definitions) is the walker's; these functions call nothing of it back."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .tree import _ARITHMETIC_TESTS, Walk
from .words import _BLANKS, _NUMERIC_WORD, Refused, Word, _check_arithmetic, _expands

if TYPE_CHECKING:
    from tree_sitter import Node

DECLARATIONS = frozenset({"declare", "typeset", "export", "readonly", "local", "unset", "unsetenv"})
"""The keywords of a `declaration_command` or `unset_command`."""


def declaration_keyword(node: Node) -> Node:
    """`export`/`declare`/`local`/`readonly`/`typeset`/`unset`: the keyword a declaration starts with."""
    keyword = node.children[0]
    if keyword.is_named or keyword.type not in DECLARATIONS:
        raise Refused(f"unsupported {node.type}")
    return keyword


def operator_words(walk: Walk, node: Node) -> list[tuple[int, Word]]:
    """The operators of a test node (its anonymous children), as literal words with their positions."""
    return [
        (walk.span(child)[0], Word(value=walk.text(child), static=True, operand=True, single=True))
        for child in node.children
        if not child.is_named and child.type != "comment"
    ]


def conditional_problem(walk: Walk, node: Node) -> str | None:
    """`[[ ]]`: no word splitting or globbing, so expansions cannot turn into operators; but `-v`/`-R` and the
    operands of `-eq`... are evaluated as arithmetic."""
    problem: str | None = None
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(current.children)
        if current.type not in ("test_operator", "word") or walk.text(current) not in (
            "-v",
            "-R",
            *_ARITHMETIC_TESTS,
        ):
            continue
        operator = walk.text(current)
        if operator in ("-v", "-R"):
            problem = problem or f"[[ {operator} ]] evaluates array subscripts, which can run commands"
            continue
        parent = current.parent
        operands = (
            [parent.child_by_field_name("left"), parent.child_by_field_name("right")]
            if parent is not None and parent.type == "binary_expression"
            else [None]
        )
        if any(o is None or not re.fullmatch(_NUMERIC_WORD, walk.text(o)) for o in operands):
            problem = problem or (
                f"[[ {operator} ]] evaluates its operands as arithmetic, where an array subscript can run commands"
            )
    return problem


def evaluated_operands(walk: Walk, node: Node) -> dict[int, str]:
    """`[[ ]]`: where bash evaluates an operand as code, by the operand's start: `var` for the name `-v` looks up
    (its subscript is arithmetic), `arith` for an operand of `-eq`... other than a literal number (a name's value is
    evaluated in turn). `evaluated.py` judges the words; `-R` looks its name up without evaluating it."""
    found: dict[int, str] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(current.children)
        if current.type not in ("test_operator", "word"):
            continue
        operator = walk.text(current)
        parent = current.parent
        if operator == "-v" and parent is not None and parent.type == "unary_expression":
            operand = current.next_named_sibling
            if operand is not None:
                found[walk.span(operand)[0]] = "var"
        elif operator in _ARITHMETIC_TESTS and parent is not None and parent.type == "binary_expression":
            for side in ("left", "right"):
                operand = parent.child_by_field_name(side)
                if operand is not None and not re.fullmatch(_NUMERIC_WORD, walk.text(operand)):
                    found[walk.span(operand)[0]] = "arith"
    return found


def regex(walk: Walk, node: Node) -> Word:
    """The right side of `=~`: bash expands it, so refuse anything that may expand, and anything that would end
    the word for bash."""
    text = walk.text(node)
    for k, ch in enumerate(text):
        if _expands(text, k, len(text)) or ch in _BLANKS or ch in ";&<>\\":
            raise Refused(f"the regular expression {text!r} is too complex to analyse")
    return Word(value=text, static=False, operand=True, single=True)


def arithmetic_command(walk: Walk, node: Node) -> None:
    """`(( expr ))`: a test, or an assignment; see `_check_arithmetic`."""
    start, end = walk.span(node)
    text = walk.source[start:end]
    if not (text.startswith("((") and text.endswith("))")):
        raise Refused("unsupported arithmetic command")
    _check_arithmetic(text[2:-2])


def loop_variable(name: str) -> None:
    """The loop variable is assigned in the current shell: `for PATH in /tmp/evil; do ls; done` runs /tmp/evil/ls.
    Lower-case names are not environment variables by convention, except proxy settings."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or name.endswith("_proxy"):
        raise Refused(f"the for loop assigns ${name}, which may be an environment variable")


def c_style_for_body(walk: Walk, node: Node) -> Node:
    """`for (( init; test; step )) body`: the header checked as arithmetic; the body, for the walker."""
    children = node.children
    open_index = next((k for k, c in enumerate(children) if c.type == "(("), -1)
    close_index = next((k for k, c in enumerate(children) if c.type == "))"), -1)
    body = node.child_by_field_name("body")
    if open_index != 1 or close_index < open_index or body is None or children[0].type != "for":
        raise Refused("unsupported for loop")
    if any(walk.text(children[k]) != children[k].type for k in (0, open_index, close_index)):
        raise Refused("the parser skipped part of the command")
    end = walk.span(node)[1]
    open_end = walk.span(children[open_index])[1]
    close_start, close_end = walk.span(children[close_index])
    body_start, body_end = walk.span(body)
    walk.gap(walk.span(children[0])[1], walk.span(children[open_index])[0], check_touch=False)
    if walk.source[close_end:body_start].replace(";", " ").strip(_BLANKS) or body_end != end:
        raise Refused("the parser skipped part of the command")
    for expression in walk.source[open_end:close_start].split(";"):
        _check_arithmetic(expression)
    return body
