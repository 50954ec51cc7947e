"""The first hour, continued: what a new user meets in the first commands they type, end to end through `ram`.

- A misspelt flag is one line with the flag meant, not a usage block (item 18a).
- `@path` in a plain task attaches the file as the Read tool shows it, through the permission policy (item 17).
- The offline demo reads well in any folder, an empty one included (item 23).
- The README's PATH recipe works on a fresh account and its first paragraph links to nothing a clone lacks (20).

The settings files' keys are in `permissions/test_settings_keys.py`, the REPL's side in `ui/test_first_hour_repl.py`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .fakes.fake_llm import FakeLLMServer, Reply
from .test_cli import assert_no_traceback, env_for, ram
from .test_first_hour import REPO, readme_section, run

# ---- item 18a: an unknown flag ----


def test_a_misspelt_flag_is_one_line_naming_the_flag_meant(tmp_path: Path) -> None:
    proc = ram("--modle", "gpt-4o", "hi", env=env_for(None, None), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "error: unknown option --modle (did you mean --model?); ram --help lists them\n"


def test_an_unknown_flag_with_no_near_one_and_a_bad_value_are_one_line_too(tmp_path: Path) -> None:
    unknown = ram("--frobnicate", "hi", env=env_for(None, None), cwd=tmp_path)
    assert (unknown.returncode, unknown.stderr) == (2, "error: unknown option --frobnicate; ram --help lists them\n")
    spelled = ram("--output-fromat=json", "hi", env=env_for(None, None), cwd=tmp_path)
    assert (
        spelled.stderr
        == "error: unknown option --output-fromat (did you mean --output-format?); ram --help lists them\n"
    )
    bad = ram("--max-turns", "many", "hi", env=env_for(None, None), cwd=tmp_path)
    assert (bad.returncode, bad.stderr) == (2, "error: argument --max-turns: invalid int value: 'many'\n")


def test_help_still_shows_the_usage(tmp_path: Path) -> None:
    helped = ram("--help", env=env_for(None, None), cwd=tmp_path)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ram [-h]") and "--model MODEL" in helped.stdout


# ---- item 17: `@path` in a plain task ----


def sent(fake_llm: FakeLLMServer, index: int = -1) -> list[dict[str, Any]]:
    return [m for m in fake_llm.requests[index].body["messages"] if m["role"] != "system"]


def test_a_headless_task_attaches_the_file_it_names_before_its_text(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    fake_llm.enqueue(Reply(text="It subtracts."))
    proc = ram("explain @src/app.py, and ask @maintainers", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It subtracts.\n"
    assert "attached src/app.py" in proc.stderr.splitlines()
    attached, typed = sent(fake_llm)
    assert attached == {  # as the Read tool shows it: numbered lines
        "role": "user",
        "content": "Contents of @src/app.py (src/app.py):\n\n1\tdef add(a, b):\n2\t    return a - b",
    }
    assert typed == {"role": "user", "content": "explain @src/app.py, and ask @maintainers"}  # @maintainers: text


def test_the_read_is_checked_as_a_read_call_is(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "secrets").mkdir(parents=True)
    (work / "secrets" / "key.txt").write_text("token=hunter2\n")
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./secrets/**)"]}}))
    (tmp_path / "outside.txt").write_text("outside the workspace\n")
    fake_llm.enqueue(Reply(text="no"))
    proc = ram("show @secrets/key.txt and @../outside.txt", env=env_for("openai", fake_llm), cwd=work)
    assert proc.returncode == 0, proc.stderr
    refused = [line for line in proc.stderr.splitlines() if "was not attached" in line]
    assert len(refused) == 2, proc.stderr
    assert refused[0].startswith("warning: @secrets/key.txt was not attached: ")
    assert refused[1].startswith("warning: @../outside.txt was not attached: ")
    request = json.dumps(sent(fake_llm))
    assert "hunter2" not in request and "outside the workspace" not in request
    assert sent(fake_llm) == [{"role": "user", "content": "show @secrets/key.txt and @../outside.txt"}]


def test_a_file_too_large_for_read_is_not_attached_and_says_why(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "big.log").write_text("a line of the log\n" * 40_000)  # over Read's whole-file limit
    fake_llm.enqueue(Reply(text="ok"))
    proc = ram("summarise @big.log", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning: @big.log was not attached: big.log is too large to read whole" in proc.stderr
    assert sent(fake_llm) == [{"role": "user", "content": "summarise @big.log"}]


def test_a_custom_commands_file_is_attached_once(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "review.md").write_text("Review @$ARGUMENTS carefully.\n")
    fake_llm.enqueue(Reply(text="fine"))
    proc = ram("/review app.py", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.dumps(sent(fake_llm)).count("print('hi')") == 1  # the command's own attachment, not a second one


# ---- item 23: the offline demo, in the user's folder ----


def test_the_demo_in_an_empty_folder_reads_in_paragraphs_and_ends_gracefully(tmp_path: Path) -> None:
    proc = ram("--mock", "show me around", env=env_for(None, None), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert "async def query" not in proc.stdout + proc.stderr  # nothing of this repository's own code
    assert proc.stderr.splitlines() == ["[tool] Glob: **/*", r"[tool] Grep: \b(def|class|function|func|fn)\b"]
    first, second = proc.stdout.split("[scripted demo model, no API call made]")[1:]
    assert first.startswith("\n\nYou asked: show me around\n\nA real model would now explore")  # paragraphs
    assert second.startswith("\n\nThis folder has no files for me to look at, so the tour ends here.\n\nThat is")


def test_the_demo_in_a_folder_without_code_reads_its_newest_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("\nShopping: milk, eggs\n")
    proc = ram("--mock", "hi", env=env_for(None, None), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "[tool] Read: notes.txt"
    assert "Found 1 file(s), none with code in it, so I read the newest: notes.txt." in proc.stdout
    assert "it opens with: 'Shopping: milk, eggs'." in proc.stdout


# ---- item 20: the README's first steps ----


def test_the_readmes_path_recipe_works_on_a_fresh_account(tmp_path: Path) -> None:
    recipe = next(c for c in readme_section("## Use it") if "ln -s" in c)
    home = tmp_path / "home"
    home.mkdir()  # a fresh account: no ~/.local/bin yet
    made = run(["/bin/bash", "-c", recipe], REPO, HOME=str(home))
    assert made.returncode == 0, made.stderr
    result = run(["ram", "--version"], tmp_path, PATH=f"{home / '.local/bin'}{os.pathsep}{os.defpath}")
    assert (result.returncode, result.stdout.strip()) == (0, "react-agent-mini 0.1.0")
    text = (REPO / "README.md").read_text()
    assert 'export PATH="$HOME/.local/bin:$PATH"' in text  # and it says how to put the folder on PATH


def test_the_readme_points_at_nothing_outside_the_repository() -> None:
    text = (REPO / "README.md").read_text()
    opening = text.split("\n## ", 1)[0]
    assert re.findall(r"\.\./[\w./-]+", opening) == []  # the seed is said, not linked: a clone has no `../`
    assert "../shared" not in text
    assert "scripts/test` takes" in text  # how long the test command takes (the lead fills in the measured figure)


def test_the_readme_says_how_the_repl_draws_a_bash_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    from .fakes.fake_llm import ToolCall
    from .ui.test_repl_minimal import Term

    (tmp_path / "run.sh").write_text("while [ ! -e go ]; do sleep 0.05; done; echo first-out; echo second-out\n")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "sh run.sh"})]), Reply(text="ran it"))
    with Term("--allowed-tools", "Bash(sh run.sh)", env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        term.prompt()
        term.line("run it")
        term.expect("Bash sh run.sh")  # it runs until the test says go: the running line is on screen
        (tmp_path / "go").touch()
        term.expect("out tokens")
        term.send("\x04")
        assert term.wait() == 0
    raw = term.raw.decode(errors="replace")
    assert "\x1b[36mBash sh run.sh" in raw  # the running command: a cyan spinner line
    assert "\x1b[2m  ⎿ first-out\x1b[0m" in raw and "\x1b[2m    second-out\x1b[0m" in raw  # its output: dimmed
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "While a tool runs, a cyan line with a spinner names it" in readme
    assert "followed by the last 5 lines it printed, dimmed" in readme
