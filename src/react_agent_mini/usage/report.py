"""What `ram usage` prints: a table with one row per day, project, model or session and a total, or the same
numbers as JSON (`--json`).

The table's columns: calls, plain input, output, cache writes, cache reads, all tokens, the prefix-cache share
(cache reads over everything the models read) and the cost at list price. A cost marked `*` leaves out calls of
models without a known price (a footnote names them). Text from transcripts (paths, model names) is printed
through `terminal_text.visible`, so a control character in it cannot steer the terminal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..pricing import format_cost
from ..terminal_text import visible
from .collect import Collected
from .totals import Tally

HEADINGS = {"day": "Day", "project": "Project", "model": "Model", "session": "Session"}
MAX_KEY = 48
"""A longer key (a deep workspace path) is shown by its end."""
MAX_WARNINGS = 10


def as_json(found: Collected, since: str, until: str) -> str:
    """The report as one JSON object: `rows` (each with its key under the `by` name) and `totals`."""
    rows = [{found.by: key, **_described(found, key, tally), **tally.fields()} for key, tally in _ordered(found)]
    out: dict[str, Any] = {
        "by": found.by,
        "since": since or None,
        "until": until or None,
        "rows": rows,
        "totals": found.total().fields(),
        "transcripts": found.files,
        "sessions_without_usage": found.unrecorded,
        "warnings": found.warnings,
    }
    return json.dumps(out, indent=2, ensure_ascii=False)


def _described(found: Collected, key: str, tally: Tally) -> dict[str, Any]:
    """What a row's key stands for, beside the key itself."""
    if found.by == "project":
        return {"path": found.project_of(key)}
    if found.by == "session":
        projects = sorted(found.project_of(p) for p in tally.projects)
        return {"project": projects[0] if projects else "", "first_day": min(tally.days, default="")}
    return {}


def _ordered(found: Collected) -> list[tuple[str, Tally]]:
    """Days and sessions in time order; projects and models most expensive (then most tokens) first."""
    items = list(found.rows.items())
    if found.by == "day":
        return sorted(items)
    if found.by == "session":
        return sorted(items, key=lambda item: (min(item[1].days, default=""), item[0]))
    return sorted(items, key=lambda item: (-(item[1].cost()[0] or 0.0), -item[1].total_tokens, item[0]))


def as_table(found: Collected, since: str, until: str) -> str:
    """The report as aligned columns, with a title line, a total and footnotes."""
    ordered = _ordered(found)
    total = found.total()
    lines = [_title(found, total, since, until)]
    if not ordered:
        lines.append(_nothing(found, since, until))
        return "\n".join([*lines, *_footnotes(found, total)]) + "\n"
    heading = [HEADINGS[found.by]]
    if found.by == "session":
        heading.append("Day")
    heading += ["Calls", "Input", "Output", "Cache write", "Cache read", "Total tokens", "Cached", "Cost"]
    heading.append("Project" if found.by == "session" else "Models" if found.by != "model" else "")
    table = [heading]
    for key, tally in ordered:
        table.append(_row(found, key, tally))
    table.append(_cells(["Total", *([""] if found.by == "session" else [])], total, ""))
    lines += ["", *_aligned(table, left=2 if found.by == "session" else 1), *_footnotes(found, total)]
    return "\n".join(lines) + "\n"


def _title(found: Collected, total: Tally, since: str, until: str) -> str:
    span = f" from {since or 'the start'} to {until or 'today'}" if since or until else ""
    sessions = len(total.sessions)
    return (
        f"ram usage by {found.by}{span}: {sessions:,} session{'s' * (sessions != 1)}, "
        f"{total.calls:,} model call{'s' * (total.calls != 1)}"
    )


def _nothing(found: Collected, since: str, until: str) -> str:
    if found.files == 0:
        return "No saved sessions yet."
    if since or until:
        return "No model calls on those days."
    return "No model calls recorded."


def _row(found: Collected, key: str, tally: Tally) -> list[str]:
    if found.by == "project":
        first = [_short(_home(found.project_of(key)))]
    elif found.by == "session":
        first = [key[:8], min(tally.days, default="")]
    else:
        first = [_short(key) or "(unknown)"]
    if found.by == "session":
        last = ", ".join(_short(_home(found.project_of(p))) for p in sorted(tally.projects))
    elif found.by == "model":
        last = ""
    else:
        last = ", ".join(m or "(unknown)" for m in tally.models)
    return _cells(first, tally, last)


def _cells(first: list[str], tally: Tally, last: str) -> list[str]:
    cost, unpriced = tally.cost()
    shown = "—" if cost is None else format_cost(cost) + ("*" if unpriced else "")
    share = tally.cache_share
    return [
        *(visible(cell) for cell in first),
        f"{tally.calls:,}",
        f"{tally.input_tokens:,}",
        f"{tally.output_tokens:,}",
        f"{tally.cache_write_tokens:,}",
        f"{tally.cache_read_tokens:,}",
        f"{tally.total_tokens:,}",
        "—" if share is None else f"{share:.0%}",
        shown,
        visible(last),
    ]


def _aligned(table: Sequence[Sequence[str]], left: int) -> list[str]:
    """Columns padded to their widest cell: the first `left` and the last to the left, numbers to the right."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    last = len(widths) - 1
    out = []
    for row in table:
        cells = [
            cell.ljust(widths[i]) if i < left or i == last else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        out.append("  ".join(cells).rstrip())
    return out


def _footnotes(found: Collected, total: Tally) -> list[str]:
    notes = []
    _cost, unpriced = total.cost()
    if unpriced:
        models = sorted(m or "(unknown)" for m, counts in total.per_model.items() if counts[0] and _unpriced(m, total))
        notes.append(
            f"* leaves out {unpriced:,} call{'s' * (unpriced != 1)} of models without a known price "
            f"({visible(', '.join(models))}): their tokens are counted, their cost is not"
        )
    if found.unrecorded:
        notes.append(
            f"{found.unrecorded:,} session{'s' * (found.unrecorded != 1)} saved before ram recorded its model "
            "calls: not counted"
        )
    return ["", *notes] if notes else []


def _unpriced(model: str, total: Tally) -> bool:
    single = Tally()
    single.per_model[model] = total.per_model[model]
    return single.cost()[0] is None


def warning_lines(found: Collected) -> list[str]:
    """The warnings to print (on stderr), at most `MAX_WARNINGS` of them and a line for the rest."""
    shown = [f"warning: {visible(w)}" for w in found.warnings[:MAX_WARNINGS]]
    rest = len(found.warnings) - MAX_WARNINGS
    if rest > 0:
        shown.append(f"warning: … and {rest:,} more (ram usage --json lists them all)")
    return shown


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def _short(text: str) -> str:
    return text if len(text) <= MAX_KEY else "…" + text[-(MAX_KEY - 1) :]
