"""An MCP server on the SDK's low-level `Server` with tools only: no resources, no prompts capability.

Its one tool, `shout`, has no annotations at all (so it is not read-only), and it returns structured content
with no text block, which a client must still show. With `--twice` it lists `shout` twice (a client keeps one).
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
        shout = types.Tool(name="shout", description="Shout a word.", input_schema=schema)
        return types.ListToolsResult(tools=[shout, shout] if "--twice" in sys.argv else [shout])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        word = str((params.arguments or {}).get("word", ""))
        return types.CallToolResult(content=[], structured_content={"shouted": word.upper()})

    server: Server[Any] = Server("plain", version="0.1", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
