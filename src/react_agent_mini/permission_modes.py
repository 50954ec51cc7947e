"""The permission modes, in one table: ram's own four, and the two only the Claude Agent SDK passes.

A session runs in one of `PermissionMode` (`permissions.policy` says what each allows). The SDK may also pass
`dontAsk` (ask nobody: what would be asked is denied) and `auto`; ram runs both as its `default`, and a driving
program that chose one is told it back (`stream_json.driver`). Every list of modes is read from here: the rule
grammar's (`permissions.rules`: the settings files' `defaultMode`, `Agent(permission_mode=...)`), ACP's
(`acp.main`, `acp.options`: its names and descriptions for an editor), and the SDK's, which `--permission-mode`
takes (`cli`, `batch.cli`, with the help MODES gives) and a driving program may switch to. A mode added to a
Literal below, with its row in MODES and its place in the tuples, is in all of them (a test checks that each list
is this one, and that the tuples are the Literals).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s: `ram --help` reads this table, and importing typing costs it ≈4 ms
if TYPE_CHECKING:
    from typing import Literal, TypeAlias

    PermissionMode: TypeAlias = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
    """The modes a session runs in."""
    SdkOnlyMode: TypeAlias = Literal["dontAsk", "auto"]
    """The modes only the SDK passes: ram runs them as `default`."""
    SdkPermissionMode: TypeAlias = PermissionMode | SdkOnlyMode
else:  # at run time they are what the values are
    PermissionMode = SdkOnlyMode = SdkPermissionMode = str


class Mode:
    """How a mode is shown: a few words for `--permission-mode`'s help, a name and a sentence for an editor."""

    __slots__ = ("description", "help", "title")

    def __init__(self, help: str, title: str, description: str) -> None:
        self.help, self.title, self.description = help, title, description


MODES: dict[SdkPermissionMode, Mode] = {
    "default": Mode(
        "ask before changes (headless: deny)",
        "Default",
        "Ask before changing files or running commands that are not read-only",
    ),
    "acceptEdits": Mode(
        "allow edits inside the workspace",
        "Accept edits",
        "Edit files inside the workspace without asking; ask before the rest",
    ),
    "plan": Mode("read-only", "Plan", "Read-only: explore and plan, change nothing"),
    "bypassPermissions": Mode(
        "allow everything not denied by a rule",
        "Bypass permissions",
        "Run everything that no deny rule forbids, without asking",
    ),
    "dontAsk": Mode(
        "deny what would be asked, even with a driving program",
        "Don't ask",
        "Deny what would be asked, without asking anyone",
    ),
    "auto": Mode("as default", "Auto", "As Default"),
}
"""Every mode, in order: ram's, then the SDK's."""

PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
SDK_ONLY_MODES: tuple[SdkOnlyMode, ...] = ("dontAsk", "auto")
SDK_PERMISSION_MODES: tuple[SdkPermissionMode, ...] = (*PERMISSION_MODES, *SDK_ONLY_MODES)
"""What `--permission-mode` takes, and a driving program may switch to."""


def is_sdk_only(mode: str) -> bool:
    """`dontAsk` or `auto`: a mode ram runs as `default`."""
    return mode in SDK_ONLY_MODES


def modes_help() -> str:
    """`default: ask before changes (headless: deny); acceptEdits: …`: every mode, in order, with its help."""
    return "; ".join(f"{mode}: {MODES[mode].help}" for mode in SDK_PERMISSION_MODES)
