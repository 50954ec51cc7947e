"""A `ram batch` out folder's pages: an index with one row per task (status, model calls, cost, time, patch size, the
test's exit code) and the totals, and beside it one page per task — its session's page with the task's result
and patch on top — linked relatively, so the folder of pages opens offline as it is.

    <index>.html            the index (`view.html` in the out folder unless `-o` says otherwise)
    <index>-tasks/<id>.html  each task whose transcript is there

The results are read as the batch writes them (batch/results.py): the last line for an id wins; a line that is not
a result is counted and left out.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import msgspec

from ..batch.outcome import TaskResult
from ..batch.tasks import file_stem
from .html import dollars, esc, number, page, span, when, write_page
from .reading import read_story
from .session_page import session_page

PATCH_LINES = 3000
"""Lines of a patch shown on its task's page."""
HEADERS = (
    "diff --git",
    "index ",
    "--- ",
    "+++ ",
    "@@",
    "new file mode",
    "deleted file mode",
    "similarity index",
    "rename from",
    "rename to",
    "old mode",
    "new mode",
    "Binary files",
)


class PatchSize(msgspec.Struct, frozen=True):
    files: int = 0
    added: int = 0
    removed: int = 0
    size: int = 0


def write_batch(out_dir: Path, index: Path) -> list[Path]:
    """Write the index at `index` and the task pages beside it; the files written, the index first."""
    results, broken = read_results(out_dir)
    tasks_dir = index.with_name(index.stem + "-tasks")
    rows, written = [], []
    for result in results:
        patch = _read(out_dir, result.patch)
        link = ""
        transcript = out_dir / result.transcript if result.transcript else None
        if transcript is not None and transcript.is_file():
            target = tasks_dir / f"{file_stem(result.id)}.html"
            back = os.path.relpath(index, target.parent)
            story = read_story(transcript)
            write_page(
                target,
                session_page(story, back=(back, "the batch"), before=_task_block(result, patch), title=result.id),
            )
            written.append(target)
            link = os.path.relpath(target, index.parent)
        rows.append((result, _size(patch), link))
    write_page(index, _index(out_dir, rows, broken))
    return [index, *written]


def read_results(out_dir: Path) -> tuple[list[TaskResult], int]:
    """The last result of each task, in the order the tasks first finished; and the lines that were not results."""
    latest: dict[str, TaskResult] = {}
    broken = 0
    decoder = msgspec.json.Decoder(TaskResult)
    with (out_dir / "results.jsonl").open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                result = decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                broken += 1
                continue
            latest[result.id] = result
    return list(latest.values()), broken


def _read(out_dir: Path, relative: str | None) -> str:
    if not relative:
        return ""
    try:
        return (out_dir / relative).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _size(patch: str) -> PatchSize:
    files = added = removed = 0
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            files += 1
        elif line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return PatchSize(files, added, removed, len(patch.encode("utf-8", "replace")))


def _patch_cell(size: PatchSize) -> str:
    if not size.size:
        return "—"
    return f"{size.files} file{'s' * (size.files != 1)}, +{size.added} −{size.removed}"


def _repr(value: float | None) -> str:
    return "" if value is None else repr(value)


def _index(out_dir: Path, rows: list[tuple[TaskResult, PatchSize, str]], broken: int) -> str:
    statuses = Counter(result.status for result, _size, _link in rows)
    priced = [r.cost_usd for r, _s, _l in rows if r.cost_usd is not None]
    cost = sum(priced) if priced else None
    turns = sum(r.num_turns for r, _s, _l in rows)
    seconds = sum(r.duration_s for r, _s, _l in rows)
    patches = [s for _r, s, _l in rows if s.size]
    tokens = sum(sum(v for v in r.usage.values() if isinstance(v, int)) for r, _s, _l in rows)
    facts = [
        ("tasks", number(len(rows))),
        *((status, number(count)) for status, count in sorted(statuses.items())),
        ("model calls", number(turns)),
        ("tokens", number(tokens)),
        (
            "cost (list price)",
            dollars(cost) + ("" if len(priced) == len(rows) else f" ({len(rows) - len(priced)} unpriced)"),
        ),
        ("task time, summed", span(seconds)),
        ("patches", f"{len(patches)} · +{sum(s.added for s in patches)} −{sum(s.removed for s in patches)}"),
    ]
    cells = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in facts)
    data = (
        f'data-tasks="{len(rows)}" data-turns="{turns}" data-cost-usd="{_repr(cost)}" '
        f'data-completed="{statuses.get("completed", 0)}"'
    )
    head = (
        "<tr><th class=l>task</th><th class=l>status</th><th>model calls</th><th>cost</th><th>time</th>"
        "<th>patch</th><th>test exit</th><th class=l>model</th><th class=l>finished</th><th class=l>error</th></tr>"
    )
    body = []
    for result, size, link in rows:
        name = f'<a href="{esc(link)}">{esc(result.id)}</a>' if link else esc(result.id)
        test = "—" if result.test_exit_code is None else str(result.test_exit_code)
        body.append(
            f'<tr class="task" data-task="{esc(result.id)}" data-status="{esc(result.status)}" '
            f'data-turns="{result.num_turns}" data-cost-usd="{_repr(result.cost_usd)}" '
            f'data-patch-bytes="{size.size}" data-link="{esc(link)}">'
            f'<td class=l>{name}</td><td class=l><span class="status {esc(result.status)}">{esc(result.status)}</span>'
            f"</td><td>{number(result.num_turns)}</td><td>{dollars(result.cost_usd)}</td>"
            f"<td>{span(result.duration_s)}</td><td>{_patch_cell(size)}</td><td>{test}</td>"
            f"<td class=l>{esc(result.model)}</td><td class=l>{esc(when(result.finished_at))}</td>"
            f'<td class="l wrap">{esc(result.error or "")}</td></tr>'
        )
    foot = (
        f"<tr><td class=l>Total</td><td class=l>{esc(', '.join(f'{n} {s}' for s, n in sorted(statuses.items())))}</td>"
        f"<td>{number(turns)}</td><td>{dollars(cost)}</td><td>{span(seconds)}</td>"
        f"<td>{len(patches)} patch{'es' * (len(patches) != 1)}</td><td></td><td></td><td></td><td></td></tr>"
    )
    note = (
        f'<p class="note">{broken} line(s) of results.jsonl could not be read and are left out.</p>' if broken else ""
    )
    content = (
        f'<h1>Batch {esc(out_dir.resolve().name)}</h1><p class="sub">{esc(out_dir.resolve())}</p>'
        f'<dl class="facts" id="totals" {data}>{cells}</dl>{note}'
        f'<h2 id="tasks">Tasks</h2><div class="scroll"><table class="tasks"><thead>{head}</thead>'
        f"<tbody>{''.join(body)}</tbody><tfoot>{foot}</tfoot></table></div>"
    )
    return page(f"Batch {out_dir.resolve().name} — ram view", content)


def _task_block(result: TaskResult, patch: str) -> str:
    facts = [
        ("status", result.status),
        ("model calls", number(result.num_turns)),
        ("cost (as the batch recorded it)", dollars(result.cost_usd)),
        ("time", span(result.duration_s)),
        ("test exit code", "—" if result.test_exit_code is None else str(result.test_exit_code)),
        ("permission denials", number(result.permission_denials)),
    ]
    cells = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in facts)
    parts = [f'<h2 id="result">Result</h2><dl class="facts" id="task" data-status="{esc(result.status)}">{cells}</dl>']
    if result.error:
        parts.append(f'<p class="err">{esc(result.error)}</p>')
    if result.test_output:
        parts.append(f"<details><summary>What the test printed</summary><pre>{esc(result.test_output)}</pre></details>")
    parts.append('<h2 id="patch">Patch</h2>')
    parts.append(_patch(patch) if patch else '<p class="note">The task changed nothing.</p>')
    return "".join(parts)


def _patch(patch: str) -> str:
    lines = patch.splitlines()
    rows = []
    for line in lines[:PATCH_LINES]:
        if line.startswith(HEADERS):
            kind = "h"
        elif line.startswith("+"):
            kind = "a"
        elif line.startswith("-"):
            kind = "d"
        else:
            kind = ""
        rows.append(f'<pre class="{kind}">{esc(line) or " "}</pre>' if kind else f"<pre>{esc(line) or ' '}</pre>")
    if len(lines) > PATCH_LINES:
        rows.append(f'<pre class="cut">[… {len(lines) - PATCH_LINES:,} more lines: see the patch file]</pre>')
    return f'<div class="diff" id="patch-diff">{"".join(rows)}</div>'
