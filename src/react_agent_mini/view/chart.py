"""The timeline: one column per model call, as hand-written SVG.

The main chart stacks the context each request carried, by part (its call record's estimate), from our
instructions at the bottom to the tool results on top, and draws over it a line of what the provider counted as
read (plain input, cache reads and cache writes). Vertical marks show where a summary rewrote the history (S),
where a request first held more cleared results (C, microcompact) and where it first left out more of the history
(D, dropped turns: retain). Two strips below show each call's prefix-cache share and its cost.

Each part is one `<path>` (the area under its running total, drawn from the top of the stack down), so a
1,000-call session stays a few hundred kilobytes; with up to `HITS` calls each column also gets a hover title
and a link to its row in the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .html import dollars, esc, number, share
from .reading import PARTS, Call

COLOURS = {
    "system": "#8c959f",
    "project": "#8250df",
    "memory": "#bf3989",
    "skills": "#e85aad",
    "tools": "#c9d1d9",
    "user": "#0969da",
    "injected": "#54aeff",
    "assistant": "#2da44e",
    "side call": "#6e7781",
}
LABELS = {
    "system": "system prompt",
    "project": "project instructions",
    "memory": "memory",
    "skills": "skills",
    "tools": "tool schemas",
    "user": "your messages",
    "injected": "injected context",
    "assistant": "assistant",
    "side call": "side call (summary, page reader)",
}
RESULT_COLOURS = ("#fb8f44", "#d4a72c", "#e16f24", "#a475f9", "#cf222e", "#1b7c83", "#7d4e00", "#bc4c00")
EVENTS = {"summary": ("S", "#8250df"), "micro": ("C", "#bf8700"), "retain": ("D", "#cf222e")}
EVENT_NAMES = {
    "summary": "a summary rewrote the history",
    "micro": "microcompact: more old tool results cleared",
    "retain": "retain: more old turns dropped",
}
WIDTH, LEFT, RIGHT = 1000.0, 58.0, 10.0
HITS = 400
"""Up to this many calls, each column has a hover title and links to its table row."""
DENSE = 40
"""More event marks than this are drawn as ticks above the chart, not lines across it."""


def _f(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def part_names(calls: Sequence[Call]) -> list[str]:
    """The parts present, in stacking order (results by tool, the largest first, on top)."""
    tools: dict[str, int] = {}
    fixed: set[str] = set()
    side = False
    for call in calls:
        context = call.record.context
        if context is None:
            side = side or bool(call.read)
            continue
        for name in PARTS:
            if getattr(context, name):
                fixed.add(name)
        for tool, tokens in context.results.items():
            tools[tool] = max(tools.get(tool, 0), tokens)
    names = [name for name in PARTS if name in fixed]
    names += [f"{tool} results" for tool in sorted(tools, key=lambda t: (-tools[t], t))]
    return [*names, "side call"] if side else names


def colours(names: Sequence[str]) -> dict[str, str]:
    out, results = {}, 0
    for name in names:
        if name in COLOURS:
            out[name] = COLOURS[name]
        else:
            out[name] = RESULT_COLOURS[results % len(RESULT_COLOURS)]
            results += 1
    return out


def _values(call: Call, names: Sequence[str]) -> list[int]:
    context = call.record.context
    if context is None:
        return [call.read if name == "side call" else 0 for name in names]
    found = dict(context.parts())
    return [found.get(name, 0) for name in names]


def _nice(top: float) -> tuple[float, float]:
    """An axis maximum at or above `top`, and its tick step (1, 2 or 5 times a power of ten)."""
    if top <= 0:
        return 1.0, 1.0
    raw = top / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return step * math.ceil(top / step), step


def _short(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def timeline(calls: Sequence[Call], summaries: Sequence[int], prefix: str = "") -> str:
    """The three charts of a transcript's calls; `summaries`: the calls recorded before each summary; `prefix`:
    before the anchors of the calls' table rows."""
    if not calls:
        return '<p class="note">No model call was recorded in this transcript.</p>'
    names = part_names(calls)
    palette = colours(names)
    parts = [_main(calls, names, palette, summaries, prefix), _strip_share(calls), _strip_cost(calls)]
    return _legend(names, palette) + "\n".join(parts)


def _legend(names: Sequence[str], palette: dict[str, str]) -> str:
    swatches = [
        f'<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" rx="2" '
        f'fill="{palette[name]}"/></svg>{esc(LABELS.get(name, name))}</span>'
        for name in names
    ]
    swatches.append(
        '<span><svg width="18" height="12" aria-hidden="true"><path d="M0 6H18" stroke="#1f2328" '
        'stroke-width="1.6"/></svg>tokens the provider counted as read</span>'
    )
    for kind, (letter, colour) in EVENTS.items():
        swatches.append(
            f'<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" rx="2" '
            f'fill="{colour}"/></svg>{letter}: {esc(EVENT_NAMES[kind])}</span>'
        )
    return f'<div class="legend">{"".join(swatches)}</div>'


class _Frame:
    """Where columns and values go in one chart."""

    def __init__(self, count: int, height: float, top: float, bottom: float, maximum: float) -> None:
        self.count, self.height, self.top, self.bottom = count, height, top, bottom
        self.step = (WIDTH - LEFT - RIGHT) / count
        self.maximum = maximum
        self.base = height - bottom

    def x(self, index: int) -> float:
        return LEFT + index * self.step

    def y(self, value: float) -> float:
        return self.base - (self.base - self.top) * min(value, self.maximum) / self.maximum

    def gap(self) -> float:
        """Room left beside each bar: none when columns are thin, and bars no wider than 36."""
        if self.count > 120:
            return 0.0
        return max(self.step * 0.18, self.step - 36.0)


def _area(frame: _Frame, values: Sequence[float]) -> str:
    """The path of the area under `values`, one column each (separate bars when there is room for gaps)."""
    gap = frame.gap()
    base = _f(frame.base)
    if gap:
        return "".join(
            f"M{_f(frame.x(i) + gap / 2)} {base}V{_f(frame.y(v))}H{_f(frame.x(i + 1) - gap / 2)}V{base}Z"
            for i, v in enumerate(values)
            if v > 0
        )
    out = [f"M{_f(frame.x(0))} {base}"]
    for i, v in enumerate(values):
        out.append(f"V{_f(frame.y(v))}H{_f(frame.x(i + 1))}")
    out.append(f"V{base}Z")
    return "".join(out)


def _grid(frame: _Frame, step: float, label: Callable[[float], str] = _short) -> str:
    lines = []
    value = 0.0
    while value <= frame.maximum + step / 2:
        y = _f(frame.y(value))
        text = label(value)
        lines.append(f'<path class="grid" d="M{_f(LEFT)} {y}H{_f(WIDTH - RIGHT)}"/>')
        lines.append(f'<text x="{_f(LEFT - 6)}" y="{y}" text-anchor="end" dominant-baseline="middle">{text}</text>')
        value += step
    return "".join(lines)


def _ticks(frame: _Frame, calls: Sequence[Call]) -> str:
    """Call numbers under the columns, spaced so they never overlap."""
    every = max(1, math.ceil(28 / frame.step))
    every = next(m for m in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 10**9) if m >= every)
    out = []
    for index, call in enumerate(calls):
        if call.number % every and index not in (0, len(calls) - 1):
            continue
        x = frame.x(index) + frame.step / 2
        anchor = "end" if x > WIDTH - RIGHT - 12 else "middle"  # the last one stays inside
        out.append(f'<text x="{_f(x)}" y="{_f(frame.base + 15)}" text-anchor="{anchor}">{call.number}</text>')
    return "".join(out)


def _main(
    calls: Sequence[Call], names: Sequence[str], palette: dict[str, str], summaries: Sequence[int], prefix: str
) -> str:
    rows = [_values(call, names) for call in calls]
    highest = max(max(sum(row), call.read) for row, call in zip(rows, calls, strict=True))
    maximum, step = _nice(highest * 1.04)
    frame = _Frame(len(calls), 300.0, 24.0, 24.0, maximum)
    shapes = [_grid(frame, step)]
    running = [[0] * len(names) for _ in rows]
    for i, row in enumerate(rows):
        total = 0
        for j, value in enumerate(row):
            total += value
            running[i][j] = total
    for j in range(len(names) - 1, -1, -1):  # the top of the stack first: each lower part paints over it
        d = _area(frame, [running[i][j] for i in range(len(rows))])
        shapes.append(f'<path class="part" data-part="{esc(names[j])}" fill="{palette[names[j]]}" d="{d}"/>')
    centres = [(frame.x(i) + frame.step / 2, frame.y(call.read)) for i, call in enumerate(calls)]
    shapes.append(f'<polyline class="read" points="{" ".join(f"{_f(x)},{_f(y)}" for x, y in centres)}"/>')
    if len(calls) <= 120:
        shapes += [f'<circle class="dot" cx="{_f(x)}" cy="{_f(y)}" r="2"/>' for x, y in centres]
    shapes.append(_events(frame, calls, summaries))
    shapes.append(f'<path class="axis" d="M{_f(LEFT)} {_f(frame.base)}H{_f(WIDTH - RIGHT)}"/>')
    shapes.append(_ticks(frame, calls))
    if len(calls) <= HITS:
        shapes.append(_hits(frame, calls, rows, names, prefix))
    return _svg(frame, "context of each call, by part (estimated tokens), and tokens read", "".join(shapes))


def _events(frame: _Frame, calls: Sequence[Call], summaries: Sequence[int]) -> str:
    marks: list[tuple[float, str, str]] = []
    for after in summaries:
        marks.append((frame.x(min(after, len(calls))), "summary", f"after call {after}: {EVENT_NAMES['summary']}"))
    for index, call in enumerate(calls):
        for kind in call.events:
            marks.append((frame.x(index) + frame.step / 2, kind, f"call {call.number}: {EVENT_NAMES[kind]}"))
    out = []
    labelled: dict[str, float] = {}
    dense = len(marks) > DENSE
    for x, kind, title in sorted(marks, key=lambda m: m[0]):
        letter, colour = EVENTS[kind]
        label = ""
        if x - labelled.get(kind, -1e9) >= 14:  # letters would overlap: the mark alone says it
            labelled[kind] = x
            row = {"summary": 9, "micro": 17, "retain": 17}[kind]
            dx = {"summary": 0, "micro": -4, "retain": 4}[kind]
            label = f'<text x="{_f(x + dx)}" y="{row}" text-anchor="middle" fill="{colour}">{letter}</text>'
        # Many marks would hide the chart: then each is a short tick above it (a summary still crosses it).
        bottom = frame.base if kind == "summary" or not dense else frame.top + 6
        out.append(
            f'<g class="ev" data-event="{kind}"><title>{esc(title)}</title>'
            f'<path d="M{_f(x)} {_f(frame.top - 2)}V{_f(bottom)}" stroke="{colour}" stroke-width="1.2" '
            f'stroke-dasharray="{"none" if dense else "3 2"}"/>{label}</g>'
        )
    return "".join(out)


def _hits(
    frame: _Frame, calls: Sequence[Call], rows: Sequence[Sequence[int]], names: Sequence[str], prefix: str
) -> str:
    out = []
    for index, (call, row) in enumerate(zip(calls, rows, strict=True)):
        parts = ", ".join(f"{LABELS.get(n, n)} {number(v)}" for n, v in zip(names, row, strict=True) if v)
        title = (
            f"call {call.number} ({call.record.kind}, {call.record.model}): read {number(call.read)}, "
            f"cache {share(call.cache_share)}, out {number(call.record.usage.output_tokens)}"
            + (f" — estimated: {parts}" if parts else "")
        )
        out.append(
            f'<a href="#{prefix}call-{call.number}"><rect class="hit" x="{_f(frame.x(index))}" y="{_f(frame.top)}" '
            f'width="{_f(frame.step)}" height="{_f(frame.base - frame.top)}"><title>{esc(title)}</title></rect></a>'
        )
    return "".join(out)


def _strip_share(calls: Sequence[Call]) -> str:
    frame = _Frame(len(calls), 96.0, 10.0, 20.0, 1.0)
    values = [call.cache_share or 0.0 for call in calls]
    shapes = [
        _grid(frame, 0.5, lambda v: f"{v:.0%}"),
        f'<path fill="#1b7c83" d="{_area(frame, values)}"/>',
        f'<text x="{_f(LEFT)}" y="{_f(frame.height - 4)}">prefix-cache share of each call (cache reads / tokens '
        "read)</text>",
    ]
    return _svg(frame, "prefix-cache share of each call", "".join(shapes))


def _strip_cost(calls: Sequence[Call]) -> str:
    from ..pricing import cost_usd

    costs = [cost_usd(call.record.model, call.record.usage.usage()) or 0.0 for call in calls]
    maximum, step = _nice(max(costs) * 1.04) if any(costs) else (1.0, 1.0)
    frame = _Frame(len(calls), 96.0, 10.0, 20.0, maximum)
    shapes = [
        _grid(frame, maximum, _money),
        f'<path fill="#9a6700" d="{_area(frame, costs)}"/>',
        f'<text x="{_f(LEFT)}" y="{_f(frame.height - 4)}">cost of each call at list price'
        f"{'' if any(costs) else ' (no known price for this model)'}</text>",
    ]
    del step
    return _svg(frame, "cost of each call", "".join(shapes))


def _money(value: float) -> str:
    """An axis label in dollars, with digits enough for a fraction of a cent."""
    if not value:
        return "$0"
    if value < 0.0001:
        return f"${value:.6f}".rstrip("0")
    return dollars(value)


def _svg(frame: _Frame, label: str, content: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {_f(WIDTH)} {_f(frame.height)}" role="img" '
        f'aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg">{content}</svg>'
    )
