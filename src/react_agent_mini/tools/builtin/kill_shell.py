"""KillShell: stop a background shell (Bash with `run_in_background`) and everything it started.

Claude Code's tool and field (`shell_id`). The processes are stopped as at a Bash timeout: SIGTERM, a grace, then
SIGKILL, to the process group and to what left it (`bash_background`). Output it printed before it was stopped can
still be read with BashOutput, whose status then says `killed`. A shell that has already completed but left
processes running (`server &` inside it) has those stopped.

It asks for no permission (it counts as read-only for the policy, whose deny rules still apply): it can only stop
what this session started with a Bash call that was allowed, which ram stops at exit anyway, and a model that may
start a server must be able to stop it — headless, asking would mean refusing.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from ..base import ModelTool, ToolContext, ToolOutput
from ..leftovers import stopped_line
from .bash_background import BackgroundShells


class KillShellArgs(msgspec.Struct):
    shell_id: Annotated[str, msgspec.Meta(min_length=1, description="The shell id (bash_1, ...).")]


_DESCRIPTION = """\
Stop a background shell (Bash with run_in_background) and everything it started. What it printed stays readable \
with BashOutput."""


class KillShellTool(ModelTool[KillShellArgs]):
    name = "KillShell"
    description = _DESCRIPTION
    args_model = KillShellArgs
    read_only = True  # for the permission policy: see the module docstring
    concurrency_safe = False
    status_field = "shell_id"
    path_fields = ()

    def __init__(self, shells: BackgroundShells) -> None:
        self.shells = shells

    async def call(self, args: KillShellArgs, ctx: ToolContext) -> ToolOutput:
        shell = self.shells.get(args.shell_id)
        if shell is None:
            return ToolOutput(self.shells.unknown(args.shell_id), is_error=True)
        before = shell.summary()
        if shell.status == "running":
            await shell.stop()
            return ToolOutput(f"Successfully killed shell: {shell.id} ({shell.label})")
        left = await shell.stop()
        if left:
            return ToolOutput(f"Shell {shell.id} was not running ({before}); {stopped_line(left, 'it left running')}.")
        return ToolOutput(f"Shell {shell.id} is not running ({before}); there was nothing to kill.", is_error=True)
