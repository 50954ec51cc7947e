"""The agent's MCP client as the official conformance suite drives it: `conformance_client.py <server-url>`.

The suite starts a mock server per scenario and runs this with its URL (and MCP_CONFORMANCE_SCENARIO set); it
judges from what the server saw. This connects exactly as a session does (McpManager, streamable HTTP), lists
the tools, and calls them through the tool adapter, as the model would (`add_numbers` with 5 and 3 for
`tools_call`; every tool without arguments otherwise).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))

from react_agent_mini.mcp.adapter import McpTool
from react_agent_mini.mcp.config import parse_server
from react_agent_mini.mcp.manager import McpManager
from react_agent_mini.tools.base import ToolContext


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    config = parse_server("conformance", {"type": "http", "url": url}, Path.cwd(), os.environ)
    with tempfile.TemporaryDirectory() as logs:
        async with McpManager({"conformance": config}, log_dir=Path(logs), connect_timeout=20) as manager:
            for warning in await manager.wait_ready(20):
                print(warning, file=sys.stderr)
                return 1
            tools = {t.tool_name: t for t in manager.tools() if isinstance(t, McpTool)}
            print("tools:", ", ".join(tools) or "(none)")
            context = ToolContext(cwd=Path.cwd())
            if scenario == "tools_call":
                tool = tools["add_numbers"]
                output = await tool.call(tool.validate({"a": 5, "b": 3}), context)
                print("add_numbers:", output.content)
                return 1 if output.is_error else 0
            for name, tool in tools.items():  # other scenarios: their tools take no arguments
                output = await tool.call({}, context)
                print(f"{name}:", output.content)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
