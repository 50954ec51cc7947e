"""The program table (`permissions/bash/programs/`) checked against itself and against the real programs: every
spec's examples, every option the installed GNU programs and git document, prefixes resolved as the programs
resolve them, git options that print no file contents really printing none, and verdicts that do not change with
how an option is spelled (property tests)."""

from __future__ import annotations

import ast
import asyncio
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent_mini.permissions.bash import programs
from react_agent_mini.permissions.bash.analysis import analyze
from react_agent_mini.permissions.bash.examples import check_examples
from react_agent_mini.permissions.bash.spec import Option, Program, Spec, SpecError, compile_spec, compiled
from react_agent_mini.permissions.policy import Allow, PermissionPolicy
from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.tools.builtin.bash import BashTool

PERMISSIONS = Path(__file__).parents[2] / "src" / "react_agent_mini" / "permissions"


def test_every_example_and_counterexample_holds() -> None:
    assert check_examples() == []
    assert sum(len(spec.examples) + len(spec.counterexamples) for _, spec in programs.specs()) >= 200


def test_a_spec_that_breaks_the_format_does_not_compile() -> None:
    for bad in (
        Spec("x", options=("-r +recursiv",)),
        Spec("x", options=("-o =filename",)),
        Spec("x", options=("-r", "--recursive -r")),
        Spec("x", operands="files"),
        Spec("x", options=("recursive",)),
    ):
        with pytest.raises(SpecError):
            compile_spec(bad)


def test_an_example_that_does_not_hold_is_reported() -> None:
    """A spec whose examples are wrong is named (this is how a mistake in the table shows up in the test suite)."""
    lying = Spec("cat", options=("-n",), examples=("cat --frobnicate f",), counterexamples=("cat -n f",))
    wrong = check_examples([("cat", lying)])
    assert len(wrong) == 2 and "'cat --frobnicate f' should be read-only" in wrong[0] and "'cat -n f'" in wrong[1]


# -- the table against the installed programs

_GNU = ["grep", "diff", "sort", "sed", "ls", "cat", "head", "tail", "wc", "du", "df", "cut", "uniq", "nl", "stat",
        "date", "env", "base64", "numfmt", "tac", "paste", "realpath", "readlink", "basename", "cmp", "tr", "file",
        "id", "uname", "seq"]  # fmt: skip


def _documented_longs(program: str) -> set[str]:
    done = subprocess.run([program, "--help"], capture_output=True, text=True, check=False)
    found: set[str] = set()
    for line in done.stdout.splitlines():
        match = re.match(r"\s+(?:-\S,?\s+)*(--[a-z0-9][a-z0-9-]*)", line)
        if match:
            found.add(match.group(1))
    return found


@pytest.mark.parametrize("name", _GNU)
def test_gnu_specs_know_every_long_option_the_program_documents(name: str) -> None:
    """Unique prefixes are accepted, so an option the spec does not know could hide behind a prefix of one it does:
    every option `--help` lists must be in the spec (on the allowlist or marked as not read-only)."""
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")
    program = programs.lookup(name)
    assert program is not None and program.spec.abbrev
    missing = _documented_longs(name) - set(program.longs)
    assert not missing, f"{name} documents options its spec does not know: {sorted(missing)}"


_GIT_ABBREV = ["status", "blame", "grep", "ls-files", "ls-tree", "cat-file", "describe", "tag", "config", "branch"]


@pytest.mark.parametrize("sub", _GIT_ABBREV)
def test_git_specs_know_every_option_git_documents(sub: str, tmp_path: Path) -> None:
    done = subprocess.run(["git", sub, "-h"], capture_output=True, text=True, check=False, cwd=tmp_path)
    documented = set(re.findall(r"^\s+(?:-\S, )?(--[a-z0-9][a-z0-9-]*)", done.stdout, re.MULTILINE))
    program = compiled(_git_sub(sub), f"git {sub}")
    assert program.spec.abbrev
    missing = {o for o in documented if o not in program.options and f"--no-{o[2:]}" not in program.options}
    assert not missing, f"git {sub} documents options its spec does not know: {sorted(missing)}"


def _git_sub(name: str) -> Spec:
    git = programs.lookup("git")
    assert git is not None
    return git.subcommands[name]


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep is not installed")
def test_prefixes_resolve_as_grep_resolves_them(tmp_path: Path) -> None:
    """For every long option of grep, the shortest prefix the spec calls unique is accepted by grep, and the prefix
    one shorter (which the spec calls ambiguous) is refused as ambiguous by grep too."""
    program = programs.lookup("grep")
    assert program is not None
    (tmp_path / "f").write_text("x\n")
    checked = 0
    for name in program.longs:
        option = program.options[name]
        for length in range(3, len(name) + 1):
            prefix = name[:length]
            owners = {program.options[n].name for n in program.longs if n.startswith(prefix)}
            if owners == {option.name}:
                break
        value = "=1" if option.values else ""
        if option.choices:
            value = "=" + option.choices[0][0]
        ours = _grep_verdict(tmp_path, prefix + value)
        assert "ambiguous" not in ours and "unrecognized" not in ours, f"{prefix}: {ours}"
        if length > 3 and prefix[:-1] != "--":
            shorter = _grep_verdict(tmp_path, prefix[:-1] + value)
            assert "ambiguous" in shorter or "requires" in shorter or "unrecognized" not in shorter, prefix
        checked += 1
    assert checked >= 40


def _grep_verdict(cwd: Path, option: str) -> str:
    done = subprocess.run(["grep", option, "-e", "x", "f"], capture_output=True, text=True, check=False, cwd=cwd)
    return done.stderr


@pytest.fixture(scope="module")
def marked_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose history adds and changes a file holding a marker no name or message contains."""
    repo = tmp_path_factory.mktemp("git")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                       capture_output=True)  # fmt: skip

    git("init", "-q")
    (repo / "data").mkdir()
    (repo / "data" / "v.txt").write_text("SECRETMARK1 \n")
    git("add", ".")
    git("commit", "-qm", "one")
    (repo / "data" / "v.txt").write_text("SECRETMARK2 \n")
    git("commit", "-qam", "two")
    return repo


def _flags(program: Program) -> list[Option]:
    """The allowed options of a git subcommand that take no value, once each."""
    seen: dict[str, Option] = {}
    for option in program.options.values():
        if option.allowed and not option.values and not option.choices:
            seen.setdefault(option.name, option)
    return list(seen.values())


@pytest.mark.parametrize("sub", ["log", "show", "diff", "reflog show", "whatchanged"])
def test_git_options_not_marked_as_printing_contents_print_none(sub: str, marked_repo: Path) -> None:
    """Run real git with every flag the table allows: where the table says no file contents are printed (log's
    flags without +contents; show's and diff's +nocontents ones), the marker must not appear."""
    words = sub.split()
    git = programs.lookup("git")
    assert git is not None
    spec = git.subcommands[words[0]] if len(words) == 1 else compiled(_git_sub(words[0]), "git").subcommands[words[1]]
    program = compiled(spec, f"git {sub}")
    target = ["HEAD~1"] if words[0] == "diff" else ["HEAD"]
    wrong: list[str] = []
    for option in _flags(program):
        effects = option.effects
        quiet = "nocontents" in effects if program.spec.shows == "named" else "contents" not in effects
        if not quiet:
            continue
        spelling = option.name
        done = subprocess.run(["git", "--no-pager", *words, spelling, *target], cwd=marked_repo, capture_output=True,
                              text=True, check=False)  # fmt: skip
        if "SECRETMARK" in done.stdout:
            wrong.append(spelling)
    assert not wrong, f"git {sub} printed file contents with {wrong}, which the table says print none"


# -- verdicts do not depend on how an option is spelled

_SPELLED = st.sampled_from(
    [
        (
            "grep",
            (
                "-r",
                "--recursive",
                "--recur",
                "--rec",
                "-d recurse",
                "-drecurse",
                "--directories=recurse",
                "--dir=rec",
                "--directories rec",
                "-d rec",
            ),
        ),
        ("grep", ("-R", "--dereference-recursive", "--der", "--deref")),
        ("grep", ("-i", "--ignore-case", "--ignore-c", "-y")),
        ("diff", ("-r", "--recursive", "--recur", "--rec")),
        ("sort", ("-o out", "-oout", "--output=out", "--output out", "--out=out", "--outp out")),
        ("sort", ("-n", "--numeric-sort", "--numeric", "--nu")),
        ("sed", ("-i", "--in-place", "--in-pl", "--in")),
        ("wc", ("--files0-from=f", "--files0=f", "--files0-from f")),
        ("ls", ("-L", "--dereference")),  # `--deref` is ambiguous for ls (--dereference-command-line...)
        ("du", ("-L", "--dereference")),
        ("git log", ("-p", "-u", "--patch", "-U3", "--unified=3", "--patch-with-stat")),
        ("git show", ("--stat", "--numstat", "--name-only", "-s", "--no-patch")),
    ]
)


def _verdict(command: str) -> tuple[bool, frozenset[str], str]:
    analysis = analyze(command)
    usage = analysis.commands[0].usage
    assert usage is not None, command
    effects = usage.effects - {"pattern"}
    first_word = analysis.reason.split(":")[-1].strip().split(" ")[:2] if analysis.reason else []
    return analysis.read_only, effects, " ".join(first_word)


@settings(max_examples=200, deadline=None)
@given(group=_SPELLED, data=st.data())
def test_the_verdict_is_the_same_however_an_option_is_spelled(
    group: tuple[str, tuple[str, ...]], data: st.DataObject
) -> None:
    program, spellings = group
    a, b = data.draw(st.sampled_from(spellings)), data.draw(st.sampled_from(spellings))
    operands = "x f" if program in ("grep", "sed") else "f" if program != "git log" else ""
    first, second = f"{program} {a} {operands}", f"{program} {b} {operands}"
    one, two = _verdict(first), _verdict(second)
    assert one[:2] == two[:2], (first, one, second, two)


@settings(max_examples=100, deadline=None)
@given(
    flags=st.lists(st.sampled_from(["-n", "-i", "-r", "-l", "-c", "-H", "-w", "-v"]), min_size=1, max_size=5),
)
def test_clusters_of_short_flags_read_as_the_flags_apart(flags: list[str]) -> None:
    cluster = "-" + "".join(f[1:] for f in flags)
    apart = " ".join(flags)
    assert _verdict(f"grep {cluster} x f")[:2] == _verdict(f"grep {apart} x f")[:2]


# -- following one decision stays inside permissions/bash/


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add("." * node.level + node.module)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level)
    return found


def test_the_bash_package_does_not_call_back_into_the_rules_or_the_policy() -> None:
    """What a command is and touches is decided inside `permissions/bash/`: nothing there imports `rules` or
    `policy`, so a decision never goes back and forth between the two."""
    for path in sorted((PERMISSIONS / "bash").rglob("*.py")):
        for module in _imports(path):
            assert "rules" not in module.split(".") and "policy" not in module.split("."), (path, module)


def test_the_permission_files_stay_small() -> None:
    for path in sorted([*(PERMISSIONS / "bash").rglob("*.py"), *(PERMISSIONS / "rules").rglob("*.py")]):
        assert len(path.read_text().splitlines()) <= 520, path


@pytest.fixture(scope="module")
def denied_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spellings")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("k\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("k\n")
    return root


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(group=_SPELLED, data=st.data())
def test_the_decision_is_the_same_however_an_option_is_spelled(
    group: tuple[str, tuple[str, ...]], data: st.DataObject, denied_ws: Path
) -> None:
    """The whole decision, with a Read deny rule in bypassPermissions and with no rule in default mode."""
    program, spellings = group
    a, b = data.draw(st.sampled_from(spellings)), data.draw(st.sampled_from(spellings))
    operands = "k ." if program in ("grep", "sed") else "." if not program.startswith("git") else ""
    decisions = []
    for spelling in (a, b):
        command = f"{program} {spelling} {operands}"
        rules = RuleSet()
        rules.add("deny", "Read(./secrets/**)", "test")
        bypass = PermissionPolicy(denied_ws, "bypassPermissions", rules)
        denied = asyncio.run(bypass.decide(_BASH, {"command": command}))
        plain = asyncio.run(PermissionPolicy(denied_ws).decide(_BASH, {"command": command}))
        decisions.append((isinstance(denied, Allow), isinstance(plain, Allow)))
    assert decisions[0] == decisions[1], (program, a, b, decisions)


_BASH: Any = BashTool()
