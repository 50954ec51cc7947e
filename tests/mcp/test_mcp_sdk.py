"""`mcp.sdk.load()` imports the SDK's client side only, and the `mcp` package still works in full afterwards.

Each check runs in a fresh interpreter: what is imported is a property of the whole process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
from react_agent_mini.mcp import sdk

def heavy():
    return sorted(m for m in sys.modules if m.startswith(("mcp.server", "starlette", "uvicorn", "mcp.client.client")))

{before}
sdk.load()
sdk.load()  # again: nothing changes
report = {{"heavy": heavy(), "lazy": [sdk.is_lazy("mcp"), sdk.is_lazy("mcp.client")]}}
from mcp.client.session import ClientSession
import mcp.client.streamable_http
report["still_lazy"] = [sdk.is_lazy("mcp"), sdk.is_lazy("mcp.client")]
from mcp import Client  # anything else importing the package gets all of it
import mcp.client
same = mcp.client.ClientSession is ClientSession
report["after"] = [sdk.is_lazy("mcp"), sdk.is_lazy("mcp.client"), Client.__name__, same]
print(json.dumps(report))
"""


def probe(before: str = "") -> dict[str, list[object]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(before=before)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, list[object]] = json.loads(done.stdout)
    return report


def test_load_skips_the_server_side_and_the_package_inits() -> None:
    report = probe()
    assert report["heavy"] == []
    assert report["lazy"] == [True, True]
    assert report["still_lazy"] == [True, True]
    assert report["after"] == [False, False, "Client", True]


@pytest.mark.parametrize("before", ["import mcp", "import mcp.client"])
def test_load_leaves_an_already_imported_package_alone(before: str) -> None:
    report = probe(before)
    assert report["lazy"] == [False, False]
    assert report["after"] == [False, False, "Client", True]
