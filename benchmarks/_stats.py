"""Shared helpers for the benchmark scripts: summary statistics and one aligned result line."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence


def fmt_seconds(seconds: float) -> str:
    """A duration in the unit that keeps three significant figures readable (µs, ms or s)."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def line(label: str, samples: Sequence[float], note: str = "", width: int = 34) -> str:
    """`label   median X  min Y  (n=N; note)` for samples in seconds."""
    if not samples:
        return f"{label:<{width}} no samples" + (f"  ({note})" if note else "")
    median = fmt_seconds(statistics.median(samples))
    low = fmt_seconds(min(samples))
    extra = f"n={len(samples)}" + (f"; {note}" if note else "")
    return f"{label:<{width}} median {median:>9}  min {low:>9}  ({extra})"


def runs_from(argv: Sequence[str] | None, module: str, doc: str | None, default: int) -> int:
    """The benchmark's one option, `--runs N` (measured runs per figure), parsed from `argv`."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").partition("\n")[0])
    note = f"measured runs per figure (default {default})"
    parser.add_argument("--runs", type=int, default=default, metavar="N", help=note)
    runs: int = parser.parse_args(argv).runs
    return max(1, runs)
