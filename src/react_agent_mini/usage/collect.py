"""Every saved session's calls, grouped: one tally per day, project, model or session, within `--since`/`--until`.

Files are read one at a time and only their tallies are kept, so memory stays flat however many sessions there
are. What could not be read costs one warning per file; sessions saved before calls were recorded are counted
apart (they have messages but no call record), so a total is never silently short.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .scan import read_usage
from .totals import By, LocalDay, Tally, total_of
from .transcripts import TranscriptFile, find_transcripts


class Collected(msgspec.Struct):
    """The rows of a report, and what the reader should know about them."""

    by: By
    rows: dict[str, Tally]
    """Key (a day, a project's folder name, a model, a session id) → its calls."""
    projects: dict[str, str]
    """A project's folder name → its workspace path (as the sessions recorded it)."""
    files: int = 0
    unrecorded: int = 0
    """Sessions with messages but no call record (saved before ram recorded its calls)."""
    warnings: list[str] = msgspec.field(default_factory=list)

    def total(self) -> Tally:
        return total_of(self.rows.values())

    def project_of(self, slug: str) -> str:
        return self.projects.get(slug, slug)


def collect(root: Path, by: By, since: str = "", until: str = "", session: str = "") -> Collected:
    """The calls under `root` (the sessions folder) on local days from `since` to `until` (inclusive; "" for no
    bound), grouped `by`; only the session `session` when given."""
    found = Collected(by, {}, {})
    day_of = LocalDay()
    for file in find_transcripts(root, found.warnings):
        if session and file.session_id != session:
            continue
        _add_file(found, file, day_of, since, until)
    return found


def _add_file(found: Collected, file: TranscriptFile, day_of: LocalDay, since: str, until: str) -> None:
    try:
        usage = read_usage(file.path)
    except OSError as exc:
        found.warnings.append(f"{file.path}: cannot be read ({exc.strerror or exc}); not counted")
        return
    found.files += 1
    if usage.broken:
        found.warnings.append(f"{file.path}: {usage.broken} unreadable line(s) skipped")
    meta = usage.meta
    if meta is not None and meta.cwd and (not file.subagent or file.slug not in found.projects):
        found.projects[file.slug] = meta.cwd
    if not usage.calls:
        if usage.messages and not file.subagent:
            found.unrecorded += 1
        return
    fallback_model = meta.model if meta is not None else ""
    started = meta.started if meta is not None else 0.0
    by = found.by
    groups: dict[tuple[str, str], list[int]] = {}
    """(model, day) → [calls, input, output, cache writes, cache reads]: a file's calls, added up first."""
    billed: dict[tuple[str, str], list[float]] = {}
    """(model, day) → [dollars, *counts] of the calls whose provider said what it billed."""
    for call in usage.calls:
        day = day_of(call.ts or started)
        if (since and day < since) or (until and day > until):
            continue
        group = (call.model or fallback_model, day)
        counts = groups.get(group)
        if counts is None:
            counts = groups[group] = [0, 0, 0, 0, 0]
        tokens = call.usage
        counts[0] += 1
        counts[1] += tokens.input_tokens
        counts[2] += tokens.output_tokens
        counts[3] += tokens.cache_creation_input_tokens
        counts[4] += tokens.cache_read_input_tokens
        if tokens.cost_usd is not None:
            said = billed.setdefault(group, [0.0] * 6)
            said[0] += tokens.cost_usd
            said[1] += 1
            said[2] += tokens.input_tokens
            said[3] += tokens.output_tokens
            said[4] += tokens.cache_creation_input_tokens
            said[5] += tokens.cache_read_input_tokens
    for (model, day), counts in groups.items():
        key = day if by == "day" else file.slug if by == "project" else model if by == "model" else file.session_id
        tally = found.rows.get(key)
        if tally is None:
            tally = found.rows[key] = Tally()
        tally.add_counts(model, counts, file.session_id, file.slug, day, billed.get((model, day)))
