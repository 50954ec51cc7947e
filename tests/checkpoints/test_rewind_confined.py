"""A rewind never writes or removes outside the workspace, whatever a command did to the workspace since: real
`ram` runs against the loopback fake LLM, then `ram rewind` (and the REPL's `/rewind`, which shares the code).

The attack: the agent changes `d/y.txt`, then a command replaces the folder `d` with a link to the user's home
(`rm -rf d && ln -s ~ d`). Putting `d/y.txt` back would now delete or overwrite `~/y.txt`. Each such file must be
left as it is, named, and counted as not restored — `--force` included. HOME is a folder of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram
from ..ui.test_repl_pty import ram_term

USERS = "the user's own file, outside the workspace\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The user's home: what `~` is for the commands the agent runs."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("y.txt", "f.txt", "g.txt", "h.txt"):
        (home / name).write_text(USERS)
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f.txt").write_text("f as it was\n")
    (ws / "g.txt").write_text("g as it was\n")
    (ws / "h.txt").write_text("h as it was\n")
    return ws


def attack_turns() -> list[Reply]:
    """Turn 1: the agent makes `d/y.txt` and edits `d/f.txt`, `g.txt` and `h.txt`. Turn 2: a command puts links
    to the home in their places (a folder link, a file link, a hard link)."""
    write = ToolCall("Write", {"file_path": "d/y.txt", "content": "made by the agent\n"})
    edits = [
        ToolCall("Edit", {"file_path": path, "old_string": "as it was", "new_string": "edited"})
        for path in ("d/f.txt", "g.txt", "h.txt")
    ]
    reads = [ToolCall("Read", {"file_path": path}) for path in ("d/f.txt", "g.txt", "h.txt")]
    command = "rm -rf d g.txt h.txt && ln -s ~ d && ln -s ~/g.txt g.txt && ln ~/h.txt h.txt"
    return [
        Reply(tool_calls=reads),
        Reply(tool_calls=[write, *edits]),
        Reply(text="Done."),
        Reply(tool_calls=[ToolCall("Bash", {"command": command})]),
        Reply(text="Tidied."),
    ]


def run_attack(fake_llm: FakeLLMServer, ws: Path, home: Path, env: dict[str, str]) -> None:
    fake_llm.enqueue(*attack_turns())
    for index, task in enumerate(("make and edit files", "tidy up")):
        proc = ram(
            *(["-c"] if index else []),
            "--permission-mode",
            "bypassPermissions",
            "--sandbox",
            "off",
            task,
            env=env,
            cwd=ws,
        )
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
    assert (ws / "d").resolve() == home and (ws / "g.txt").is_symlink()  # the command did what it says
    assert (ws / "h.txt").stat().st_ino == (home / "h.txt").stat().st_ino


def assert_home_untouched(home: Path) -> None:
    assert sorted(p.name for p in home.iterdir()) == ["f.txt", "g.txt", "h.txt", "y.txt"]
    for name in ("y.txt", "f.txt", "g.txt", "h.txt"):
        assert (home / name).read_text() == USERS, name


def test_ram_rewind_leaves_files_whose_folder_now_leads_outside(fake_llm: FakeLLMServer, ws: Path, home: Path) -> None:
    env = env_for("openai", fake_llm, HOME=str(home))
    run_attack(fake_llm, ws, home, env)
    rewound = ram("rewind", "0", "--code", "--force", env=env, cwd=ws)
    assert_no_traceback(rewound)
    assert_home_untouched(home)  # ~/y.txt not removed, ~/f.txt not overwritten with d/f.txt's old content
    lines = rewound.stdout.splitlines()
    assert "  left d/y.txt as it is: its folder now leads outside the workspace" in lines
    assert "  left d/f.txt as it is: its folder now leads outside the workspace" in lines
    assert "  left g.txt as it is: it is now a symbolic link, and a rewind never writes through one" in lines
    assert any(line.startswith("  left h.txt as it is: it has other hard links") for line in lines), lines
    assert not any(line.startswith(("  restored", "  removed")) for line in lines), lines
    assert rewound.returncode == 1  # not everything was restored
    assert (ws / "d").is_symlink() and (ws / "g.txt").is_symlink()  # left as they are


def test_rewind_still_restores_what_stays_inside(fake_llm: FakeLLMServer, ws: Path, home: Path) -> None:
    """A folder replaced by a link that stays inside the workspace is no reason to refuse."""
    env = env_for("openai", fake_llm, HOME=str(home))
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "d/y.txt", "content": "made by the agent\n"})]),
        Reply(text="Done."),
        Reply(tool_calls=[ToolCall("Bash", {"command": "mkdir e && mv d/* e/ && rm -rf d && ln -s e d"})]),
        Reply(text="Moved."),
    )
    for index, task in enumerate(("make a file", "move it")):
        proc = ram(
            *(["-c"] if index else []),
            "--permission-mode",
            "bypassPermissions",
            "--sandbox",
            "off",
            task,
            env=env,
            cwd=ws,
        )
        assert proc.returncode == 0, proc.stderr
    rewound = ram("rewind", "0", "--code", env=env, cwd=ws)
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert "  removed d/y.txt (it did not exist then)" in rewound.stdout
    assert not (ws / "e" / "y.txt").exists() and (ws / "e" / "f.txt").read_text() == "f as it was\n"
    assert_home_untouched(home)


def test_the_repls_rewind_leaves_them_too(fake_llm: FakeLLMServer, ws: Path, home: Path) -> None:
    fake_llm.enqueue(*attack_turns())
    with ram_term(fake_llm, ws, "--permission-mode", "bypassPermissions", "--sandbox", "off", HOME=str(home)) as term:
        term.prompt()
        term.line("make and edit files")
        term.expect("Done.")
        term.prompt()
        term.line("tidy up")
        term.expect("Tidied.")
        term.prompt()
        term.line("/rewind 0 code")
        done = term.expect("code back to the start of the session")
        done += term.expect("h.txt as it is")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert_home_untouched(home)
    assert "left d/y.txt as it is: its folder now leads outside the workspace" in done
    assert "left d/f.txt as it is: its folder now leads outside the workspace" in done
    assert "left g.txt as it is: it is now a symbolic link" in done
    assert "[y/N]" not in term.text  # nothing it will not write is asked about
