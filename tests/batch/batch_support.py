"""Shared by the batch tests and the throughput benchmark: small git repositories with a failing test, the tasks
file naming them, and a scripted model that fixes each one — chosen from the request itself (the task id in the
prompt, the step from the number of assistant messages), so any number of parallel workers can share one server.

The model's script for task `ID`: Read calc.py → Edit it (`a - b` → `a + b`) and Write notes.txt (a new file) →
run the test with Bash → say it is done. A task whose id starts with `bad` gets a wrong edit (`a * b`), so its
test still fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..fakes.fake_llm import RecordedRequest, Reply, Script, ToolCall

TEST_COMMAND = "python3 test_calc.py"
ALLOW_TEST = f"Bash({TEST_COMMAND})"
_TASK_ID = re.compile(r"\(task ([\w.-]+)\)")


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(path: Path, number: int) -> str:
    """A repository whose test fails (`add` subtracts); a later commit adds a README. The buggy commit's id."""
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    (path / "calc.py").write_text(f"# repository {number}\n\n\ndef add(a, b):\n    return a - b\n")
    (path / "test_calc.py").write_text(
        "import sys\nfrom calc import add\n\nif add(2, 3) != 5:\n    sys.exit('add(2, 3) is not 5')\nprint('ok')\n"
    )
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "the bug", cwd=path)
    base = git("rev-parse", "HEAD", cwd=path).strip()
    (path / "README").write_text("later work\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "later", cwd=path)
    return base


def task_line(task_id: str, repo: Path, base: str | None = None, *, swe_bench: bool = False) -> str:
    prompt = f"Fix the failing test in this repository (task {task_id})."
    if swe_bench:
        row: dict[str, Any] = {"instance_id": task_id, "problem_statement": prompt, "repo": str(repo)}
    else:
        row = {"id": task_id, "prompt": prompt, "repo": str(repo), "test": TEST_COMMAND}
    if base is not None:
        row["base_commit"] = base
    if swe_bench:
        row |= {"test": TEST_COMMAND, "FAIL_TO_PASS": "[]", "version": "1.0"}  # extra SWE-bench fields are ignored
    return json.dumps(row)


def make_tasks(
    root: Path,
    ids: Sequence[str],
    *,
    extra_lines: Sequence[str] = (),
    overrides: dict[str, dict[str, object]] | None = None,
) -> tuple[Path, dict[str, str]]:
    """Repositories under `root/repos` and `root/tasks.jsonl` for `ids` — every third task SWE-bench-shaped, every
    other one at its base commit rather than HEAD, every fourth one's repository given as a file:// URL (mirrored
    once, like a remote) — with `overrides` merged into the named tasks' lines; the base commit of each task that
    names one."""
    lines, bases = [], {}
    for number, task_id in enumerate(ids):
        repo = root / "repos" / f"r{number}"
        base = make_repo(repo, number)
        at = base if number % 2 == 0 else None
        if at is not None:
            bases[task_id] = at
        row = json.loads(task_line(task_id, repo, at, swe_bench=number % 3 == 2))
        if number % 4 == 3:
            row["repo"] = repo.as_uri()
        lines.append(json.dumps({**row, **(overrides or {}).get(task_id, {})}))
    tasks = root / "tasks.jsonl"
    tasks.write_text("\n".join([*lines, *extra_lines]) + "\n")
    return tasks, bases


def task_of(request: RecordedRequest) -> str:
    for message in request.body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            found = _TASK_ID.search(text)
            if found:
                return found.group(1)
    return ""


def fixing_model(delay: float = 0.0) -> Callable[[RecordedRequest], Script]:
    """The responder: each task's next step, from the request alone."""

    def respond(request: RecordedRequest) -> Script:
        task_id = task_of(request)
        step = sum(1 for m in request.body.get("messages", []) if m.get("role") == "assistant")
        wrong = task_id.startswith("bad")
        if step == 0:
            return Reply(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})], delay=delay)
        if step == 1:
            new = "return a * b" if wrong else "return a + b"
            edit = ToolCall("Edit", {"file_path": "calc.py", "old_string": "return a - b", "new_string": new})
            note = ToolCall("Write", {"file_path": "notes.txt", "content": f"fixed in {task_id}\n"})
            return Reply(tool_calls=[edit, note], delay=delay)
        if step == 2:
            return Reply(tool_calls=[ToolCall("Bash", {"command": TEST_COMMAND})], delay=delay)
        return Reply(text=f"Fixed {task_id}.", delay=delay)

    return respond


def requests_per_task(requests: Sequence[RecordedRequest]) -> Counter[str]:
    return Counter(task_of(request) for request in requests)


def batch_env(base_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "OPENAI_MODEL": "gpt-4.1-mini"}
    return {**env, **(extra or {})}


def batch_command(tasks: Path, out: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "react_agent_mini", "batch", str(tasks), "--out", str(out), *flags]


def run_batch(tasks: Path, out: Path, base_url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        batch_command(tasks, out, "--allowed-tools", ALLOW_TEST, *flags),
        env=batch_env(base_url),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]


def latest(out: Path) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in results(out)}


def applies_and_passes(repo: Path, base: str, patch: Path, into: Path) -> Iterator[str]:
    """Problems found applying `patch` to a fresh clone of `repo` at `base` and running the test ("" if none)."""
    git("clone", "-q", str(repo), str(into), cwd=into.parent)
    git("checkout", "-q", "--detach", base, cwd=into)
    check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=into, capture_output=True, text=True)
    if check.returncode != 0:
        yield f"{patch.name} does not apply: {check.stderr.strip()}"
        return
    git("apply", str(patch), cwd=into)
    test = subprocess.run(TEST_COMMAND.split(), cwd=into, capture_output=True, text=True)
    if test.returncode != 0:
        yield f"{patch.name}: the test still fails: {test.stderr.strip()}"
