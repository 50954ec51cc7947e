"""The trust store, the gate and the inventory, on real files (no process is started here)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from react_agent_mini.trust.gate import TrustGate, trust_gate
from react_agent_mini.trust.items import make_item
from react_agent_mini.trust.store import read_store, record_trust, revoke_trust, store_path
from react_agent_mini.trust_review.inventory import describe, project_items


def hostile(root: Path) -> Path:
    """A folder whose configuration has one of every part that needs trust."""
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash", "Read(//**)"],
                    "deny": ["Read(./secret)"],
                    "defaultMode": "acceptEdits",
                },
                "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch started"}]}]},
            }
        )
    )
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch x"]}}}))
    (root / ".claude" / "commands" / "go.md").write_text("---\nallowed-tools: Bash(touch:*)\n---\ngo\n")
    return root


def test_a_digest_covers_everything_a_part_says() -> None:
    one = make_item("hook", ".claude/settings.json", "label", {"command": "make", "timeout": 60})
    assert make_item("hook", ".claude/settings.json", "other label", {"command": "make", "timeout": 60}).key == one.key
    for changed in (
        make_item("hook", ".claude/settings.json", "label", {"command": "make ", "timeout": 60}),
        make_item("hook", ".claude/settings.json", "label", {"command": "make", "timeout": 61}),
        make_item("hook", ".agents/settings.json", "label", {"command": "make", "timeout": 60}),
        make_item("mcp", ".claude/settings.json", "label", {"command": "make", "timeout": 60}),
    ):
        assert changed.key != one.key


def test_the_inventory_lists_every_part_that_needs_trust_and_nothing_that_only_narrows(tmp_path: Path) -> None:
    items = project_items(hostile(tmp_path), os.environ)
    assert sorted(item.kind for item in items) == ["allow", "allow", "command", "hook", "mcp", "mode"]
    labels = {item.label for item in items}
    assert {"Bash", "Read(//**)", "defaultMode: acceptEdits", "SessionStart: touch started"} <= labels
    assert "evil: sh -c touch x" in labels and "/go allowed-tools: Bash(touch:*)" in labels
    text = "\n".join(describe(items))
    assert "run these hooks on this machine" in text and ".mcp.json  evil: sh -c touch x" in text
    assert "Read(./secret)" not in text  # a deny rule needs no trust


def test_an_untrusted_folder_permits_nothing_and_remembers_what_it_left_out(tmp_path: Path) -> None:
    gate = trust_gate(hostile(tmp_path))
    items = project_items(tmp_path, os.environ)
    assert not any(gate.permits(item) for item in items)
    assert not any(gate.permits(item) for item in items)  # asked twice, listed once
    assert len(gate.withheld) == len(items)
    line = gate.left_out_line()
    assert line is not None and "not trusted yet" in line and "2 allow rules" in line and "1 MCP server" in line
    assert "ram trust" in line
    assert gate.left_out_line() is None  # nothing new since


def test_trusting_approves_exactly_the_parts_there_were(tmp_path: Path) -> None:
    hostile(tmp_path)
    items = project_items(tmp_path, os.environ)
    record_trust(tmp_path, [item.key for item in items])
    gate = trust_gate(tmp_path)
    assert all(gate.permits(item) for item in items) and gate.left_out_line() is None
    settings = tmp_path / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "curl evil"}]}]
    settings.write_text(json.dumps(data))
    later = trust_gate(tmp_path)
    fresh = project_items(tmp_path, os.environ)
    assert [item.label for item in fresh if not later.permits(item)] == ["Stop: curl evil"]
    line = later.left_out_line()
    assert line is not None and "changed since you trusted it" in line and "1 hook" in line
    assert revoke_trust(tmp_path) and not revoke_trust(tmp_path)
    assert not trust_gate(tmp_path).permits(fresh[0])


def test_always_and_trusted_folders_trust_a_whole_tree(tmp_path: Path) -> None:
    inner = tmp_path / "own" / "deep"
    inner.mkdir(parents=True)
    item = make_item("allow", ".claude/settings.json", "Bash", "Bash")
    assert not trust_gate(inner).permits(item)
    record_trust(tmp_path / "own", (), always=True)
    assert trust_gate(inner).permits(item) and trust_gate(tmp_path / "own").permits(item)
    assert not trust_gate(tmp_path).permits(item)  # the tree below, not the folder above
    revoke_trust(tmp_path / "own")
    settings = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"trustedFolders": [str(tmp_path / "own"), "relative/path"]}))
    gate = trust_gate(inner)
    assert gate.permits(item) and gate.everything
    assert any("relative/path" in warning for warning in trust_gate(tmp_path).warnings)
    assert not trust_gate(inner, explicit=False).permits(item)  # a program may refuse the user's trees
    assert trust_gate(tmp_path, explicit=True).permits(item)


def test_a_broken_store_trusts_nothing_and_says_so_once(tmp_path: Path) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    gate = trust_gate(tmp_path)
    assert not gate.permits(make_item("allow", "x", "Bash", "Bash"))
    assert len(gate.warnings) == 1 and "cannot be read" in gate.warnings[0]
    record_trust(tmp_path, ["k"])  # the next write replaces it
    folders, problem = read_store()
    assert problem is None and folders[str(tmp_path.resolve())].approved == frozenset({"k"})
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_the_gate_forgets_what_the_user_approves_meanwhile(tmp_path: Path) -> None:
    gate = TrustGate(tmp_path)
    item = make_item("hook", "f", "l", "c")
    assert not gate.permits(item)
    gate.approve(frozenset({item.key}))
    assert gate.permits(item) and gate.trusted and gate.left_out_line() is None
