"""What a front end shows once its session is built, and the fail-closed rule for broken settings, stated once.

A settings file that cannot be understood leaves the permission rules unknown. Where a person can answer (the REPL,
an editor over ACP, an MCP client that takes elicitations), every tool call is asked for until the file is fixed:
the session goes on, and the file is read again before each message. Where nobody can (headless, stream-json, a
batch task, the library), nothing may run: the front end stops before the first turn (headless and stream-json
exit 2, a batch task fails its setup, the library raises).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from ..permissions.configured import HEADLESS_FAIL_CLOSED, REPL_FAIL_CLOSED

if TYPE_CHECKING:
    from ..host import SessionHost


class SetupReport(msgspec.Struct, frozen=True):
    """The lines to show (each prefixed `warning:` or `error:`), and why nothing may run, when nothing may."""

    lines: list[str]
    refused: str = ""
    """The first broken settings file and what that means, when the session must not start; "" when it may."""


def setup_report(host: SessionHost, *, can_ask: bool) -> SetupReport:
    """`host`'s setup warnings and broken settings files; `can_ask`: a person can answer permission questions, so a
    broken file means every call is asked for, not that nothing runs."""
    built = host.built
    errors = built.permission_settings.errors
    lines = [f"warning: {warning}" for warning in built.warnings]
    rule = REPL_FAIL_CLOSED if can_ask else HEADLESS_FAIL_CLOSED
    lines += [f"error: {error.text} — {rule}" for error in errors]
    refused = f"{errors[0].text} — {HEADLESS_FAIL_CLOSED}" if errors and not can_ask else ""
    return SetupReport(lines, refused)
