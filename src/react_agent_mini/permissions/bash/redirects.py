"""Redirections and here-documents: whether a redirection writes (or opens the network), the words tree-sitter
hangs on it that are really the command's arguments, the file it names, and here-document bodies checked line by
line against bash's rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tree import _FILE_REDIRECT_OPERATORS, _HEREDOC_CONTINUATIONS, _REDIRECTS, _SAFE_DEVICES, _WORDS, Redirect, Walk
from .words import Refused, Word, _escaped, _heredoc_delimiter, _one_line

if TYPE_CHECKING:
    from tree_sitter import Node


class Redirections(Walk):
    # -- redirections

    def redirect(self, node: Node) -> Redirect:
        """Analyse one redirection: whether it writes (or reads the network), and the words it carries."""
        if node.type == "heredoc_redirect":
            return self.heredoc(node)
        result = Redirect(end=self.span(node)[1])
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

    def heredoc(self, node: Node) -> Redirect:
        """A here-document: `<<[-]WORD`, then (tree-sitter's way) the rest of the command line, then the body."""
        result = Redirect()
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
                result.targets.extend(inner.targets)
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
