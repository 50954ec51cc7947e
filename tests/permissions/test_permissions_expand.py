"""What the deny matcher expands before matching, as bash would (braces, tildes, globs, `$'...'`, only where the
characters are unquoted), and what it gives up on; words come from the real parser, paths from a real directory."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from react_agent_mini.permissions.bash.analysis import analyze
from react_agent_mini.permissions.bash.expand import MAX_WORDS, Places, expand
from react_agent_mini.permissions.policy import Allow, PermissionPolicy


def _word(text: str) -> object:
    """The first argument of `cat <text>`, as the parser reads it."""
    cmd = analyze(f"cat {text}").commands[0]  # a substitution is a command of its own, after this one
    return cmd.words[1]


def _names(text: str, places: Places) -> list[str] | None:
    found = expand(_word(text), places)  # type: ignore[arg-type]
    if found is None:
        return None
    return sorted(str(p) for p in found[0])


@pytest.fixture
def here(tmp_path: Path) -> Path:
    for name in ("a.txt", "b.txt", ".hidden", "s"):
        (tmp_path / name).write_text("")
    return tmp_path.resolve()


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("{a,b}.txt", ["a.txt", "b.txt"]),
        ("x{a,{b,c}}", ["xa", "xb", "xc"]),
        ("{1..3}", ["1", "2", "3"]),
        ("{3..1}", ["1", "2", "3"]),
        ("{01..03}", ["01", "02", "03"]),
        ("{a..c}", ["a", "b", "c"]),
        ("{1..9..4}", ["1", "5", "9"]),
        ("{a}", ["{a}"]),
        ("{}", ["{}"]),
        ("'{a,b}'.txt", ["{a,b}.txt"]),
        ("\\{a,b\\}.txt", ["{a,b}.txt"]),
        ("{a,b}'.txt'", ["a.txt", "b.txt"]),
        ("$'{a,b}'", ["{a,b}"]),
        ("$'\\x61'.txt", ["a.txt"]),
        ("*.txt", ["a.txt", "b.txt"]),
        ("'*'.txt", ["*.txt"]),
        ("\\*.txt", ["*.txt"]),
        ("*", ["a.txt", "b.txt", "s"]),
        (".h*", [".hidden"]),
        ("nomatch*", ["nomatch*"]),
        ("[ab].txt", ["a.txt", "b.txt"]),
    ],
)
def test_braces_and_globs_expand_as_bash_expands_them(here: Path, text: str, names: list[str]) -> None:
    assert _names(text, Places([here])) == sorted(str(here / n) for n in names)


def test_what_bash_prints_is_what_we_expand(here: Path) -> None:
    """The same words through real bash (`printf '%s\\n' WORD`), for the cases that need no tilde."""
    for text in ("{a,b}.txt", "x{a,{b,c}}", "{01..03}", "'{a,b}'.txt", "*.txt", "\\*.txt", "{a}", "[ab].txt"):
        done = subprocess.run(["bash", "-c", f"printf '%s\\n' {text}"], cwd=here, capture_output=True, text=True)
        assert _names(text, Places([here])) == sorted(str(here / w) for w in done.stdout.split()), text


def test_tildes(here: Path) -> None:
    places = Places([here])
    assert _names("~+/a.txt", places) == [str(here / "a.txt")]
    assert _names("~-/a.txt", places) is None  # $OLDPWD before any cd: only the shell knows
    assert _names("~-/a.txt", Places([here], oldpwd=[here / "s"])) == [str(here / "s" / "a.txt")]
    assert _names("~/x", places) == [str(Path(os.path.expanduser("~")).resolve() / "x")]
    assert _names("~1/x", places) is None  # the directory stack
    assert _names("~nosuchuser_zz/x", places) == [str(here / "~nosuchuser_zz" / "x")]
    assert _names("'~'/x", places) == [str(here / "~" / "x")]
    assert _names("~/x", Places([here], home=False)) is None  # the line assigns HOME
    if Path("/root").exists():
        assert _names("~root/x", places) == [str(Path("/root").resolve() / "x")]


def test_what_cannot_be_expanded_is_unknowable(here: Path) -> None:
    places = Places([here])
    assert _names("$x", places) is None
    assert _names('"$(ls)"', places) is None
    assert _names("{a..z}{a..z}", places) is None  # more than MAX_WORDS words
    assert MAX_WORDS < 26 * 26
    assert _names("a.txt", Places(None)) is None  # relative to a directory only known when it runs
    assert _names("/etc/hostname", Places(None)) == [str(Path("/etc/hostname").resolve())]


def test_a_partial_clone_makes_git_ask(tmp_path: Path) -> None:
    """git fetches the objects a partial clone lacks: reading history reaches the network."""

    from react_agent_mini.tools.builtin.bash import BashTool as Bash

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    decide = PermissionPolicy(tmp_path).decide
    assert asyncio.run(decide(Bash(), {"command": "git log -p"})) == Allow()
    subprocess.run(["git", "config", "remote.origin.promisor", "true"], cwd=tmp_path, check=True)
    decision = asyncio.run(decide(Bash(), {"command": "git log -p"}))
    assert not isinstance(decision, Allow) and "partial clone" in decision.message
