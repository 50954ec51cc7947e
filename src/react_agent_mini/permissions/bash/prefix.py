"""How wide an "always" answer for a command that is not read-only is: the leading words of its argv that
`Bash(<prefix>:*)` should name, read from the program's entry in the table (`Spec.prefix`, `groups`, `runners`):

* the program for ordinary commands (`pytest -q tests` -> `pytest`, `make build` -> `make`: make's targets are
  arbitrary, and allowing make means trusting the Makefile anyway);
* program and subcommand for tools with subcommands (`git diff --stat` -> `git diff`, `cargo test`, `pip install`);
* one more word for the subcommands that group further ones (`npm run test`, `gh pr list`, `docker compose up`,
  `git stash list`, `go mod tidy`, `uv pip install`);
* for command runners (`npx`, `uv run`, `poetry run`, `pnpm exec`...) the runner plus the prefix of the command run
  (`uv run pytest -q` -> `uv run pytest`), and `python -m mod` for modules;
* the whole command text when no prefix is safe: wrappers that run an arbitrary command (`sudo`, `env`, `xargs`,
  `timeout`...), inline code (`python -c`, `bash -c`, `node -e`), options before a subcommand (`git -C x status`),
  words bash evaluates as code (`let 'a[$(...)]'`, `read 'a[$(...)]'`: `evaluated.py`), non-literal command names,
  and commands without argv.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from . import programs
from .analysis import SimpleCommand

__all__ = ["rule_prefix"]

_SUBCOMMAND_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+@-]*")
_COMMAND_WORD = re.compile(r"[A-Za-z0-9._/][A-Za-z0-9._:+@/-]*")


def rule_prefix(cmd: SimpleCommand) -> str:
    """The prefix an "always allow" answer should record for this simple command, Claude Code style: `git diff` for
    `git diff --stat HEAD`, `npm run test` for `npm run test -- -x`, `pytest` for `pytest -q tests`, `make` for
    `make build`; the caller records `Bash(<prefix>:*)`. The prefix is built from `argv`, so leading assignments are
    not part of it. See the module docstring for the full policy."""
    words = _prefix_words(cmd.argv)
    if words is None or (cmd.usage is not None and cmd.usage.evaluated):
        return cmd.text  # `let 'a[$(rm x)]'`: `Bash(let:*)` would allow whatever a later subscript runs
    return " ".join(shlex.quote(w) for w in words)


def _prefix_words(argv: Sequence[str]) -> list[str] | None:
    """The leading words to allow, or None when only the exact command is safe to record."""
    if not argv or not _COMMAND_WORD.fullmatch(argv[0]):
        return None
    head = argv[0]
    program = programs.lookup(head.rsplit("/", 1)[-1])
    kind = program.spec.prefix if program is not None else "word"
    if kind == "exact":
        return None
    if kind == "runner":
        inner = _prefix_words(argv[1:]) if len(argv) > 1 else []
        return None if inner is None else [head, *inner]
    if kind == "interpreter":
        return _interpreter(argv)
    if program is None or kind != "subcommand" or len(argv) == 1:
        return [head]
    sub = argv[1]
    if not _SUBCOMMAND_WORD.fullmatch(sub):
        return None  # options (or a toolchain like `cargo +nightly`) before the subcommand
    if sub in program.spec.runners:
        if len(argv) == 2:
            return [head, sub]
        inner = _prefix_words(argv[2:])
        return None if inner is None else [head, sub, *inner]
    if sub in program.spec.groups and len(argv) > 2:
        return [head, sub, argv[2]] if _SUBCOMMAND_WORD.fullmatch(argv[2]) else None
    return [head, sub]


def _interpreter(argv: Sequence[str]) -> list[str] | None:
    head = argv[0]
    if len(argv) == 1:
        return [head]
    if argv[1] == "-m" and len(argv) > 2 and _SUBCOMMAND_WORD.fullmatch(argv[2]):
        module = _prefix_words(argv[2:])
        return [head, "-m", argv[2]] if module is None else [head, "-m", *module]
    if argv[1].startswith("-"):
        return None  # -c / -e code, or options we do not interpret
    return [head, argv[1]]
