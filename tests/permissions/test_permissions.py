"""Permissions: rules, settings files, and the policy every tool call passes through, on real files and links."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent_mini.abort import AbortSignal
from react_agent_mini.events import ToolFinished
from react_agent_mini.messages import ToolUseBlock
from react_agent_mini.permissions.bash import analysis as shell
from react_agent_mini.permissions.bash.prefix import rule_prefix
from react_agent_mini.permissions.policy import (
    NOT_READ_ONLY,
    REJECT_MESSAGE,
    Allow,
    Answer,
    Decision,
    Deny,
    PermissionPolicy,
    PermissionRequest,
    allow_read_only,
)
from react_agent_mini.permissions.rules import RuleError, RuleKind, RuleSet, parse_rule, split_rule_list
from react_agent_mini.permissions.settings import (
    add_cli_rules,
    load_permissions,
    parse_mode,
    parse_rule_list,
)
from react_agent_mini.settings_files import user_settings_path
from react_agent_mini.tools.base import ModelTool, ShellState, Tool, ToolContext, ToolOutput, ToolRegistry
from react_agent_mini.tools.builtin.bash import BashTool
from react_agent_mini.tools.builtin.echo import EchoTool
from react_agent_mini.tools.builtin.edit import EditTool
from react_agent_mini.tools.builtin.glob import GlobTool
from react_agent_mini.tools.builtin.grep import GrepTool
from react_agent_mini.tools.builtin.read import ReadTool
from react_agent_mini.tools.builtin.write import WriteTool
from react_agent_mini.tools.runner import SKIPPED, ToolRun, run_tool_calls
from react_agent_mini.web.fetch_tool import WebFetchTool

# ---------------------------------------------------------------- fixtures and helpers


class FakeTool:
    """Just what the policy looks at: a name and the read-only flag."""

    description = "fake"
    concurrency_safe = False

    def __init__(self, name: str, read_only: bool) -> None:
        self.name = name
        self.read_only = read_only

    def input_schema(self) -> Mapping[str, Any]:
        return {"type": "object"}

    def validate(self, raw: Mapping[str, Any]) -> Any:
        return raw

    async def call(self, args: Any, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("ran")

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        return ""


READ = ReadTool()
GLOB = GlobTool()
GREP = GrepTool()
WRITE = WriteTool()
EDIT = EditTool()
BASH = BashTool()
MCP_RO = FakeTool("mcp__docs__search", True)  # tools that declare nothing about themselves, as an MCP tool
MCP_RW = FakeTool("mcp__github__create_issue", False)
ECHO = EchoTool()
FETCH = WebFetchTool()
BUILT_IN: dict[str, Tool] = {t.name: t for t in (READ, GLOB, GREP, WRITE, EDIT, BASH, ECHO, FETCH)}
"""The real tools, by name: what a call of each touches is what the tool declares (`tools.declared`)."""


class Asker:
    """Answers from a script and keeps every request it was shown."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Answer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else "no"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with files, a secrets folder, and links that escape it; `outside/` sits next to it."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("k")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "linkfile").symlink_to(outside / "secret.txt")
    (root / "alias").symlink_to(root / "secrets", target_is_directory=True)
    return root


def rules(source: str = "test", **lists: list[str]) -> RuleSet:
    ruleset = RuleSet()
    for kind in ("allow", "ask", "deny"):
        for text in lists.get(kind, []):
            assert ruleset.add(kind, text, source) is None, text
    return ruleset


def policy(root: Path, asker: Asker | None = None, **kwargs: Any) -> PermissionPolicy:
    return PermissionPolicy(root, kwargs.pop("mode", "default"), kwargs.pop("rules", None), asker, **kwargs)


async def decide(p: PermissionPolicy, tool: Tool, **args: Any) -> Decision:
    return await p(tool, args)


def verdict(ruleset: RuleSet, root: Path, tool: str, read_only: bool = False, **args: Any) -> str | None:
    return ruleset.evaluate(BUILT_IN.get(tool) or FakeTool(tool, read_only), args, root=root, read_only=read_only)


# ---------------------------------------------------------------- rule syntax


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Bash", "Bash"),
        ("Bash(npm run test:*)", "Bash(npm run test:*)"),
        ("  Edit( src/** )  ", "Edit(src/**)"),
        ("Bash(*)", "Bash"),
        ("mcp__github", "mcp__github"),
        ("mcp__github__*", "mcp__github__*"),
        ("WebFetch(domain:example.com)", "WebFetch(domain:example.com)"),
        ("Read(my file (1).txt)", "Read(my file (1).txt)"),
    ],
)
def test_parse_rule_canonical_text(text: str, canonical: str) -> None:
    assert parse_rule(text).text == canonical


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("Bash(", "expected Tool"),
        ("Bash()", "empty specifier"),
        ("Ba sh", "invalid tool name"),
        ("Echo(x)", "take no specifier"),
        ("mcp__srv__tool(x)", "take no specifier"),
        ("Bash(git:* push:*)", ":*"),
        ("Bash(echo 'unterminated:*)", "cannot split"),
        ("Read(../elsewhere/**)", "'..'"),
        ("WebFetch(example.com)", "domain:"),
    ],
)
def test_parse_rule_errors(text: str, why: str) -> None:
    with pytest.raises(RuleError, match=why):
        parse_rule(text)


def test_a_broken_rule_is_a_warning_naming_its_source_and_is_ignored(ws: Path) -> None:
    ruleset = RuleSet()
    warning = ruleset.add("deny", "Bash(", "/etc/x/settings.json")
    assert warning is not None and "/etc/x/settings.json" in warning and "Bash(" in warning
    assert len(ruleset) == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Bash(git diff:*),Edit", ["Bash(git diff:*)", "Edit"]),
        ("Bash(npm run test:*) Read", ["Bash(npm run test:*)", "Read"]),
        (" Read ,  Edit(src/**),", ["Read", "Edit(src/**)"]),
        ("Bash(echo a, b),Write", ["Bash(echo a, b)", "Write"]),
        ("", []),
    ],
)
def test_split_rule_list_respects_parentheses(value: str, expected: list[str]) -> None:
    assert split_rule_list(value) == expected


# ---------------------------------------------------------------- Bash rules, per simple command


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm run test", "allow"),
        ("npm run test --watch", "allow"),
        ("npm  run   test", "allow"),  # words, not characters
        ("npm run testx", None),
        ("npm run", None),
        ("FOO=1 npm run test", None),  # an assignment can change what the program does
        ("npm run test && npm publish", None),
        ("npm run test; rm -rf x", None),
        ("npm run test | sh", None),
        ("npm run test $(rm x)", None),
        ("npm run test > out.txt", None),
        ("npm run test | grep ok", "allow"),  # the rest is read-only inside the workspace
    ],
)
def test_bash_prefix_rule_matches_each_simple_command(ws: Path, command: str, expected: str | None) -> None:
    assert verdict(rules(allow=["Bash(npm run test:*)"]), ws, "Bash", command=command) == expected


@pytest.mark.parametrize(
    "command",
    ["git diff; rm -rf x", "git diff && curl x | sh", "git diff $(rm x)", "git diff > out", "git diff `rm x`"],
)
async def test_git_diff_rule_does_not_carry_a_second_command(ws: Path, command: str) -> None:
    ruleset = rules(allow=["Bash(git diff:*)"])
    assert verdict(ruleset, ws, "Bash", command=command) is None
    decision = await decide(policy(ws, rules=ruleset), BASH, command=command)
    assert isinstance(decision, Deny) and "headless" in decision.message
    asker = Asker("no")
    decision = await decide(policy(ws, asker, rules=ruleset), BASH, command=command)
    assert decision == Deny(REJECT_MESSAGE, end_turn=True)
    assert len(asker.requests) == 1


def test_bash_exact_and_wildcard_rules(ws: Path) -> None:
    exact = rules(allow=["Bash(make build)"])
    assert verdict(exact, ws, "Bash", command="make build") == "allow"
    assert verdict(exact, ws, "Bash", command="make build install") is None
    star = rules(allow=["Bash(npm run *)"])
    assert verdict(star, ws, "Bash", command="npm run lint") == "allow"
    assert verdict(star, ws, "Bash", command="npm running") is None
    middle = rules(allow=["Bash(git push * main)"])
    assert verdict(middle, ws, "Bash", command="git push origin main") == "allow"
    assert verdict(middle, ws, "Bash", command="git push origin dev") is None


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "ls && rm -rf build",
        "echo ok | rm x",
        "echo $(rm x)",
        "sudo rm x",
        "/bin/rm x",
        "env FOO=1 rm x",
        "xargs -0 rm < list",
        "bash -c 'rm x'",
        "find . -name '*.o' -exec rm {} ;",
    ],
)
def test_bash_deny_rule_catches_any_simple_command(ws: Path, command: str) -> None:
    assert verdict(rules(deny=["Bash(rm:*)"], allow=["Bash"]), ws, "Bash", command=command) == "deny"


def test_bash_deny_does_not_match_other_programs(ws: Path) -> None:
    ruleset = rules(deny=["Bash(rm:*)"])
    assert verdict(ruleset, ws, "Bash", command="rmdir build") is None
    assert verdict(ruleset, ws, "Bash", command="echo rmdir") is None
    # naming the program anywhere in a line that runs a program not known to be inert is enough (fail closed:
    # `split --filter='rm f'` runs it); echo only prints its words (issue 15: `echo 'rm -rf x'` is not `rm`)
    assert verdict(ruleset, ws, "Bash", command="mytool rm") == "deny"
    assert verdict(ruleset, ws, "Bash", command="echo rm") is None
    assert verdict(ruleset, ws, "Bash", command="echo 'rm -rf x'") is None


def test_bash_ask_beats_allow_and_deny_beats_both(ws: Path) -> None:
    ruleset = rules(allow=["Bash"], ask=["Bash(git push:*)"])
    assert verdict(ruleset, ws, "Bash", command="git status && git push") == "ask"
    assert verdict(ruleset, ws, "Bash", command="git status") == "allow"
    ruleset.add("deny", "Bash(git push --force:*)", "test")
    assert verdict(ruleset, ws, "Bash", command="git push --force origin") == "deny"


def test_writing_redirection_needs_a_whole_rule(ws: Path) -> None:
    assert verdict(rules(allow=["Bash(echo:*)"]), ws, "Bash", command="echo hi > f.txt") is None
    assert verdict(rules(allow=["Bash"]), ws, "Bash", command="echo hi > f.txt") == "allow"
    assert verdict(rules(allow=["Bash(echo hi > f.txt)"]), ws, "Bash", command="echo hi > f.txt") == "allow"
    assert verdict(rules(allow=["Bash(echo hi > f.txt)"]), ws, "Bash", command="echo hi > g.txt") is None


def test_unparseable_command_is_never_allowed_by_a_scoped_rule(ws: Path) -> None:
    command = UNPARSEABLE
    assert not shell.analyze(command).parsed
    assert verdict(rules(allow=["Bash(echo:*)"]), ws, "Bash", command=command) is None
    # the deny check still reads the raw text
    assert verdict(rules(deny=["Bash(rm:*)"]), ws, "Bash", command=command + " ; rm -rf x") == "deny"


UNPARSEABLE = 'echo "unterminated'


def test_bash_commands_naming_denied_files(ws: Path) -> None:
    ruleset = rules(deny=["Read(./secrets/**)", "Edit(src/**)"])
    assert verdict(ruleset, ws, "Bash", command="cat secrets/key.txt") == "deny"
    assert verdict(ruleset, ws, "Bash", command="grep -r k alias/") == "deny"  # through the link, too
    assert verdict(ruleset, ws, "Bash", command="rm src/app.py") == "deny"
    assert verdict(ruleset, ws, "Bash", command="echo x > src/app.py") == "deny"
    assert verdict(ruleset, ws, "Bash", command="cat src/app.py") is None  # reading is not editing


# ---------------------------------------------------------------- file rules


@pytest.mark.parametrize(
    "raw", ["secrets/key.txt", "./secrets/key.txt", "src/../secrets/key.txt", "alias/key.txt", "secrets/new/x"]
)
def test_read_deny_rule_follows_dots_and_links(ws: Path, raw: str) -> None:
    assert verdict(rules(deny=["Read(./secrets/**)"]), ws, "Read", True, file_path=raw) == "deny"


def test_read_rules_govern_glob_and_grep(ws: Path) -> None:
    ruleset = rules(deny=["Read(./secrets/**)"])
    assert verdict(ruleset, ws, "Glob", True, pattern="*", path="secrets") == "deny"
    assert verdict(ruleset, ws, "Glob", True, pattern="secrets/*") == "deny"
    assert verdict(ruleset, ws, "Grep", True, pattern="k", path="alias") == "deny"
    assert verdict(ruleset, ws, "Grep", True, pattern="k", path="src") is None
    assert verdict(ruleset, ws, "Read", True, file_path="src/app.py") is None


def test_edit_rules_govern_write_but_write_rules_only_write(ws: Path) -> None:
    assert verdict(rules(deny=["Edit(src/**)"]), ws, "Write", file_path="src/new.py") == "deny"
    assert verdict(rules(allow=["Edit(src/**)"]), ws, "Write", file_path="src/new.py") == "allow"
    assert verdict(rules(allow=["Write(docs/**)"]), ws, "Write", file_path="docs/a.md") == "allow"
    assert verdict(rules(allow=["Write(docs/**)"]), ws, "Edit", file_path="docs/a.md") is None


def test_allow_rule_is_matched_against_the_resolved_path(ws: Path) -> None:
    (ws / "src" / "out").symlink_to(ws.parent / "outside", target_is_directory=True)
    ruleset = rules(allow=["Edit(src/**)"])
    assert verdict(ruleset, ws, "Edit", file_path="src/app.py") == "allow"
    assert verdict(ruleset, ws, "Edit", file_path="src/out/secret.txt") is None
    assert verdict(ruleset, ws, "Edit", file_path="src/../../outside/secret.txt") is None


@pytest.mark.parametrize(
    ("pattern", "raw", "hit"),
    [
        ("*.env", ".env", True),
        ("*.env", "config/prod/app.env", True),  # no slash: any depth
        ("*.env", "config/env.txt", False),
        ("config", "config/a/b.txt", True),  # a folder covers what is inside it
        ("./app.py", "app.py", True),
        ("./app.py", "src/app.py", False),  # anchored at the workspace
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/sub/app.py", False),
        ("src/**/*.py", "src/sub/deep/app.py", True),
        ("src/**/*.py", "src/app.py", True),
        ("data/[ab].csv", "data/a.csv", True),
        ("data/[!ab].csv", "data/a.csv", False),
        (r"data/\[x\].csv", "data/[x].csv", True),
    ],
)
def test_gitignore_style_patterns(ws: Path, pattern: str, raw: str, hit: bool) -> None:
    assert (verdict(rules(deny=[f"Edit({pattern})"]), ws, "Edit", file_path=raw) == "deny") is hit


def test_absolute_home_and_project_rooted_patterns(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    outside = tmp_path / "outside"
    assert verdict(rules(deny=[f"Read(/{outside}/**)"]), ws, "Read", True, file_path="link/secret.txt") == "deny"
    assert verdict(rules(deny=["Read(~/notes/**)"]), ws, "Read", True, file_path="~/notes/a.md") == "deny"
    assert verdict(rules(deny=["Read(~/notes/**)"]), ws, "Read", True, file_path=f"{home}/other.md") is None
    # `/x` is relative to the project the rule's settings file belongs to
    project = RuleSet()
    project.add("deny", "Edit(/src/**)", "settings.json", project_root=ws)
    assert verdict(project, ws / "src", "Edit", file_path="app.py") == "deny"


def test_mcp_and_named_tool_rules(ws: Path) -> None:
    server = rules(allow=["mcp__github"])
    assert verdict(server, ws, "mcp__github__create_issue") == "allow"
    assert verdict(server, ws, "mcp__githubx__create_issue") is None
    assert verdict(rules(allow=["mcp__github__*"]), ws, "mcp__github__close") == "allow"
    one = rules(allow=["mcp__github__create_issue"])
    assert verdict(one, ws, "mcp__github__create_issue") == "allow"
    assert verdict(one, ws, "mcp__github__delete_repo") is None
    assert verdict(rules(deny=["Echo"]), ws, "Echo", True, text="x") == "deny"
    fetch = rules(deny=["WebFetch(domain:example.com)"])
    assert verdict(fetch, ws, "WebFetch", True, url="https://api.example.com/x") == "deny"
    assert verdict(fetch, ws, "WebFetch", True, url="https://example.org/") is None


def test_deny_beats_ask_beats_allow_for_files(ws: Path) -> None:
    ruleset = rules(allow=["Edit"], ask=["Edit(src/**)"], deny=["Edit(src/app.py)"])
    assert verdict(ruleset, ws, "Edit", file_path="src/app.py") == "deny"
    assert verdict(ruleset, ws, "Edit", file_path="src/b.py") == "ask"
    assert verdict(ruleset, ws, "Edit", file_path="README.md") == "allow"


# ---------------------------------------------------------------- the policy matrix

KINDS: dict[str, tuple[Tool, dict[str, Any]]] = {
    "read_in": (READ, {"file_path": "src/app.py"}),
    "read_out": (READ, {"file_path": "../outside/secret.txt"}),
    "write_in": (WRITE, {"file_path": "src/new.py", "content": "x"}),
    "write_out": (WRITE, {"file_path": "link/new.txt", "content": "x"}),
    "edit_in": (EDIT, {"file_path": "src/app.py", "old_string": "hi", "new_string": "yo"}),
    "edit_out": (EDIT, {"file_path": "linkfile", "old_string": "s", "new_string": "t"}),
    "bash_ro": (BASH, {"command": "ls src && grep -n hi src/app.py"}),
    "bash_rw": (BASH, {"command": "touch src/x.py"}),
    "mcp_ro": (MCP_RO, {"query": "asyncio"}),
    "mcp_rw": (MCP_RW, {"title": "bug"}),
}
# what each mode does with each kind of call when no rule speaks: allow, ask or deny (plan mode)
EXPECTED = {
    "default": "allow ask ask ask ask ask allow ask allow ask",
    "acceptEdits": "allow ask allow ask allow ask allow ask allow ask",
    "plan": "allow ask deny deny deny deny allow deny allow deny",
    "bypassPermissions": "allow allow allow allow allow allow allow allow allow allow",
}
MATRIX = [
    (mode, kind, outcome) for mode, row in EXPECTED.items() for kind, outcome in zip(KINDS, row.split(), strict=True)
]


@pytest.mark.parametrize(("mode", "kind", "outcome"), MATRIX)
@pytest.mark.parametrize("answer", [None, "yes", "always", "no"])
async def test_permission_matrix(ws: Path, mode: Any, kind: str, outcome: str, answer: Answer | None) -> None:
    tool, args = KINDS[kind]
    asker = Asker(answer) if answer else None
    decision = await policy(ws, asker, mode=mode)(tool, args)
    asked = asker.requests if asker else []
    if outcome == "allow":
        assert decision == Allow() and not asked
    elif outcome == "deny":
        assert isinstance(decision, Deny) and decision.message.startswith("Plan mode is read-only") and not asked
    elif asker is None:
        assert isinstance(decision, Deny) and "headless mode cannot ask" in decision.message
        assert not decision.end_turn
    else:
        assert len(asked) == 1 and asked[0].tool == tool.name
        assert decision == (Deny(REJECT_MESSAGE, end_turn=True) if answer == "no" else Allow())


@pytest.mark.parametrize("kind", ["write_in", "edit_in", "bash_rw", "mcp_rw"])
async def test_allow_write_allows_changes_inside_the_workspace(ws: Path, kind: str) -> None:
    tool, args = KINDS[kind]
    assert await policy(ws, allow_write=True)(tool, args) == Allow()


@pytest.mark.parametrize("kind", ["write_out", "edit_out", "read_out"])
async def test_allow_write_still_asks_outside_the_workspace(ws: Path, kind: str) -> None:
    tool, args = KINDS[kind]
    decision = await policy(ws, allow_write=True)(tool, args)
    assert isinstance(decision, Deny) and "headless mode cannot ask" in decision.message
    assert "ALLOW_WRITE" not in decision.message  # it would not help


async def test_allow_write_does_not_override_an_ask_rule(ws: Path) -> None:
    p = policy(ws, allow_write=True, rules=rules(ask=["Edit(src/**)"]))
    decision = await decide(p, EDIT, file_path="src/app.py")
    assert isinstance(decision, Deny) and "Edit(src/**)" in decision.message


async def test_deny_rule_beats_bypass_permissions(ws: Path) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Bash(git push:*)", "Read(./secrets/**)"]))
    pushed = await decide(p, BASH, command="git status && git push origin main")
    assert isinstance(pushed, Deny) and "Bash(git push:*)" in pushed.message and "(from test)" in pushed.message
    assert not pushed.end_turn
    read = await decide(p, READ, file_path="alias/key.txt")
    assert isinstance(read, Deny) and "Read(./secrets/**)" in read.message
    assert await decide(p, BASH, command="rm -rf /tmp/x") == Allow()


async def test_plan_mode_beats_allow_rules_but_not_reading(ws: Path) -> None:
    p = policy(ws, mode="plan", rules=rules(allow=["Edit", "Bash"]))
    edit = await decide(p, EDIT, file_path="src/app.py")
    assert isinstance(edit, Deny) and "Plan mode is read-only" in edit.message and "Edit src/app.py" in edit.message
    assert isinstance(await decide(p, BASH, command="git commit -m x"), Deny)
    assert await decide(p, BASH, command="git log --oneline") == Allow()
    assert await decide(p, READ, file_path="src/app.py") == Allow()


async def test_ask_rule_asks_even_in_accept_edits_and_always_then_means_yes(ws: Path) -> None:
    asker = Asker("always", "yes")
    p = policy(ws, asker, mode="acceptEdits", rules=rules(ask=["Edit(src/**)"]))
    assert await decide(p, EDIT, file_path="src/app.py") == Allow()
    assert asker.requests[0].always_rules == ()
    assert "Edit(src/**)" in asker.requests[0].reason
    assert p.session_rules() == []
    assert await decide(p, EDIT, file_path="src/app.py") == Allow()
    assert len(asker.requests) == 2  # asked again: the ask rule still stands
    assert await decide(p, EDIT, file_path="README.md") == Allow()  # acceptEdits, no rule


async def test_allow_rules_skip_asking(ws: Path) -> None:
    asker = Asker()
    p = policy(ws, asker, rules=rules(allow=["Edit(src/**)", "Bash(npm test:*)", "mcp__github", "Read(//etc/**)"]))
    assert await decide(p, EDIT, file_path="src/app.py") == Allow()
    assert await decide(p, BASH, command="npm test -- --watch") == Allow()
    assert await decide(p, MCP_RW, title="x") == Allow()
    assert await decide(p, READ, file_path="/etc/hostname") == Allow()
    assert asker.requests == []


# ---------------------------------------------------------------- paths: traversal and links


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (READ, {"file_path": "../outside/secret.txt"}),
        (READ, {"file_path": "src/../../outside/secret.txt"}),
        (READ, {"file_path": "link/secret.txt"}),
        (READ, {"file_path": "linkfile"}),
        (GLOB, {"pattern": "*.txt", "path": "link"}),
        (GLOB, {"pattern": "../outside/*"}),
        (GLOB, {"pattern": "link/*"}),
        (GLOB, {"pattern": "/etc/*.conf"}),
        (GREP, {"pattern": "s", "path": "link"}),
        (GREP, {"pattern": "s", "path": "src/../.."}),
        (WRITE, {"file_path": "link/new.txt", "content": "x"}),
        (WRITE, {"file_path": "a/../../outside/new.txt", "content": "x"}),
        (EDIT, {"file_path": "linkfile", "old_string": "s", "new_string": "t"}),
        (EDIT, {"file_path": "../outside/secret.txt", "old_string": "s", "new_string": "t"}),
    ],
)
async def test_escaping_the_workspace_always_asks(ws: Path, tool: Tool, args: dict[str, Any]) -> None:
    asker = Asker("no")
    decision = await policy(ws, asker, mode="acceptEdits")(tool, args)
    assert decision == Deny(REJECT_MESSAGE, end_turn=True)
    assert asker.requests[0].outside_workspace
    assert "outside the workspace" in asker.requests[0].summary


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (READ, {"file_path": "src/app.py"}),
        (READ, {"file_path": "src/../src/app.py"}),
        (GLOB, {"pattern": "**/*.py"}),
        (GLOB, {"pattern": "*.py", "path": "src"}),
        (GREP, {"pattern": "hi"}),
        (GREP, {"pattern": "hi", "path": "src"}),
        (ECHO, {"text": "hello"}),
        (MCP_RO, {"query": "x"}),
    ],
)
async def test_reading_inside_the_workspace_is_allowed(ws: Path, tool: Tool, args: dict[str, Any]) -> None:
    assert await policy(ws, Asker())(tool, args) == Allow()


async def test_absolute_path_inside_the_workspace_is_inside(ws: Path) -> None:
    assert await decide(policy(ws), READ, file_path=str(ws / "src" / "app.py")) == Allow()
    decision = await decide(policy(ws, mode="acceptEdits"), WRITE, file_path=str(ws / "new.txt"), content="x")
    assert decision == Allow()


async def test_summary_names_the_real_target_of_a_link(ws: Path, tmp_path: Path) -> None:
    asker = Asker("no")
    await decide(policy(ws, asker), WRITE, file_path="link/new.txt", content="x")
    real = (tmp_path / "outside" / "new.txt").resolve()
    assert asker.requests[0].summary == f"Write {real} (outside the workspace, via link/new.txt)"


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("cat src/app.py", True),
        ("grep -rn hi src 2>/dev/null", True),
        ("grep -n 'hi$' src/app.py", True),  # `$` in single quotes is not an expansion
        ("cat ../outside/secret.txt", False),
        ("cat src/../../outside/secret.txt", False),
        ("cat link/secret.txt", False),
        ("cat linkfile", False),
        ("cat /etc/hostname", False),
        ("cat < /etc/hostname", False),
        ("ls ~", False),
        ("cat $HOME/.ssh/id_rsa", False),
        ('cat "$HOME/x"', False),
        ("ls link/*", False),
        ("git -C/etc log", False),
        ("GIT_DIR=/tmp/other.git git log", False),
    ],
)
async def test_read_only_bash_must_stay_inside(ws: Path, command: str, allowed: bool) -> None:
    decision = await decide(policy(ws), BASH, command=command)
    assert (decision == Allow()) is allowed, decision


async def test_bash_paths_are_judged_from_the_shells_directory(ws: Path) -> None:
    p = policy(ws, shell=ShellState(cwd=ws / "src"))
    assert await decide(p, BASH, command="cat app.py") == Allow()
    assert isinstance(await decide(p, BASH, command="cat ../../outside/secret.txt"), Deny)
    assert await decide(p, BASH, command="cat ../secrets/key.txt") == Allow()


# ---------------------------------------------------------------- answers, "always", revoke


async def test_yes_allows_once(ws: Path) -> None:
    asker = Asker("yes", "no")
    p = policy(ws, asker)
    assert await decide(p, EDIT, file_path="src/app.py") == Allow()
    assert p.session_rules() == []
    assert await decide(p, EDIT, file_path="src/app.py") == Deny(REJECT_MESSAGE, end_turn=True)
    assert len(asker.requests) == 2


async def test_always_records_exactly_the_file(ws: Path) -> None:
    asker = Asker("always")
    p = policy(ws, asker)
    assert await decide(p, EDIT, file_path="src/../src/app.py") == Allow()
    request = asker.requests[0]
    assert (request.summary, request.always_rules) == ("Edit src/app.py", ("Edit(./src/app.py)",))
    assert request.always_rule == "Edit(./src/app.py)"
    assert p.session_rules() == ["Edit(./src/app.py)"]
    assert await decide(p, EDIT, file_path="src/app.py") == Allow()
    assert await decide(p, WRITE, file_path="src/app.py", content="x") == Allow()  # Edit rules govern Write
    assert len(asker.requests) == 1
    assert await decide(p, EDIT, file_path="src/other.py") == Deny(REJECT_MESSAGE, end_turn=True)
    assert len(asker.requests) == 2


async def test_always_for_a_file_at_the_root_is_anchored(ws: Path) -> None:
    asker = Asker("always", "no")
    p = policy(ws, asker)
    await decide(p, WRITE, file_path="app.py", content="x")
    assert p.session_rules() == ["Edit(./app.py)"]
    assert await decide(p, WRITE, file_path="src/app.py", content="x") == Deny(REJECT_MESSAGE, end_turn=True)


async def test_always_for_a_command_records_scoped_prefixes_never_bare_bash(ws: Path) -> None:
    asker = Asker("always", "no")
    p = policy(ws, asker)
    command = "git push origin main"
    assert await decide(p, BASH, command=command) == Allow()
    cmd = shell.analyze(command).commands[0]
    expected = f"Bash({rule_prefix(cmd)}:*)"
    assert p.session_rules() == [expected] and asker.requests[0].always_rules == (expected,)
    assert asker.requests[0].summary == "Run: git push origin main"
    assert await decide(p, BASH, command=command) == Allow()
    assert len(asker.requests) == 1
    assert await decide(p, BASH, command="rm -rf build") == Deny(REJECT_MESSAGE, end_turn=True)
    assert len(asker.requests) == 2


async def test_always_for_a_compound_command_records_one_rule_per_changing_command(ws: Path) -> None:
    asker = Asker("always", "no")
    p = policy(ws, asker)
    command = "git status && npm install && git push"
    await decide(p, BASH, command=command)
    recorded = p.session_rules()
    assert len(recorded) == 2 and "Bash" not in recorded
    assert all(rule.startswith("Bash(") and rule.endswith(":*)") for rule in recorded)
    assert await decide(p, BASH, command=command) == Allow()
    assert isinstance(await decide(p, BASH, command="git status && rm x"), Deny)


async def test_always_for_a_redirection_records_the_whole_line(ws: Path) -> None:
    asker = Asker("always", "no")
    p = policy(ws, asker)
    await decide(p, BASH, command="echo hi > out.txt")
    assert p.session_rules() == ["Bash(echo hi > out.txt)"]
    assert await decide(p, BASH, command="echo hi > out.txt") == Allow()
    assert await decide(p, BASH, command="echo bye > out.txt") == Deny(REJECT_MESSAGE, end_turn=True)


async def test_always_for_reading_outside_records_that_file_only(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "outside" / "other.txt").write_text("o")
    asker = Asker("always", "no")
    p = policy(ws, asker)
    await decide(p, READ, file_path="link/secret.txt")
    assert p.session_rules() == [f"Read(/{(tmp_path / 'outside' / 'secret.txt').resolve()})"]
    assert await decide(p, READ, file_path="../outside/secret.txt") == Allow()
    assert await decide(p, READ, file_path="../outside/other.txt") == Deny(REJECT_MESSAGE, end_turn=True)


async def test_always_for_an_unparseable_command_allows_once(ws: Path) -> None:
    asker = Asker("always", "no")
    p = policy(ws, asker)
    assert await decide(p, BASH, command=UNPARSEABLE) == Allow()
    assert asker.requests[0].always_rules == () and "could not be parsed" in asker.requests[0].reason
    assert p.session_rules() == []
    assert isinstance(await decide(p, BASH, command=UNPARSEABLE), Deny)


async def test_always_never_records_a_wildcard_the_user_did_not_see(ws: Path) -> None:
    asker = Asker("always", "no")
    p = policy(ws, asker)
    assert await decide(p, BASH, command="sudo rm -f *.o") == Allow()
    assert asker.requests[0].always_rules == () and p.session_rules() == []
    assert await decide(p, BASH, command="sudo rm -f /etc/x.o") == Deny(REJECT_MESSAGE, end_turn=True)


async def test_always_for_an_mcp_tool_names_that_tool(ws: Path) -> None:
    p = policy(ws, Asker("always"))
    await decide(p, MCP_RW, title="bug")
    assert p.session_rules() == ["mcp__github__create_issue"]


async def test_revoke_forgets_a_session_rule(ws: Path) -> None:
    asker = Asker("always", "no")
    settings_rules = rules(source="/p/.agents/settings.json", allow=["Edit(README.md)"])
    p = policy(ws, asker, rules=settings_rules)
    await decide(p, EDIT, file_path="src/app.py")
    assert p.revoke(" Edit( ./src/app.py ) ") is True
    assert p.session_rules() == []
    assert p.revoke("Edit(./src/app.py)") is False
    assert p.revoke("Edit(README.md)") is False  # settings rules are not the session's to drop
    assert await decide(p, EDIT, file_path="README.md") == Allow()
    assert await decide(p, EDIT, file_path="src/app.py") == Deny(REJECT_MESSAGE, end_turn=True)
    assert len(asker.requests) == 2


async def test_a_broken_prompt_denies_and_ends_the_turn(ws: Path) -> None:
    async def broken(request: PermissionRequest) -> Answer:
        raise EOFError

    decision = await PermissionPolicy(ws, asker=broken)(EDIT, {"file_path": "src/app.py"})
    assert isinstance(decision, Deny) and decision.end_turn and "EOFError" in decision.message


async def test_an_unknown_answer_counts_as_no(ws: Path) -> None:
    async def odd(request: PermissionRequest) -> Any:
        return "maybe"

    decision = await PermissionPolicy(ws, asker=odd)(EDIT, {"file_path": "src/app.py"})
    assert decision == Deny(REJECT_MESSAGE, end_turn=True)


async def test_request_reasons(ws: Path) -> None:
    asker = Asker("no", "no", "no", "no")
    p = policy(ws, asker)
    await decide(p, EDIT, file_path="src/app.py")
    await decide(p, WRITE, file_path="/tmp/elsewhere.txt", content="x")
    await decide(p, BASH, command="cat /etc/hostname")
    await decide(p, MCP_RW, title="bug")
    reasons = [r.reason for r in asker.requests]
    assert reasons[0] == "it changes files"
    assert reasons[1] == "it writes outside the workspace"
    assert "/etc/hostname" in reasons[2]
    assert reasons[3] == "mcp__github__create_issue is not read-only"
    assert asker.requests[1].summary == f"Write {Path('/tmp/elsewhere.txt').resolve()} (outside the workspace)"
    assert asker.requests[3].summary == 'Call mcp__github__create_issue {"title": "bug"}'


# ---------------------------------------------------------------- headless messages


async def test_headless_message_for_an_edit_names_every_way_out(ws: Path) -> None:
    decision = await decide(policy(ws), EDIT, file_path="src/app.py")
    assert isinstance(decision, Deny) and not decision.end_turn
    message = decision.message
    assert message.startswith("Permission denied: Edit src/app.py needs approval")
    for hint in (
        "headless mode cannot ask",
        "ALLOW_WRITE=1",
        '--allowed-tools "Edit(./src/app.py)"',
        "--permission-mode acceptEdits",
        ".agents/settings.json",
    ):
        assert hint in message
    assert message.count(". ") <= 1 and message.endswith(".")


async def test_headless_message_for_a_command_suggests_its_scoped_rule(ws: Path) -> None:
    decision = await decide(policy(ws), BASH, command="git push origin main")
    assert isinstance(decision, Deny)
    rule = f"Bash({rule_prefix(shell.analyze('git push origin main').commands[0])}:*)"
    assert f'--allowed-tools "{rule}"' in decision.message
    assert "ALLOW_WRITE=1" in decision.message and "acceptEdits" not in decision.message


async def test_headless_message_for_reading_outside_offers_only_what_helps(ws: Path) -> None:
    decision = await decide(policy(ws), READ, file_path="/etc/hostname")
    assert isinstance(decision, Deny)
    assert "ALLOW_WRITE" not in decision.message and "acceptEdits" not in decision.message
    assert '--allowed-tools "Read(//etc/hostname)"' in decision.message


async def test_headless_message_for_an_ask_rule_names_the_rule(ws: Path) -> None:
    decision = await decide(policy(ws, rules=rules(ask=["Bash(git push:*)"])), BASH, command="git push")
    assert isinstance(decision, Deny)
    assert "Bash(git push:*)" in decision.message and "headless mode cannot ask" in decision.message
    assert "--allowed-tools" not in decision.message


async def test_allow_read_only_is_kept(ws: Path) -> None:
    assert await allow_read_only(READ, {"file_path": "/etc/passwd"}) == Allow()
    assert await allow_read_only(WRITE, {}) == Deny(NOT_READ_ONLY.format(name="Write"))


# ---------------------------------------------------------------- through the tool runner


class FreeArgs(msgspec.Struct):
    file_path: str = ""


class Touch(ModelTool[FreeArgs]):
    name = "Write"
    description = "write"
    args_model = FreeArgs

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def call(self, args: FreeArgs, ctx: ToolContext) -> ToolOutput:
        self.ran.append(args.file_path)
        return ToolOutput("ok")


async def test_a_refusal_through_the_runner_skips_the_rest_of_the_turn(ws: Path) -> None:
    tool = Touch()
    asker = Asker("yes", "no")
    run = ToolRun(ToolRegistry([tool]), ToolContext(cwd=ws), policy(ws, asker), AbortSignal())
    uses = [ToolUseBlock(f"t{i}", "Write", {"file_path": f"f{i}.txt"}) for i in range(3)]
    results = [e.result for e in [e async for e in run_tool_calls(uses, run)] if isinstance(e, ToolFinished)]
    assert tool.ran == ["f0.txt"]
    assert [r.content for r in results] == ["ok", REJECT_MESSAGE, SKIPPED]
    assert run.end_turn and len(asker.requests) == 2


# ---------------------------------------------------------------- settings files


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def perms(**block: Any) -> dict[str, Any]:
    return {"permissions": block}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


def listing(ruleset: RuleSet) -> list[tuple[RuleKind, str, str]]:
    return [(kind, rule.text, Path(rule.source).name) for kind, rule in ruleset.rules()]


def test_settings_from_every_file_are_merged(ws: Path, env: dict[str, str]) -> None:
    user = Path(env["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    write_json(user, perms(allow=["Read"], defaultMode="plan"))
    write_json(ws / ".claude" / "settings.json", perms(deny=["Bash(rm:*)"], defaultMode="acceptEdits"))
    write_json(ws / ".claude" / "settings.local.json", perms(ask=["Bash(git push:*)"], allow=["Edit(src/**)"]))
    write_json(ws / ".agents" / "settings.json", perms(allow=["mcp__github"]))
    loaded = load_permissions(ws, env, trust=None)
    ruleset, warnings, mode, errors = loaded
    assert warnings == [] and errors == [] and mode == "acceptEdits"
    assert listing(ruleset) == [
        ("deny", "Bash(rm:*)", "settings.json"),
        ("ask", "Bash(git push:*)", "settings.local.json"),
        ("allow", "Read", "settings.json"),
        ("allow", "Edit(src/**)", "settings.local.json"),
        ("allow", "mcp__github", "settings.json"),
    ]
    assert ruleset.rules("allow")[0][1].source == str(user)
    assert verdict(ruleset, ws, "Bash", command="ls && rm x") == "deny"


def test_missing_settings_files_are_fine(ws: Path, env: dict[str, str]) -> None:
    ruleset, warnings, mode, errors = load_permissions(ws, env, trust=None)
    assert (len(ruleset), warnings, mode, errors) == (0, [], None, [])


def test_broken_json_is_an_error_at_its_line_and_the_rest_loads(ws: Path, env: dict[str, str]) -> None:
    write_json(ws / ".claude" / "settings.json", '{"permissions": {"deny": ["Read(.env)"]')
    write_json(ws / ".agents" / "settings.json", perms(deny=["Bash(rm:*)"]))
    ruleset, warnings, _, errors = load_permissions(ws, env, trust=None)
    assert warnings == []
    assert [e.text for e in errors] == [".claude/settings.json line 1, column 40: Expecting ',' delimiter"]
    assert listing(ruleset) == [("deny", "Bash(rm:*)", "settings.json")]


def test_wrong_types_that_only_make_it_ask_more_warn_and_keep_what_is_valid(ws: Path, env: dict[str, str]) -> None:
    path = ws / ".agents" / "settings.json"
    write_json(path, perms(allow="Bash", deny=["Read(.env)"], defaultMode="yolo"))
    ruleset, warnings, mode, errors = load_permissions(ws, env, trust=None)
    assert errors == [] and len(warnings) == 1 and warnings[0].startswith(f"{path}: ")
    for problem in ("permissions.allow` must be a list", "defaultMode"):
        assert problem in warnings[0]
    assert listing(ruleset) == [("deny", "Read(.env)", "settings.json")]
    assert mode is None


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ([1, 2], "expected a JSON object at the top level"),
        ({"permissions": ["Bash"]}, "`permissions` must be an object"),
        ({"permissions": {"deny": [1, "Read(.env)"]}}, "`permissions.deny[0]` is not a string"),
        ({"permissions": {"ask": "Bash"}}, "`permissions.ask` must be a list of rule strings"),
        (
            {"permissions": {"deny": ["Bash("]}},
            "the deny rule 'Bash(' cannot be understood (expected Tool or Tool(specifier))",
        ),
    ],
)
def test_a_file_whose_deny_or_ask_rules_cannot_be_known_is_an_error(
    ws: Path, env: dict[str, str], content: Any, problem: str
) -> None:
    write_json(ws / ".claude" / "settings.local.json", content)
    ruleset, warnings, _, errors = load_permissions(ws, env, trust=None)
    assert warnings == [] and [e.text for e in errors] == [f".claude/settings.local.json: {problem}"]
    assert all(kind != "allow" for kind, _ in ruleset.rules())  # a broken file's allow rules never apply


def test_a_broken_allow_rule_is_a_warning_naming_its_file(ws: Path, env: dict[str, str]) -> None:
    path = ws / ".claude" / "settings.local.json"
    write_json(path, {"permissions": {"allow": ["Bash(", "Edit"]}})
    ruleset, warnings, _, errors = load_permissions(ws, env, trust=None)
    assert errors == [] and len(warnings) == 1 and str(path) in warnings[0]
    assert "ignored the allow rule 'Bash('" in warnings[0] and listing(ruleset) == [("allow", "Edit", path.name)]


def test_an_unreadable_settings_path_is_an_error(ws: Path, env: dict[str, str]) -> None:
    (ws / ".agents" / "settings.json").mkdir(parents=True)
    _, _, _, errors = load_permissions(ws, env, trust=None)
    assert len(errors) == 1 and "cannot be read" in errors[0].text


def test_bypass_mode_only_from_the_user_file(ws: Path, env: dict[str, str]) -> None:
    write_json(ws / ".claude" / "settings.json", perms(defaultMode="bypassPermissions"))
    _, warnings, mode, _ = load_permissions(ws, env, trust=None)
    assert mode is None and "bypassPermissions" in warnings[0]
    user = Path(env["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    write_json(user, perms(defaultMode="bypassPermissions"))
    (ws / ".claude" / "settings.json").unlink()
    assert load_permissions(ws, env, trust=None).default_mode == "bypassPermissions"


def test_project_rooted_pattern_from_a_settings_file(ws: Path, env: dict[str, str]) -> None:
    write_json(ws / ".agents" / "settings.json", perms(deny=["Edit(/src/**)"]))
    ruleset = load_permissions(ws, env, trust=None).rules
    assert verdict(ruleset, ws, "Edit", file_path="src/app.py") == "deny"
    assert verdict(ruleset, ws, "Edit", file_path="lib/src/app.py") is None


def test_user_settings_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    default = tmp_path / ".config" / "react-agent-mini" / "settings.json"
    assert user_settings_path({}) == default
    assert user_settings_path({"XDG_CONFIG_HOME": "relative/dir"}) == default
    assert user_settings_path({"XDG_CONFIG_HOME": "/xdg"}) == Path("/xdg/react-agent-mini/settings.json")


def test_cli_rule_lists(ws: Path) -> None:
    ruleset = RuleSet()
    warnings = add_cli_rules(ruleset, ["Bash(git diff:*),Edit", "Read(src/**)"], "Bash(rm:*) Bash(")
    assert warnings == ["--disallowed-tools: ignored 'Bash(': expected Tool or Tool(specifier)"]
    assert [(k, r.text, r.source) for k, r in ruleset.rules()] == [
        ("deny", "Bash(rm:*)", "cli"),
        ("allow", "Bash(git diff:*)", "cli"),
        ("allow", "Edit", "cli"),
        ("allow", "Read(src/**)", "cli"),
    ]
    assert parse_rule_list("Bash(npm run test:*) Read") == ["Bash(npm run test:*)", "Read"]


def test_parse_mode() -> None:
    assert parse_mode("acceptEdits") == "acceptEdits"
    with pytest.raises(ValueError, match="bypassPermissions"):
        parse_mode("yolo")


# ---------------------------------------------------------------- found by exploratory testing: no way around


@pytest.mark.parametrize(
    "command",
    [
        "cd; touch gotcha",  # `cd` alone goes home
        "cd - && touch gotcha",  # back to $OLDPWD: unknowable
        "cd $DIR; touch gotcha",
        "pushd src >/dev/null; popd; touch gotcha",  # popd: unknowable
        "touch ~-/gotcha",  # ~- is $OLDPWD
        "touch ~+/../gotcha",
        "touch ~root/gotcha",
        "touch $'\\x2ftmp/gotcha'",  # ANSI-C quoting spells /tmp
        'touch $"gotcha"',  # a translated string (refused by the parser already)
    ],
)
async def test_paths_the_shell_resolves_elsewhere_are_outside_even_with_allow_write(ws: Path, command: str) -> None:
    decision = await decide(policy(ws, allow_write=True), BASH, command=command)
    assert isinstance(decision, Deny), command
    assert "outside the workspace" in decision.message or "could not be parsed" in decision.message, command


@pytest.mark.parametrize(
    "command",
    [
        "cat $'secrets/key.txt'",
        "cat secret?/key.txt",  # a glob that expands into the denied folder
        "cat s*/key.txt",
        "cd secrets && cat key.txt",  # relative to where `cd` went
        "cd src; cd ../secrets; cat key.txt",
    ],
)
async def test_read_deny_rules_see_through_quoting_globs_and_cd(ws: Path, command: str) -> None:
    decision = await decide(
        policy(ws, mode="bypassPermissions", rules=rules(deny=["Read(./secrets/**)"])), BASH, command=command
    )
    assert isinstance(decision, Deny) and "Read(./secrets/**)" in decision.message, command
    fine = await decide(policy(ws, rules=rules(deny=["Read(./secrets/**)"])), BASH, command="cd src && cat app.py")
    assert fine == Allow()


async def test_edit_deny_rules_follow_cd(ws: Path) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Edit(./secrets/**)"]))
    decision = await decide(p, BASH, command="cd secrets && rm key.txt")
    assert isinstance(decision, Deny) and "Edit(./secrets/**)" in decision.message
    assert await decide(p, BASH, command="cd src && rm app.py") == Allow()


@pytest.mark.parametrize(
    "command",
    [
        "$'rm' x",
        "env -u X rm x",
        "env -C / rm x",
        "timeout -s KILL 5 rm x",
        "sudo -u root rm x",
        "exec -a foo rm x",
        "xargs -a list rm",
        "xargs -d '\\n' rm",
        "stdbuf -o 0 rm x",
        "setsid rm x",
        "ionice -c 3 rm x",
        "nice -n 5 rm x",
        "echo rm x | bash",  # a shell reading its commands from a pipe
        'bash <<< "rm x"',
        "sh -s < script.txt",
        "xargs sh",
        'eval "$CMD"',
    ],
)
async def test_bash_deny_rules_are_not_dodged_by_wrappers_or_stdin_shells(ws: Path, command: str) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Bash(rm:*)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Deny) and "Bash(rm:*)" in decision.message, command
    for fine in ("ls -la", "timeout 60 pytest -q", "bash build.sh", "env FOO=1 make"):
        assert await decide(p, BASH, command=fine) == Allow(), fine


async def test_sed_reading_a_file_named_in_its_script_is_not_read_only(ws: Path) -> None:
    decision = await decide(policy(ws), BASH, command="sed 'r /etc/passwd' src/app.py")
    assert isinstance(decision, Deny) and "needs approval" in decision.message  # no longer read-only


@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", "sub/.git/config", ".mcp.json", ".claude/settings.json"]
)
async def test_accept_edits_still_asks_for_files_that_decide_what_runs(ws: Path, path: str) -> None:
    asker = Asker("no")
    decision = await decide(policy(ws, asker, mode="acceptEdits"), EDIT, file_path=path)
    assert isinstance(decision, Deny) and len(asker.requests) == 1
    assert "can make later commands run programs" in asker.requests[0].reason
    assert await decide(policy(ws, mode="acceptEdits"), EDIT, file_path="src/app.py") == Allow()


# ---------------------------------------------------------------- found by red-teaming: no way around either


@pytest.mark.parametrize(
    "command",
    [
        "cat [s]rc/../../outside/secret.txt",  # a word starting with a glob
        "cat */../../outside/secret.txt",
        "cat */secret.txt",  # through the `link` symlink
        "cat l*/secret.txt",
        "cat li?k/secret.txt",
        "date -uf../outside/secret.txt",  # a path glued to options after a letter
        "git config -lf../outside/secret.txt",
        "dd if=~/x of=leak",  # bash expands ~ after = too
        "grep -R secret .",  # follows the symlink out
        "builtin cd && cat x",  # home
        'eval "cd .." && cat x',
        "CDPATH=x:link; cd od && cat x",
    ],
)
async def test_reads_that_leave_the_workspace_are_asked(ws: Path, command: str) -> None:
    decision = await decide(policy(ws), BASH, command=command)
    assert isinstance(decision, Deny), command


@pytest.mark.parametrize(
    "command",
    [
        "cat */key.txt",
        "cd secrets && cat *",
        "grep -r k",  # recursive from the workspace: reads secrets/key.txt
        "grep -rn k .",
        "rg k",
        "git show HEAD:secrets/key.txt",
        "git grep k",
        "git log -p",
        "tar -cf - .",
        "date -ufsecrets/key.txt",
        "cat <<EOF; cat secrets/key.txt\nx\nEOF",  # the parser refuses it: fail closed
    ],
)
async def test_read_deny_rules_see_recursive_readers_git_objects_and_unparsed_commands(ws: Path, command: str) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Read(./secrets/**)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Deny) and "Read(./secrets/**)" in decision.message, command
    for fine in ("grep -rn print src", "rg print src", "git status", "cat src/app.py | wc -l", "ls"):
        assert await decide(p, BASH, command=fine) == Allow(), fine


@pytest.mark.parametrize(
    "command",
    [
        "${x:-rm} f",
        "$(echo rm) f",
        "x=rm; $x f",
        "rm{,} f",
        "r? f",
        "bash -c -e 'rm f'",
        "bash -c -- 'rm f'",
        "bash /dev/stdin <<< 'rm f'",
        ". /dev/stdin <<< 'rm f'",
        "source <(echo rm f)",
        "bash <(echo rm f)",
        "env -S 'rm f'",
        "su -c 'rm f'",
        "flock F -c 'rm f'",
        "script -qc 'rm f' /dev/null",
        "watch -n1 'rm f'",
        "git -c alias.x='!rm f' x",
        "echo | sed 'e rm f'",
        "trap 'rm f' EXIT",
        "BASH_ENV=<(echo rm f) bash -c true",
        "bash -c 'eval \"$1\"' _ 'rm f'",
        "echo $((x)); r''m f",  # the parser gives up on the line: fail closed
    ],
)
async def test_bash_deny_rules_fail_closed_on_names_and_scripts_they_cannot_read(ws: Path, command: str) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Bash(rm:*)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Deny) and "Bash(rm:*)" in decision.message, command


async def test_a_repository_the_agent_wrote_is_not_trusted_by_read_only_git(ws: Path) -> None:
    evil = ws / "evil"
    (evil / "objects").mkdir(parents=True)
    (evil / "refs").mkdir()
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text('[core]\n\tfsmonitor = "touch pwned; false"\n')
    decision = await decide(policy(ws), BASH, command="cd evil && git status")
    assert isinstance(decision, Deny), "git in a repository we did not start in must be asked"
    (ws / ".git").mkdir()
    assert await decide(policy(ws), BASH, command="git status") == Allow()


# ---------------------------------------------------------------- red-team round 2


@pytest.mark.parametrize(
    "command",
    [
        "diff -rN . src",  # recursive diff follows the symlink out
        "printf 'x\\0' | sort --files0-from=-",  # file names from data
        "wc --files0-from=list0",
        "file -f names.txt",
        "jq -n 'import \"../outside/data\" as $d; $d'",
        "shopt -s dotglob; cat *env",  # globs under options we do not model
        "GLOBIGNORE=x; cat *env",
    ],
)
async def test_round_two_reads_that_leave_the_workspace_are_asked(ws: Path, command: str) -> None:
    decision = await decide(policy(ws), BASH, command=command)
    assert isinstance(decision, Deny), command


@pytest.mark.parametrize(
    "command",
    [
        "git reflog -p",
        "git status -vv",
        "git config --blob HEAD:secrets/key.txt --list",
        "git stash show -p",
        "git tag -l --format='%(raw)'",
        'for f in */key.txt; do cat "$f"; done',
        "ls secrets | xargs cat",
    ],
)
async def test_round_two_read_deny_rules(ws: Path, command: str) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Read(./secrets/**)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Deny), command


@pytest.mark.parametrize(
    "command",
    [
        "echo x | split --filter='rm f'",
        "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='rm f' src",
        "git rebase --exec 'rm f' HEAD~1",
        "git difftool -y -x 'rm f' HEAD~1",
        "git config alias.zz '!rm f'",
        "git zz",  # an alias defined earlier
        "setpriv rm f",
        "sg root -c 'rm f'",
        "capsh -- -c 'rm f'",
        "fakeroot rm f",
        "rg --pre rm x",
        "sort --compress-program=rm x",
    ],
)
async def test_round_two_bash_deny_rules(ws: Path, command: str) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Bash(rm:*)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Deny) and "Bash(rm:*)" in decision.message, command


@pytest.mark.parametrize(
    "command",
    [
        "find . -name key.txt -exec sed -i s/k/x/ {} +",
        'for f in */key.txt; do echo x > "$f"; done',
        "git checkout -- .",
        "git stash",
        "patch -p1 < x.patch",
        "unzip -o x.zip",
        "ls | xargs sed -i s/a/b/",
    ],
)
async def test_round_two_edit_deny_rules(ws: Path, command: str) -> None:
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Edit(./secrets/**)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Deny), command


_SHELLISH = st.lists(
    st.sampled_from([*"abcrmxls -/.~*?[]{}$'\"`\\|&;<>()=:!#\n\t", "cd ", "rm ", "cat ", "git ", "-" * 300]),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_SHELLISH)
async def test_the_permission_check_never_raises(ws: Path, command: str) -> None:
    """Whatever the model sends, the decision is Allow or Deny — with deny rules of every kind in play."""
    p = policy(ws, mode="bypassPermissions", rules=rules(deny=["Bash(rm:*)", "Read(./secrets/**)", "Edit(./src/**)"]))
    decision = await decide(p, BASH, command=command)
    assert isinstance(decision, Allow | Deny)
    plain = await decide(policy(ws), BASH, command=command)
    assert isinstance(plain, Allow | Deny)
