"""Redirections and here-documents, judged: whether a redirection writes (or opens the network), which words
tree-sitter hangs on it are really the command's arguments, the file it names, and here-document bodies checked
line by line against bash's rules.

The walker (`syntax.py`) goes through a redirection's parts, analyses its words and walks what a here-document's
line goes on with (`cat <<EOF | grep x`); these functions judge each part and the whole, and call nothing of the
walker back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tree import _SAFE_DEVICES, _WORDS, Redirect, Walk
from .words import Refused, Word, _escaped, _one_line

if TYPE_CHECKING:
    from tree_sitter import Node


def redirect_operator(walk: Walk, node: Node) -> tuple[str, str]:
    """A file or here-string redirection's one operator, and its text on one line (for the messages)."""
    text = _one_line(walk.text(node))
    operators = [c.type for c in node.children if not c.is_named]
    if len(operators) != 1:
        raise Refused(f"unsupported redirection `{text}`")
    return operators[0], text


def is_redirect_word(walk: Walk, child: Node, field_name: str | None, operator: str, text: str, *, first: bool) -> bool:
    """Whether one part of a redirection is a word (its target, or one of the command's arguments: the walker
    analyses it) rather than its descriptor (`2>`); `first`: no word came before it. Anything else is refused."""
    if child.type == "file_descriptor" and field_name == "descriptor":
        descriptor_end = walk.span(child)[1]
        if not walk.text(child).isdigit() or walk.source[descriptor_end] not in "<>&":
            raise Refused(f"unsupported redirection `{text}`")
        return False
    if child.type in _WORDS:
        raw = walk.text(child)
        if first and operator in ("<&", ">&") and raw.startswith("-") and raw != "-":
            # `<& -d x` is `<&-` and the arguments `d x` to bash: it splits the dash off.
            raise Refused(f"bash reads `{text}` as closing a descriptor and an argument")
        return True
    raise Refused(f"unsupported redirection `{text}`")


def file_redirect(end: int, operator: str, text: str, targets: list[tuple[int, Word]]) -> Redirect:
    """What a file or here-string redirection does: whether it writes (or reads the network), and the words it
    carries (`targets`: its words, analysed, in source order; `end`: where its text ends)."""
    result = Redirect(end=end)
    if operator in (">&-", "<&-"):
        result.words = targets  # `2>&- x`: the close takes no word, so `x` is an argument of the command
        return result
    target = targets[0][1] if targets else None
    result.words = targets[1:]
    if operator == "<":
        result.targets = [target] if target is not None else []  # a file it reads
    if operator in ("<", "<&", "<<<"):
        if operator == "<" and target is not None and target.value.startswith(("/dev/tcp/", "/dev/udp/")):
            result.problem = f"opens a network connection (`{text}`)"
        return result
    if target is None:
        raise Refused(f"unsupported redirection `{text}`")
    if operator == ">&" and target.static and (target.value.isdigit() or target.value == "-"):
        return result  # `2>&1`, `>&2`: duplicates a descriptor
    result.targets = [target]  # a file it writes
    if target.static and target.value in _SAFE_DEVICES:
        return result
    result.writes = True
    if target.static:
        result.problem = f"writes to {target.value} (`{text}`)"
    else:
        result.problem = f"writes to a file named by an expansion (`{text}`)"
    return result


def heredoc_operator(node: Node) -> str:
    """A here-document's `<<` or `<<-`."""
    operator = node.children[0].type if node.children else ""
    if operator not in ("<<", "<<-"):
        raise Refused("unsupported here-document")
    return operator


def check_heredoc(
    walk: Walk,
    node: Node,
    operator: str,
    delimiter: tuple[str, bool] | None,
    *,
    start_end: int,
    body_start: int,
    end_node: tuple[int, int],
) -> None:
    """A here-document's body against bash's rules, once the walker went through its parts: `delimiter` (the word,
    whether it was quoted) from its `heredoc_start`, which ends at `start_end`; where its `heredoc_body` starts
    (-1: none) and its `heredoc_end` spans (-1s: none). Refuses what bash would read otherwise."""
    end_node_start, end_node_end = end_node
    if delimiter is None or end_node_start < 0:
        raise Refused("a here-document without its delimiter")
    word, quoted = delimiter
    source = walk.source
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
    if walk.stub_from is not None and (body or end_line < walk.stub_from):
        raise Refused("a here-document body in a single command's text")
    for other_start, other_end in walk.heredoc_spans:
        if other_start < end_node_end and walk.at(node.start_byte) < other_end:
            raise Refused("several here-documents on one line")
    walk.heredoc_spans.append((walk.at(node.start_byte), end_node_end))
