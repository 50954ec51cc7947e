"""The state of reading one command's words by its program's spec: what `options.parse` fills in as it goes, and
what a check (`checks.py`) looks at and adds to. Below both, so that neither calls the other back."""

from __future__ import annotations

from .spec import Option, Program
from .words import Word


class Parse:
    """The state of reading one command's words."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.problem: str | None = None
        self.effects: set[str] = set(program.effects)
        self.paths: list[Word] = []
        self.values: list[tuple[Option, Word]] = []
        self.operands: list[Word] = []
        self.scripts: list[str] = []
        self.nested: list[tuple[str, ...]] = []
        self.revs: list[Word] = []
        self.probes: list[Word] = []
        self.named: list[Word] = []
        self.evaluated: list[Word] = []
        """Words bash evaluates as code when it runs (`evaluated.py`): an array subscript, arithmetic."""
        self.dashdash: int | None = None
        """How many operands came before `--` (None: there was none)."""
        self.dynamic = False
        self.given: set[str] = set()
        self.lost = False
        """An option we do not know was met: the rest cannot be read reliably (effects are still gathered)."""

    def fail(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem
