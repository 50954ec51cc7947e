"""Grep's search: one ripgrep run for a search, and its output read into what each output mode needs.

* files_with_matches: the matching paths (`--files-with-matches`, each path followed by a NUL);
* count: `(path, n)` from `--count`;
* content: per file, rg's `--heading --line-number` body (`N:text` matches, `N-text` context, `--` between
  non-adjacent groups), kept as a slice of rg's whole output.

rg prints files in whatever order its threads finish; ordering and paging are the renderer's (grep_render.py).
What rg refuses (a regex it cannot parse, an unknown file type) comes back as the text the model reads.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec

from ..paths import display, resolve
from .ripgrep import not_started, run_rg

Mode = Literal["files_with_matches", "content", "count"]
NEWLINE_NOT_ALLOWED = 'the literal "\\n" is not allowed in a regex'
"""rg's words for a `\\n` in a pattern without multiline."""


class SearchSpec(NamedTuple):
    """One search, decided from the tool's arguments."""

    root: Path
    """The workspace root (resolved): paths are shown relative to it."""
    target: Path
    """The file or directory searched."""
    pattern: str
    mode: Mode
    ignore_case: bool
    multiline: bool
    before: int
    after: int
    globs: list[str]
    types: list[str]


class Found(msgspec.Struct):
    """What a search found, before sorting and paging (only the list for its mode is filled).

    Paths stay bytes (as rg prints them; they sort like their text) and are decoded only when shown. Content
    blocks point into one buffer, rg's whole output, so the megabytes of a broad search are never copied."""

    files: list[bytes] = msgspec.field(default_factory=list)
    counts: list[tuple[bytes, int]] = msgspec.field(default_factory=list)
    blocks: list[tuple[bytes, bytes, int, int]] = msgspec.field(default_factory=list)
    """Content mode: (path, buffer, start, end): the file's body is `buffer[start:end]`."""
    entries: int = 0
    """Content mode: the lines in all bodies, `--` separators excluded."""
    truncated: bool = False
    """rg's output passed its ceiling and was cut: totals are incomplete."""

    def without_denied(self, root: Path, denied: Callable[[Path], bool]) -> Found:
        """These findings minus files the permission rules forbid reading."""

        def hidden(raw: bytes) -> bool:
            return denied(resolve(root, os.fsdecode(raw)))

        blocks = [b for b in self.blocks if not hidden(b[0])]
        entries = self.entries
        if len(blocks) != len(self.blocks):  # recount the lines left, `--` separators excluded
            entries = sum(
                sum(1 for line in buffer[start:end].splitlines() if line != b"--") for _, buffer, start, end in blocks
            )
        return Found(
            files=[f for f in self.files if not hidden(f)],
            counts=[c for c in self.counts if not hidden(c[0])],
            blocks=blocks,
            entries=entries,
            truncated=self.truncated,
        )


def invalid_regex(pattern: str, reason: str) -> str:
    """The model-facing text for a pattern rg (or the tool) refuses."""
    text = f"Invalid regex {pattern}: {reason}"
    if reason == NEWLINE_NOT_ALLOWED:
        text += ". Set multiline: true to match across lines."
    return text


def unknown_type(name: str) -> str:
    """The model-facing text for a `type` rg does not know."""
    return (
        f'Unknown file type "{name}". Use glob instead (e.g. "*.{name}"), or a known type such as py, js, ts, '
        "rust, go, java, c, cpp, md, json."
    )


async def search(rg: str, spec: SearchSpec) -> Found | str:
    """rg's findings for `spec`, or the model-facing text of why there are none (rg refused, or did not start)."""
    paths = [] if spec.target == spec.root else [display(spec.root, spec.target)]
    try:
        result = await run_rg(rg, rg_options(spec), paths, spec.root)
    except OSError as exc:
        return not_started("Grep", rg, exc)
    if result.returncode == 2 and result.stderr.strip():
        return failure_text(spec, result.stderr)
    return await asyncio.to_thread(parse_rg_output, spec, result.stdout, result.truncated)


def rg_options(spec: SearchSpec) -> list[str]:
    """rg's options for `spec` (besides ripgrep.COMMON_ARGS)."""
    options = ["--with-filename", "--ignore-case" if spec.ignore_case else "--case-sensitive"]
    if spec.multiline:
        options += ["--multiline", "--multiline-dotall"]
    if spec.mode == "files_with_matches":
        options.append("--files-with-matches")
    elif spec.mode == "count":
        options.append("--count")
    else:
        options += ["--heading", "--line-number", f"--before-context={spec.before}", f"--after-context={spec.after}"]
    options += [f"--type={t}" for t in spec.types]
    options += [f"--glob={g}" for g in spec.globs]
    options.append(f"--regexp={spec.pattern}")
    return options


def failure_text(spec: SearchSpec, stderr: str) -> str:
    """rg's complaint as model-facing text."""
    if "regex parse error" in stderr:
        reasons = [line[len("error:") :].strip() for line in stderr.splitlines() if line.startswith("error:")]
        return invalid_regex(spec.pattern, reasons[-1] if reasons else stderr.strip().splitlines()[-1])
    if NEWLINE_NOT_ALLOWED in stderr:
        return invalid_regex(spec.pattern, NEWLINE_NOT_ALLOWED)
    if "unrecognized file type" in stderr:
        return unknown_type(stderr.rsplit(":", 1)[-1].strip())
    return "Grep failed: " + " ".join(stderr.replace("rg: ", "").split())


def parse_rg_output(spec: SearchSpec, stdout: bytes, truncated: bool) -> Found:
    """rg's output for `spec` as findings; when `truncated`, the record cut in the middle is dropped."""
    found = Found(truncated=truncated)
    if truncated:
        if spec.mode == "files_with_matches":
            stdout = stdout[: stdout.rfind(b"\0") + 1]
        elif spec.mode == "count" or (cut := stdout.rfind(b"\n\n")) < 0:
            stdout = stdout[: stdout.rfind(b"\n") + 1]
        else:
            stdout = stdout[: cut + 1]
    if spec.mode == "files_with_matches":
        found.files.extend(p for p in stdout.split(b"\0") if p)
    elif spec.mode == "count":
        for line in stdout.splitlines():
            path, _, number = line.rpartition(b"\0")
            if path:
                found.counts.append((path, int(number)))
    else:
        # `path\0body` per file, files separated by a blank line; a NUL only ever follows a path (binary files are
        # skipped), so the NULs locate the files and the blank line before each path ends the previous body.
        end_of_output = len(stdout) - 1 if stdout.endswith(b"\n") else len(stdout)
        starts: list[tuple[int, int]] = []
        nul = stdout.find(b"\0")
        while nul >= 0:
            starts.append((stdout.rfind(b"\n", 0, nul) + 1, nul))
            nul = stdout.find(b"\0", nul + 1)
        for i, (start, nul) in enumerate(starts):
            end = starts[i + 1][0] - 2 if i + 1 < len(starts) else end_of_output
            found.blocks.append((stdout[start:nul], stdout, nul + 1, end))
        # Every line of every body: the newlines inside bodies (all but the two per gap between files), plus one
        # per body for its last line; less the `--` lines.
        if found.blocks:
            inner = stdout.count(b"\n", 0, end_of_output) - 2 * (len(found.blocks) - 1)
            separators = stdout.count(b"\n--\n") if spec.before or spec.after else 0  # `--` only comes with context
            found.entries = inner + len(found.blocks) - separators
    return found
