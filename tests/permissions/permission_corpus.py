"""Data-driven permission cases: the format of `tests/data/permissions/*.txt`, the workspace they run in, and how one
case is judged. Used by `test_permissions_corpus.py`; it imports nothing of ours at module level, so a script can
point it at another version of the package (to count what that version gets wrong).

One case per line:

    <expect> [<rule>] :: <command>

* `allow` — in default mode, with no rules, the command runs without asking;
* `ask` — in default, acceptEdits and plan mode it is not allowed without asking (nobody is asked: headless);
* `deny <rule>` — in bypassPermissions with `<rule>` as a deny rule, that rule denies it (so it does in every mode);
* `nodeny <rule>` — in bypassPermissions with `<rule>` as a deny rule, it runs (the rule does not over-reach);
* `ro` / `rw` — the shell analysis alone says it is read-only / not read-only.

`#` starts a comment line; `json:"..."` is a command written as a JSON string (for newlines). The workspace
(`make_workspace`) holds `src/app.py`, `secrets/key.txt` and `secrets/cfg`, a planted file named `-R` in `plant/`,
`link` (a directory link) and `linkfile` (a file link) to `../outside`, `alias` (a link to `secrets`), `many/` with
more files than a glob is expanded to, and a real git repository.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EXPECTS = ("allow", "ask", "deny", "nodeny", "ro", "rw")


class Case:
    """One line of a corpus file."""

    __slots__ = ("command", "expect", "line", "rule", "source")

    def __init__(self, expect: str, rule: str, command: str, source: str, line: int) -> None:
        self.expect = expect
        self.rule = rule
        self.command = command
        self.source = source
        self.line = line

    def __repr__(self) -> str:
        rule = f" {self.rule}" if self.rule else ""
        return f"{self.source}:{self.line}: {self.expect}{rule} :: {self.command}"


def load(path: Path) -> list[Case]:
    """The cases of one corpus file (a malformed line is an error naming it)."""
    cases: list[Case] = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        head, sep, command = text.partition(" :: ")
        parts = head.split(None, 1)
        if not sep or not parts or parts[0] not in EXPECTS:
            raise ValueError(f"{path.name}:{number}: expected `<expect> [<rule>] :: <command>`")
        rule = parts[1].strip() if len(parts) > 1 else ""
        if (parts[0] in ("deny", "nodeny")) != bool(rule):
            raise ValueError(f"{path.name}:{number}: deny and nodeny take a rule, the others none")
        if command.startswith("json:"):
            command = json.loads(command[5:])
        cases.append(Case(parts[0], rule, command, path.name, number))
    return cases


def make_workspace(base: Path) -> Path:
    """The workspace every case runs in (see the module docstring); `base/outside` sits next to it."""
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("k")
    (root / "secrets" / "cfg").write_text("[alias]\n")
    (root / "plant").mkdir()
    (root / "plant" / "-R").write_text("")
    (root / "plant" / "x.txt").write_text("x")
    many = root / "many"
    many.mkdir()
    for i in range(520):
        (many / f"f{i:03}.txt").write_text("")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "linkfile").symlink_to(outside / "secret.txt")
    (root / "alias").symlink_to(root / "secrets", target_is_directory=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _Tool() -> Any:
    """The real Bash tool: what its calls touch is what it declares (the shell analysis of its command)."""
    from react_agent_mini.tools.builtin.bash import BashTool

    return BashTool()


def judge(case: Case, root: Path) -> str | None:
    """Why `case` does not hold, or None when it does."""
    from react_agent_mini.permissions.policy import Allow, Deny, PermissionPolicy
    from react_agent_mini.permissions.rules import RuleSet

    def decide(mode: Any, deny: str = "") -> Any:
        rules = RuleSet()
        if deny:
            assert rules.add("deny", deny, "corpus") is None, deny
        policy = PermissionPolicy(root, mode, rules)
        return asyncio.run(policy.decide(_Tool(), {"command": case.command}))

    if case.expect in ("ro", "rw"):
        read_only = _analyze(case.command)
        return None if read_only == (case.expect == "ro") else f"read_only is {read_only}"
    if case.expect == "allow":
        decision = decide("default")
        return None if isinstance(decision, Allow) else f"asked: {decision.message}"
    if case.expect == "ask":
        for mode in ("default", "acceptEdits", "plan"):
            if isinstance(decide(mode), Allow):
                return f"ran without asking in {mode} mode"
        return None
    decision = decide("bypassPermissions", case.rule)
    if case.expect == "deny":
        if isinstance(decision, Deny) and case.rule in decision.message:
            return None
        return "ran" if isinstance(decision, Allow) else f"denied otherwise: {decision.message}"
    return None if isinstance(decision, Allow) else f"denied: {decision.message}"


def _analyze(command: str) -> bool:
    try:
        from react_agent_mini.permissions.bash.analysis import analyze
    except ImportError:  # the package before issue 15
        from react_agent_mini.permissions.shell import analyze  # type: ignore[import-not-found,no-redef]
    return bool(analyze(command).read_only)


def corpus_files(directory: Path) -> Iterator[Path]:
    """The corpus files, in name order."""
    yield from sorted(directory.glob("*.txt"))
