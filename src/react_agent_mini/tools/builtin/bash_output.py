"""BashOutput: what a background shell (Bash with `run_in_background`) printed since the last look, and its status.

Claude Code's tool, fields and result: `bash_id`, an optional `filter` regex (only the lines it matches are shown;
the others are used up), and a result of `<status>` (running, completed or killed), `<exit_code>` once there is one,
`<stdout>` and `<stderr>` when there is new output, and `<timestamp>`. The shells and their buffers are
`bash_background`'s; this module only reads them. It reads only, so it needs no permission.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from ..base import ModelTool, ToolContext, ToolInputError, ToolOutput
from .bash_background import BackgroundShells
from .bash_common import OUTPUT_LIMIT


class BashOutputArgs(msgspec.Struct):
    bash_id: Annotated[str, msgspec.Meta(min_length=1, description="The shell id (bash_1, ...).")]
    filter: Annotated[
        str, msgspec.Meta(description="Only lines matching this regex (the others are dropped for good).")
    ] = ""


_DESCRIPTION = f"""\
New output of a background shell (Bash with run_in_background) since the last look, its status (running, \
completed or killed) and exit code. Each stream keeps at most {OUTPUT_LIMIT} characters between looks (head and \
tail around an omission marker)."""


class BashOutputTool(ModelTool[BashOutputArgs]):
    name = "BashOutput"
    description = _DESCRIPTION
    args_model = BashOutputArgs
    read_only = True
    concurrency_safe = True
    status_field = "bash_id"
    path_fields = ()

    def __init__(self, shells: BackgroundShells) -> None:
        self.shells = shells

    def validate(self, raw: Mapping[str, Any]) -> BashOutputArgs:
        """As the base class, and the filter must be a regular expression."""
        args = super().validate(raw)
        if args.filter:
            try:
                re.compile(args.filter)
            except re.error as exc:
                raise ToolInputError(f"filter: not a valid regular expression ({exc})") from None
        return args

    async def call(self, args: BashOutputArgs, ctx: ToolContext) -> ToolOutput:
        shell = self.shells.get(args.bash_id)
        if shell is None:
            return ToolOutput(self.shells.unknown(args.bash_id), is_error=True)
        return ToolOutput(shell.read(re.compile(args.filter) if args.filter else None))
