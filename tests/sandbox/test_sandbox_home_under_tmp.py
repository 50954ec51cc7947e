"""A home directory under the host's /tmp (containers and CI runners set HOME=/tmp/…): sandboxed commands still see
`~` — read-only, as the rest of the host — and Read deny rules under it still hide, end to end through `ram`."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..test_cli import assert_no_traceback, env_for, ram
from ..tools.test_tool_defects import bash, tool_results

READ_KEY = "import os; print(open(os.path.expanduser('~/.ssh/id_' + 'rsa')).read())"


def test_home_under_tmp_is_visible_read_only_and_its_denied_files_stay_hidden(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # tmp_path is under /tmp on these machines; the test says so if not
    (home / ".ssh").mkdir(parents=True)
    (home / "notes.txt").write_text("ram notes\n")
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    ws = home / "ws"
    ws.mkdir()
    assert str(home.resolve()).startswith("/tmp/"), "this test needs the temp dir under /tmp"
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                bash("cat ~/notes.txt"),
                bash(f"python3 -c {READ_KEY!r} || echo hidden"),  # code the checker cannot read: the sandbox hides
                bash("touch ~/made.txt || echo refused"),
                bash("echo inside > here.txt && cat here.txt"),
            ]
        ),
        Reply(text="done"),
    )
    env = env_for("openai", fake_llm, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    proc = ram(
        "--permission-mode", "bypassPermissions", "--disallowed-tools", "Read(~/.ssh/**)", "go", env=env, cwd=ws
    )  # fmt: skip
    assert_no_traceback(proc)
    notes, key, made, here = tool_results(fake_llm.requests[-1])
    assert notes == "ram notes"
    assert "PRIVATE" not in key and "hidden" in key
    assert "refused" in made and not (home / "made.txt").exists()
    assert here == "inside" and (ws / "here.txt").exists()
