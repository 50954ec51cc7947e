"""The pure parts of `ram acp`: the client's MCP servers as `.mcp.json` entries, tool cards, references to
resources, and code blocks for results (the end-to-end tests drive the rest)."""

from __future__ import annotations

from pathlib import Path

from acp.schema import AcpMcpServer, EnvVariable, HttpHeader, McpServerStdio, SseMcpServer

from react_agent_mini.acp.cards import card, code
from react_agent_mini.acp.prompt import reference
from react_agent_mini.acp.servers import mcp_json
from react_agent_mini.acp.updates import fenced


def test_client_servers_become_mcp_json_entries() -> None:
    given, warnings = mcp_json(
        [
            McpServerStdio(name="db", command="db-mcp", args=["--ro"], env=[EnvVariable(name="DB", value="x.db")]),
            SseMcpServer(
                type="sse", name="docs", url="http://127.0.0.1:9/sse", headers=[HttpHeader(name="A", value="b")]
            ),
            AcpMcpServer(type="acp", name="inproc", server_id="s1"),
        ]
    )
    assert given == {
        "db": {"command": "db-mcp", "args": ["--ro"], "env": {"DB": "x.db"}},
        "docs": {"type": "sse", "url": "http://127.0.0.1:9/sse", "headers": {"A": "b"}},
    }
    assert warnings == ['MCP server "inproc": servers reached through the client are not supported']


def test_cards_read_as_a_person_would(tmp_path: Path) -> None:
    def none(_path: Path) -> str | None:
        return None

    assert card("Bash", {"command": "echo `date`\nls -la"}, tmp_path, none).title == "Run ``echo `date` ⏎ ls -la``"
    grep = card("Grep", {"pattern": "def main", "path": "src"}, tmp_path, none)
    assert (grep.kind, grep.title) == ("search", "Grep `def main` in src")
    read = card("Read", {"file_path": "a.py", "offset": 10, "limit": 5}, tmp_path, none)
    assert read.title == "Read a.py (lines 10–14)" and read.locations[0].line == 9
    write = card("Write", {"file_path": "b.txt", "content": "new"}, tmp_path, lambda _p: "old")
    assert write.diff is not None and (write.diff.old_text, write.diff.new_text) == ("old", "new")
    assert card("mcp__web__fetch_url", {"url": "x"}, tmp_path, none).kind == "fetch"
    assert card("Bash", {"command": "x" * 500}, tmp_path, none).title.endswith("…`")
    assert code("a`b") == "``a`b``" and code("`x") == "`` `x ``"


def test_references_inside_and_outside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    assert reference((root / "src/app.py").as_uri(), root) == "@src/app.py"
    assert reference("file:///etc/hosts", root) == "/etc/hosts"
    assert reference("https://example.com/x", root) == "https://example.com/x"


def test_a_result_block_no_line_of_the_result_can_close() -> None:
    assert fenced("plain") == "```\nplain\n```"
    assert fenced("````\ninner\n````") == "`````\n````\ninner\n````\n`````"
