"""Adding the calls up: one `Tally` per day, project, model or session, and the grand total.

A tally keeps integer token counts per model and prices them only when asked (pricing.py's list prices), so the
dollars do not depend on the order the calls were read in: `ram view` of a session and the session's row of
`ram usage --by session` are the same numbers. A model without a known price adds its tokens and its calls to
`unpriced_calls`, never a made-up price.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Literal, TypeAlias

from ..messages import Usage
from ..pricing import cost_usd
from .scan import Counts

By: TypeAlias = Literal["day", "project", "model", "session"]
BY: tuple[By, ...] = ("day", "project", "model", "session")


class Tally:
    """The calls of one row: tokens per model, and the sessions and days they came from."""

    __slots__ = ("billed", "days", "per_model", "projects", "sessions")

    def __init__(self) -> None:
        self.per_model: dict[str, list[int]] = {}
        """model → [calls, input, output, cache write, cache read]."""
        self.billed: dict[str, list[float]] = {}
        """model → [dollars, calls, input, output, cache write, cache read] of the calls whose provider said what it
        billed (OpenRouter): those are costed at what it said, the rest at list price."""
        self.sessions: set[str] = set()
        self.projects: set[str] = set()
        self.days: set[str] = set()

    def add(self, usage: Counts, model: str, session: str, project: str, day: str) -> None:
        """One call of `model` that read and wrote `usage`."""
        counts = [1, usage.input_tokens, usage.output_tokens, usage.cache_creation_input_tokens]
        counts.append(usage.cache_read_input_tokens)
        billed = None if usage.cost_usd is None else [usage.cost_usd, *counts]
        self.add_counts(model, counts, session, project, day, billed)

    def add_counts(
        self, model: str, counts: list[int], session: str, project: str, day: str, billed: list[float] | None = None
    ) -> None:
        """Calls of `model`: [calls, input, output, cache writes, cache reads]; `billed`: [dollars, *counts] of those
        of them whose provider said what it billed."""
        _add(self.per_model.setdefault(model, [0, 0, 0, 0, 0]), counts)
        if billed is not None and billed[1]:
            _add(self.billed.setdefault(model, [0.0] * 6), billed)
        self.sessions.add(session)
        self.projects.add(project)
        self.days.add(day)

    def merge(self, other: Tally) -> None:
        for model, counts in other.per_model.items():
            _add(self.per_model.setdefault(model, [0, 0, 0, 0, 0]), counts)
        for model, billed in other.billed.items():
            _add(self.billed.setdefault(model, [0.0] * 6), billed)
        self.sessions |= other.sessions
        self.projects |= other.projects
        self.days |= other.days

    def _sum(self, index: int) -> int:
        return sum(counts[index] for counts in self.per_model.values())

    @property
    def calls(self) -> int:
        return self._sum(0)

    @property
    def input_tokens(self) -> int:
        return self._sum(1)

    @property
    def output_tokens(self) -> int:
        return self._sum(2)

    @property
    def cache_write_tokens(self) -> int:
        return self._sum(3)

    @property
    def cache_read_tokens(self) -> int:
        return self._sum(4)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def cache_share(self) -> float | None:
        """Cache reads over everything the models read (plain input, cache reads and writes); None: no input."""
        read = self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
        return self.cache_read_tokens / read if read else None

    def cost(self) -> tuple[float | None, int]:
        """Dollars at list price of the calls whose model has a price (None when none has), and the calls of
        models without one."""
        total: float | None = None
        unpriced = 0
        for model, counts in sorted(self.per_model.items()):
            billed = self.billed.get(model, [0.0] * 6)
            if billed[1]:
                total = (total or 0.0) + billed[0]
            rest = [int(count - done) for count, done in zip(counts, billed[1:], strict=True)]
            if not rest[0]:
                continue
            dollars = cost_usd(model, Usage(rest[1], rest[2], rest[4], rest[3]))
            if dollars is None:
                unpriced += rest[0]
            else:
                total = (total or 0.0) + dollars
        return total, unpriced

    @property
    def models(self) -> list[str]:
        return sorted(m for m in self.per_model if m) or ([""] if "" in self.per_model else [])

    def fields(self) -> dict[str, Any]:
        """The numbers, under the names `--json` gives them."""
        cost, unpriced = self.cost()
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_write_tokens,
            "cache_read_input_tokens": self.cache_read_tokens,
            "total_tokens": self.total_tokens,
            "cache_share": self.cache_share,
            "cost_usd": cost,
            "unpriced_calls": unpriced,
            "models": self.models,
            "sessions": len(self.sessions),
        }


class LocalDay:
    """The local date (`YYYY-MM-DD`) of a time, remembering the last day's bounds (calls come in order)."""

    def __init__(self) -> None:
        self._start = self._end = 0.0
        self._day = ""

    def __call__(self, ts: float) -> str:
        if self._start <= ts < self._end:
            return self._day
        try:
            t = time.localtime(ts)
        except (OverflowError, OSError, ValueError):
            return "unknown"
        self._day = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
        try:
            self._start = time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))
            self._end = time.mktime((t.tm_year, t.tm_mon, t.tm_mday + 1, 0, 0, 0, 0, 0, -1))
        except (OverflowError, ValueError):
            self._start = self._end = 0.0
        return self._day


def total_of(tallies: Iterable[Tally]) -> Tally:
    whole = Tally()
    for tally in tallies:
        whole.merge(tally)
    return whole


def _add(into: list[Any], values: list[Any]) -> None:
    for i, value in enumerate(values):
        into[i] += value
