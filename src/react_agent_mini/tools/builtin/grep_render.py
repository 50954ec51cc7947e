"""Grep's findings as the model reads them: ordered, paged and cut to size.

Matching files are shown newest first; counts and content lines by path (rg's own order is whatever its threads
finish in, so sorting here is what makes results, and `offset` paging, stable). A page holds at most `head_limit`
entries and MAX_OUTPUT_CHARS characters, and a note says where it sits in the whole and how to get the next one.
The page comes with its data (`search_result.SearchResult`: how many lines are the listing, which of them are `--`
separators, its first entry, the total, an early stop), for what reads the result later (compaction).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import msgspec

from ...search_result import SearchResult
from .grep_search import Found, SearchSpec
from .newest import dated

MAX_LINE_CHARS = 500
"""Longer lines are cut (minified code would otherwise flood the context)."""
MAX_OUTPUT_CHARS = 100_000
"""Whatever head_limit says, a page stops growing here; the paging note tells where to continue."""


def render(spec: SearchSpec, found: Found, offset: int, limit: int, numbers: bool) -> tuple[str, SearchResult]:
    """The page of `found` starting at `offset`, at most `limit` entries (0: no limit), with its notes; and its
    data."""
    separators: list[int] = []
    if spec.mode == "content":
        lines, shown = _render_content(spec, found, offset, limit, numbers, separators)
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
    page = SearchResult(len(lines), total, offset, tuple(separators), found.truncated, spec.mode)
    if total == 0:
        text = f"No matches for {spec.pattern}."
        page = msgspec.structs.replace(page, lines=0)
    else:
        note = _page_note(offset, shown, total)
        text = "\n".join([*lines, note] if note else lines)
    if found.truncated:
        text += (
            "\n[The search produced too much output and was stopped early: totals are incomplete. "
            "Narrow the pattern, path, glob or type.]"
        )
    return _clean(text), page


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


def _render_content(
    spec: SearchSpec, found: Found, offset: int, limit: int, numbers: bool, separators: list[int]
) -> tuple[list[str], int]:
    """Lines of the requested page and the number of entries shown (context lines are entries; `--` are not, and
    where each of those went is added to `separators`)."""
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
                separators.append(len(out))
                out.append("--")
                gap = False
            out.append(line)
            budget -= len(line) + 1
            shown += 1
    return out, shown
