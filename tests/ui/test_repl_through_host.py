"""The REPL sees its session through `SessionHost` (issue 27, item 2): no module of `ui/` reaches into the host's
assembled parts (`host.built`, `app.Assembled`); what a command needs the host offers by name (`saved`, `cwd`,
`tool`, `hooks`, `commands`, `cut_conversation`, ...). Read from the source, as the import-graph test is."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "src" / "react_agent_mini" / "ui"


def reaches(tree: ast.AST) -> list[int]:
    """The lines of `tree` that read an attribute called `built` or name `Assembled`."""
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr == "built")
        or (isinstance(node, ast.ImportFrom) and any(alias.name == "Assembled" for alias in node.names))
    )


def test_no_ui_module_reaches_past_the_host() -> None:
    files = sorted(UI.glob("*.py"))
    assert len(files) > 20  # the REPL's modules were read
    found = {path.name: lines for path in files if (lines := reaches(ast.parse(path.read_text(encoding="utf-8"))))}
    assert found == {}


def test_a_reach_is_seen() -> None:
    tree = ast.parse("from ..app import Assembled\n\ndef f(host):\n    return host.built.session\n")
    assert reaches(tree) == [1, 4]
