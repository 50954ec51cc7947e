"""The program table's examples, checked: each `Spec.examples` entry must be read-only, each `Spec.counterexamples`
entry must not be, by the whole analysis (`analysis.analyze`).

Not part of `programs`: the analysis looks programs up in that table, so the table imports nothing of the analysis
(an import of it inside `programs`, even in a function, was an import cycle); this module sits above both.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import programs
from .analysis import analyze
from .spec import Spec, compile_spec


def check_examples(table: Iterable[tuple[str, Spec]] | None = None) -> list[str]:
    """Every spec compiled and every example run through the analysis: the examples that are not read-only and the
    counterexamples that are, one line each (empty when the table keeps its word). `table`: other specs to check
    (default: this table). An example is judged by the table as it is, so a spec checked here must be in it."""
    wrong: list[str] = []
    for name, spec in table if table is not None else programs.specs():
        compile_spec(spec)
        for example in spec.examples:
            analysis = analyze(example)
            if not analysis.read_only:
                wrong.append(f"{name}: {example!r} should be read-only ({analysis.reason})")
        for counter in spec.counterexamples:
            if analyze(counter).read_only:
                wrong.append(f"{name}: {counter!r} should not be read-only")
    return wrong
