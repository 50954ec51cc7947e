"""What one turn may do beyond the session's settings: a custom command's `allowed-tools` and `model`.

`SessionHost.turn` applies a `TurnScope` for the turn it runs; `invoke` applies its rules while it runs the command's
`` !`…` `` and `@file` expansions. Neither module imports the other for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import msgspec

from ..permissions.policy import PermissionPolicy


class TurnScope(msgspec.Struct, frozen=True):
    """What one turn may do beyond the session's settings (a custom command's frontmatter)."""

    allowed_tools: tuple[str, ...] = ()
    """Permission rules allowed without asking until the turn ends."""
    source: str = "command"
    """Whom those rules are from (`/review`), as permission messages name them."""
    model: str = ""
    """The model of this turn's calls (empty: the session's)."""
    notes: tuple[str, ...] = ()
    """Lines to show before the turn (what of the command was left out, and why)."""
    typed: str = ""
    """What the user typed (`/review src/app.py`): the turn's message keeps it beside the expanded text."""


@contextlib.contextmanager
def allowing(policy: PermissionPolicy, rules: Sequence[str], source: str) -> Iterator[list[str]]:
    """`rules` allowed (recorded under `source`) until the block ends; the lines about rules that do not parse. A
    settings file read again meanwhile drops them (only the session's own rules are carried over)."""
    problems = [problem for text in rules if (problem := policy.rules.add("allow", text, source))]
    held = policy.rules
    try:
        yield problems
    finally:
        for text in rules:
            held.remove("allow", text, source)
