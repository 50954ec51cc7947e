"""The program table: every program the permission check knows, one `Spec` each (format: `../spec.py`).

`coreutils.py`, `filters.py`, `files.py` and `search.py` hold the programs that can be read-only, `git.py` git and
its subcommands, `builtins.py` the shell builtins that assign variables and evaluate some of their words as code
(`declare`, `read`, `let`...), `others.py` the programs that never are but whose spec still matters: wrappers and
shells (what they run), writers that work on whole trees (`tar`, `cp -r`), programs that reach the network, and the
tools whose "always" rules keep a subcommand (`cargo test`). A program missing from the table is not read-only, may
run anything its words name, and may touch any path they name.

Specs are compiled on first lookup, each once (a dictionary of the raw specs is built when this package is
imported, on the first Bash permission check). Their examples are checked by `examples.check_examples`, which
runs each through the whole analysis: the test suite calls it, the first permission check does not (compiling
every spec and checking every example costs about 22 ms, twice what the whole first check costs without them).
It lives beside the analysis, not here: the analysis reads this table, so the table must import nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..spec import Program, Spec, compiled
from . import builtins, coreutils, files, filters, git, others, search

_SPECS: dict[str, Spec] = {}
for _module in (coreutils, filters, files, search, git, builtins, others):
    for _spec in _module.SPECS:
        for _name in _spec.names.split():
            if _name in _SPECS:
                raise ValueError(f"{_name} is in the program table twice")
            _SPECS[_name] = _spec


def lookup(name: str) -> Program | None:
    """The compiled spec of the program called `name`, or None when the table does not know it."""
    spec = _SPECS.get(name)
    return compiled(spec, name) if spec is not None else None


def specs() -> Iterator[tuple[str, Spec]]:
    """Every (name, spec) of the table, subcommands included (`git log`)."""
    seen: set[int] = set()
    for name, spec in _SPECS.items():
        if id(spec) in seen:
            continue
        seen.add(id(spec))
        yield name, spec
        yield from _subcommands(name, spec)


def _subcommands(parent: str, spec: Spec) -> Iterator[tuple[str, Spec]]:
    for sub in spec.subcommands:
        name = f"{parent} {sub.names.split()[0]}"
        yield name, sub
        yield from _subcommands(name, sub)
