"""Echo: upstream react-agent-mini's demo tool. Returns its message unchanged; handy to see the loop work."""

from __future__ import annotations

from typing import Annotated

import msgspec

from ..base import ModelTool, ToolContext, ToolOutput


class EchoArgs(msgspec.Struct):
    message: Annotated[str, msgspec.Meta(description="The text to echo back.")]


class EchoTool(ModelTool[EchoArgs]):
    name = "Echo"
    description = "Echo a message back unchanged. Useful only to test that tool calls work."
    args_model = EchoArgs
    read_only = True
    concurrency_safe = True
    status_field = "message"
    text_fields = frozenset({"message"})

    async def call(self, args: EchoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(args.message)
