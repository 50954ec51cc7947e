"""Words bash evaluates as code though they look like data (`permissions/bash/evaluated.py`): array subscripts in
arithmetic and in the variable names builtins assign or look up, names whose value arithmetic evaluates in turn,
name references, the integer attribute, values run later (`PS4`, `BASH_ENV`, `PROMPT_COMMAND`), callbacks and
word lists. Each case is run through real `/bin/bash -c` first, in a copy of the workspace, to show that bash does
run the command inside it (a `cat` earlier on PATH logs what it was asked to read; a `touch` leaves its file); then
through the real policy with `--sandbox off`'s Bash tool: a `Read(./secrets/**)` deny rule denies the reading form,
an `Edit(./protected/**)` deny rule the writing form, and with no rule the command is not read-only and is asked
for. The cases where bash does not evaluate the word are grounded the same way and must not be denied by the rule.
Then the reasons shown (item 2: each says what was seen), an invariant over subscripts, and `ram` end to end."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent_mini.permissions.bash.view import inspect_command
from react_agent_mini.permissions.policy import Allow, Answer, Decision, Deny, PermissionPolicy, PermissionRequest
from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.tools.builtin.bash import BashTool

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for, ram

READ_RULE = "Read(./secrets/**)"
EDIT_RULE = "Edit(./protected/**)"
SECRET = "hunter2-evaluated"


class Case(NamedTuple):
    command: str
    """Reads secrets/key through a word bash evaluates (the `cat secrets/key` inside it runs)."""
    write: str = ""
    """The writing form (default: `cat secrets/key` becomes `touch protected/x`, data files their writing twins)."""

    def writing(self) -> str:
        if self.write:
            return self.write
        return (
            self.command.replace("cat secrets/key", "touch protected/x")
            .replace("< data", "< wdata")
            .replace("< psdata", "< wpsdata")
        )


CASES = [
    # arithmetic: let, [[ -eq ]] operands, and the values of the names they read
    Case("let 'a[$(cat secrets/key)]=1'"),
    Case("let 'x=a[$(cat secrets/key)]'"),
    Case("read i < data; let i++"),
    Case("read i < data; let x=i+1"),
    Case("[[ 'a[$(cat secrets/key)]' -eq 0 ]]"),
    Case("[[ 0 -lt 'a[$(cat secrets/key)]' ]]"),
    Case("read i < data; [[ i -eq 1 ]]"),
    Case("read i < data; [[ $i -eq 1 ]]"),  # (already met the rules: `$i` is a word only known when it runs)
    # a subscript in a variable a builtin looks up or assigns
    Case("test -v 'a[$(cat secrets/key)]'"),
    Case("[ -v 'a[$(cat secrets/key)]' ]"),
    Case("[[ -v 'a[$(cat secrets/key)]' ]]"),
    Case("printf -v 'a[$(cat secrets/key)]' x"),
    Case("read 'a[$(cat secrets/key)]' <<< x"),
    Case("declare -a a; unset 'a[$(cat secrets/key)]'"),
    Case("sleep 0 & wait -p 'a[$(cat secrets/key)]' -n"),
    Case("declare 'a[$(cat secrets/key)]=1'"),
    Case("typeset 'a[$(cat secrets/key)]=1'"),
    Case("f() { local 'a[$(cat secrets/key)]=1'; }; f"),
    Case("declare -a 'a[$(cat secrets/key)]=1'"),
    Case("declare -- 'a[$(cat secrets/key)]=1'"),
    Case("x='a[$(cat secrets/key)]=1'; declare \"$x\""),
    Case("builtin let 'a[$(cat secrets/key)]'"),
    Case("command declare 'a[$(cat secrets/key)]=1'"),
    # name references and the integer attribute: later words become code
    Case("declare -n ref='a[$(cat secrets/key)]'; : \"$ref\""),
    Case("f() { local -n ref='a[$(cat secrets/key)]'; : \"$ref\"; }; f"),
    Case("declare +x -n ref='a[$(cat secrets/key)]'; : \"$ref\""),
    Case("declare -i x; x='a[$(cat secrets/key)]'"),
    Case("declare -i x; read x < data"),
    Case("declare -n r=PS4; r='$(cat secrets/key)'; set -x; true"),
    # values run later, however they are assigned
    Case("PS4='$(cat secrets/key)'; set -x; true"),  # (already met the rules)
    Case("export PS4='$(cat secrets/key)'; set -x; true"),
    Case("declare PS4='$(cat secrets/key)'; set -x; true"),
    Case("printf -v PS4 '%s' '$(cat secrets/key)'; set -x; true"),
    Case("read -r PS4 < psdata; set -x; true"),
    Case("mapfile -t PS4 < psdata; set -x; true"),
    Case("export BASH_ENV='$(cat secrets/key)'; bash -c true"),
    Case("export PROMPT_COMMAND='cat secrets/key'; bash -i < /dev/null"),
    Case("export PS1='$(cat secrets/key)'; bash --norc -i < /dev/null"),
    # callbacks and word lists
    Case("mapfile -C 'cat secrets/key' -c 1 < lines"),
    Case("readarray -C 'cat secrets/key' -c 1 < lines"),
    Case("mapfile -t -C cat -c 1 < names", "mapfile -t -C touch -c 1 < wnames"),  # each line is an argument
    Case("compgen -C 'cat secrets/key' x"),
    Case("compgen -W '$(cat secrets/key)' x"),
    Case("f() { cat secrets/key; }; compgen -F f x"),  # (already met the rules: the function's body is read)
    # already handled before, kept here as the brief's checklist
    Case("coproc cat secrets/key"),
    Case("trap 'cat secrets/key' EXIT"),
]

NOT_EVALUATED = [
    # bash wants a plain number (or a literal name) here, and says so: nothing inside runs
    "[ 'a[$(cat secrets/key)]' -eq 0 ]",
    "test 'a[$(cat secrets/key)]' -eq 0",
    "printf '%d' 'a[$(cat secrets/key)]'",
    "echo 'a[$(cat secrets/key)]'",
    "shift 'a[$(cat secrets/key)]'",
    "exit 'a[$(cat secrets/key)]'",
    "for i in 1; do break 'a[$(cat secrets/key)]'; done",
    "ulimit -n 'a[$(cat secrets/key)]'",
    "f() { return 'a[$(cat secrets/key)]'; }; f",
    "for i in 1; do continue 'a[$(cat secrets/key)]'; done",
    "read -t 'a[$(cat secrets/key)]' x <<< x",
    "read -N 'a[$(cat secrets/key)]' x <<< x",
    "mapfile -O 'a[$(cat secrets/key)]' x < lines",
    "mapfile -n 'a[$(cat secrets/key)]' x < lines",
    # only an interactive shell completes, binds keys or shows a prompt; a Bash call never is one
    "complete -C 'cat secrets/key' x",
    "bind -x '\"\\C-x\": cat secrets/key'",
]

READ_ONLY = ["printf '%s' x", "test -f data", "[[ 1 -eq 1 ]]", "[ 1 -eq 1 ]", "[[ -f data ]]", "echo 'a[1]'"]
"""Plain read-only commands that must stay allowed without asking."""

ASKED_NOT_DENIED = [
    "declare -p",
    "declare x=1",
    "let x=1",
    "let 'x = 2 * 3'",
    "declare 'a[0]=1'",
    "read -r line < data",
    "read -a words <<< 'a b'",
    "printf -v x '%s' y",
    "export FOO=bar",
    "unset x",
    "test -v x",
    "[[ -v 'a[1]' ]]",
    "mapfile -t lines < lines",
]
"""Literal names, integers and subscripts are data: these ask (they change the shell's state) but a deny rule does
not cover them."""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key").write_text(SECRET + "\n")
    (root / "protected").mkdir()
    files = {
        "data": "a[$(cat secrets/key)]\n",
        "wdata": "a[$(touch protected/x)]\n",
        "psdata": "$(cat secrets/key)\n",
        "wpsdata": "$(touch protected/x)\n",
        "names": "secrets/key\n",
        "wnames": "protected/x\n",
        "lines": "x\ny\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def run_bash(root: Path, command: str) -> tuple[list[str], bool]:
    """Run `command` with `/bin/bash -c` in `root`: what the logging `cat` was asked for, and whether
    protected/x exists afterwards."""
    real_cat = shutil.which("cat")
    assert real_cat is not None
    bin_dir = root.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = root.parent / "cat.log"
    log.unlink(missing_ok=True)
    wrapper = bin_dir / "cat"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(str(log))}\nexec {real_cat} "$@"\n')
    wrapper.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(root.parent), "TERM": "dumb", "LC_ALL": "C"}
    subprocess.run(
        ["/bin/bash", "-c", command], cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=20
    )
    asked = log.read_text().splitlines() if log.exists() else []
    touched = (root / "protected" / "x").exists()
    (root / "protected" / "x").unlink(missing_ok=True)
    return asked, touched


class Asker:
    """Says no, and keeps what it was asked."""

    def __init__(self) -> None:
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Answer:
        self.requests.append(request)
        return "no"


def decide(root: Path, command: str, deny: str = "", asker: Asker | None = None) -> Decision:
    rules = RuleSet()
    if deny:
        assert rules.add("deny", deny, "test") is None
    policy = PermissionPolicy(root, "default", rules, asker)
    args: Mapping[str, str] = {"command": command}
    return asyncio.run(policy.decide(BashTool(None), args))


# ---------------------------------------------------------------- bash really runs them


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.command)
def test_bash_runs_the_command_inside_the_word(ws: Path, case: Case) -> None:
    asked, _ = run_bash(ws, case.command)
    assert any("secrets/key" in line for line in asked), f"bash did not run the cat in {case.command!r}"
    _, touched = run_bash(ws, case.writing())
    assert touched, f"bash did not run the touch in {case.writing()!r}"


@pytest.mark.parametrize("command", NOT_EVALUATED)
def test_bash_does_not_run_what_these_words_hold(ws: Path, command: str) -> None:
    asked, _ = run_bash(ws, command)
    assert not any("secrets/key" in line for line in asked), command


# ---------------------------------------------------------------- and the policy sees it


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.command)
def test_a_read_deny_rule_meets_a_word_bash_evaluates(ws: Path, case: Case) -> None:
    asker = Asker()
    decision = decide(ws, case.command, READ_RULE, asker)
    assert isinstance(decision, Deny), case.command
    assert f"deny rule {READ_RULE}" in decision.message, decision.message
    assert asker.requests == []  # denied, not asked


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.command)
def test_an_edit_deny_rule_meets_the_writing_form(ws: Path, case: Case) -> None:
    decision = decide(ws, case.writing(), EDIT_RULE, Asker())
    assert isinstance(decision, Deny), case.writing()
    assert f"deny rule {EDIT_RULE}" in decision.message, decision.message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.command)
def test_without_rules_it_is_not_read_only_and_is_asked_for(ws: Path, case: Case) -> None:
    for command in (case.command, case.writing()):
        assert not inspect_command(command, ws).read_only, command
        asker = Asker()
        decision = decide(ws, command, asker=asker)
        assert isinstance(decision, Deny) and len(asker.requests) == 1, command  # asked; the asker said no


@pytest.mark.parametrize("command", NOT_EVALUATED)
def test_a_deny_rule_does_not_reach_words_bash_leaves_alone(ws: Path, command: str) -> None:
    decision = decide(ws, command, READ_RULE, Asker())
    assert not (isinstance(decision, Deny) and READ_RULE in decision.message), decision


@pytest.mark.parametrize("command", READ_ONLY)
def test_plain_read_only_commands_still_run_unasked(ws: Path, command: str) -> None:
    assert isinstance(decide(ws, command, READ_RULE), Allow), command
    assert isinstance(decide(ws, command), Allow), command


@pytest.mark.parametrize("command", ASKED_NOT_DENIED)
def test_literal_names_and_numbers_are_asked_for_but_not_denied(ws: Path, command: str) -> None:
    for rule in (READ_RULE, EDIT_RULE, "Bash(curl:*)"):
        asker = Asker()
        decision = decide(ws, command, rule, asker)
        assert isinstance(decision, Deny) and "deny rule" not in decision.message, (command, rule)
        assert len(asker.requests) == 1, (command, rule)


@pytest.mark.parametrize(
    "command",
    [
        "let 'a[$(cat secrets/key)]'",
        "[[ 'a[$(cat secrets/key)]' -eq 0 ]]",
        "read 'a[$(cat secrets/key)]' <<< x",
        "declare -n ref='a[$(cat secrets/key)]'",
        "export PS4='$(cat secrets/key)'",
    ],
)
def test_a_word_bash_evaluates_meets_every_bash_deny_rule(ws: Path, command: str) -> None:
    decision = decide(ws, command, "Bash(curl:*)")  # curl is named nowhere: what runs is only known then
    assert isinstance(decision, Deny) and "deny rule Bash(curl:*)" in decision.message, command


def test_an_always_answer_for_evaluated_words_is_the_exact_command(ws: Path) -> None:
    asker = Asker()
    decide(ws, "let 'a[$(cat secrets/key)]'", asker=asker)
    assert asker.requests[0].always_rules == ("Bash(let 'a[$(cat secrets/key)]')",)  # exactly this, not Bash(let:*)
    asker = Asker()
    decide(ws, "let x=1", asker=asker)
    assert asker.requests[0].always_rules == ("Bash(let:*)",)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build a shared object")
def test_enable_f_loads_code_and_meets_every_deny_rule(ws: Path) -> None:
    source = ws.parent / "evil.c"
    source.write_text(
        '#include <stdlib.h>\n__attribute__((constructor)) static void init(void) { system("cat secrets/key"); }\n'
    )
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(ws / "evil.so"), str(source)], check=True, timeout=60)
    asked, _ = run_bash(ws, "enable -f ./evil.so evil")
    assert any("secrets/key" in line for line in asked)
    for rule in (READ_RULE, EDIT_RULE):
        decision = decide(ws, "enable -f ./evil.so evil", rule)
        assert isinstance(decision, Deny) and rule in decision.message


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    subscript=st.text(alphabet="ab$()[]{}`'\"\\ -+*=;|&<>01xyz", min_size=1, max_size=12).filter(
        lambda s: not s.strip().isdigit() and s.strip() not in ("@", "*")
    ),
    builtin=st.sampled_from(["read", "printf -v", "unset", "test -v", "let", "declare", "wait -p"]),
)
def test_any_subscript_other_than_a_literal_integer_meets_a_read_deny_rule(
    ws: Path, subscript: str, builtin: str
) -> None:
    word = shlex.quote(f"a[{subscript}]" + ("=1" if builtin == "declare" else ""))
    tail = " x" if builtin == "printf -v" else ""
    command = f"{builtin} {word}{tail}"
    decision = decide(ws, command, READ_RULE)
    assert isinstance(decision, Deny) and READ_RULE in decision.message, command


# ---------------------------------------------------------------- the reasons say what was seen


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("declare x=$(touch protected/x)", "it uses the output of a command substitution where a path could be"),
        ("source /dev/stdin <<< 'cat secrets/key'", "runs code read from stdin, which cannot be checked"),
        ("source build.sh", "runs the script build.sh, which is not checked"),
        ("let 'a[$(cat secrets/key)]'", "bash evaluates a[$(cat secrets/key)] as code when it runs"),
        ("[[ n -gt 0 ]]", "bash evaluates n as code when it runs (arithmetic evaluates the variables it names"),
        ('cat "$f"', "it names $f, only known when it runs"),
        ("cd - && touch x", "`cd -` goes to a directory only known when it runs"),
        ("PS4='$(cat secrets/key)'; set -x; true", "it sets a variable whose value is run as code later"),
        ("mapfile -t -C cat -c 1 < names", "mapfile works on files named in what it reads"),
        ("sed 's/a/b/w out' data", "sed works on files named in what it reads (its input, a file, its script)"),
        ("grep -R k .", "grep may follow symbolic links, which may lead outside the workspace"),
        ("cat /etc/hostname", "it names paths outside the workspace: /etc/hostname"),
        ("cd /tmp; ls", "it names paths outside the workspace: /tmp; ls runs in /tmp, outside the workspace"),
    ],
)
def test_the_reason_says_what_was_seen(ws: Path, command: str, reason: str) -> None:
    decision = decide(ws, command)  # headless: asking denies, with the reason
    assert isinstance(decision, Deny)
    shown = decision.message.partition("needs approval (")[2]
    assert reason in shown, decision.message
    if "names paths outside the workspace" not in reason:  # what was not seen is not said
        assert "names paths outside the workspace" not in shown, decision.message


# ---------------------------------------------------------------- end to end


E2E = [
    "let 'a[$(cat secrets/key >&2)]=1'",
    "[[ 'a[$(cat secrets/key >&2)]' -eq 0 ]]",
    "test -v 'a[$(cat secrets/key >&2)]'",
    "printf -v 'a[$(cat secrets/key >&2)]' x",
    "read 'a[$(cat secrets/key >&2)]' <<< x",
    "declare 'a[$(cat secrets/key >&2)]=1'",
    "declare -n ref='a[$(cat secrets/key >&2)]'; : \"$ref\"",
    "mapfile -C 'cat secrets/key' -c 1 < lines",
    "export PS4='$(cat secrets/key)'; set -x; true",
    "read i < data; [[ i -eq 1 ]]",
]


def test_the_secret_never_reaches_the_model_even_in_bypass_permissions(fake_llm: FakeLLMServer, ws: Path) -> None:
    (ws / "data").write_text("a[$(cat secrets/key >&2)]\n")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": c}) for c in E2E]), Reply(text="done"))
    proc = ram(
        "--sandbox", "off", "--permission-mode", "bypassPermissions", "--disallowed-tools", READ_RULE, "look",
        env=env_for("openai", fake_llm), cwd=ws,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert len(results) == len(E2E)
    for command, result in zip(E2E, results, strict=True):
        assert result.startswith("Error: ") and READ_RULE in result, (command, result)
    for request in fake_llm.requests:
        assert SECRET not in str(request.body)
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("let x=1", True),
        ("declare -i y=2", True),
        ("let 'a[$(touch pwned)]=1'", False),
        ("declare 'a[$(touch pwned)]=1'", False),
        ("read 'a[$(touch pwned)]' < /dev/null", False),
    ],
)
def test_a_prefix_allow_rule_names_the_program_not_the_code_in_its_words(ws: Path, command: str, allowed: bool) -> None:
    rules = RuleSet()
    for rule in ("Bash(let:*)", "Bash(declare:*)", "Bash(read:*)"):
        rules.add("allow", rule, "settings")
    policy = PermissionPolicy(ws, "default", rules, None)
    decision = asyncio.run(policy.decide(BashTool(), {"command": command}))
    assert isinstance(decision, Allow) is allowed


def test_the_always_rule_for_such_a_command_allows_that_command_again(ws: Path) -> None:
    command = "let 'a[$(touch pwned)]=1'"
    asker = Asker()
    decide(ws, command, asker=asker)
    (rule,) = asker.requests[0].always_rules
    rules = RuleSet()
    rules.add("allow", rule, "session")
    policy = PermissionPolicy(ws, "default", rules, None)
    assert isinstance(asyncio.run(policy.decide(BashTool(), {"command": command})), Allow)
    other = "let 'a[$(touch other)]=1'"
    assert not isinstance(asyncio.run(policy.decide(BashTool(), {"command": other})), Allow)
