"""`ram batch` on the local process pool, run as a user runs it: real git repositories with a failing test, the
real CLI in a subprocess with its worker processes, the loopback fake model fixing each task (the reply chosen from
the request, so parallel workers can share the server)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Hang, HttpError, RecordedRequest, Reply, Script, ToolCall
from ..processes import wait_until
from .batch_support import (
    ALLOW_TEST,
    applies_and_passes,
    batch_command,
    batch_env,
    fixing_model,
    git,
    latest,
    make_repo,
    make_tasks,
    requests_per_task,
    results,
    run_batch,
    task_line,
    task_of,
)

STEPS = 4  # model calls per task in the fixing script


def test_a_batch_fixes_every_task_and_a_rerun_skips_them(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    ids = [f"t{i}" for i in range(7)] + ["bad-1"]
    missing = json.dumps({"id": "gone", "prompt": "fix it (task gone)", "repo": "repos/none/here"})
    setups: dict[str, dict[str, object]] = {
        "t4": {"setup": ["echo built > build.txt", "mkdir -p dist && touch dist/x"]},
        "t5": {"setup": "exit 3"},
    }
    bad_lines = [missing, "{not json", json.dumps({"id": "x", "repo": "."})]
    tasks, bases = make_tasks(tmp_path, ids, extra_lines=bad_lines, overrides=setups)
    fake_llm.set_responder(fixing_model())
    out = tmp_path / "out"

    done = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "4")

    assert done.returncode == 1, done.stderr  # not every task completed
    assert f"{tasks}:10: skipped: not valid JSON" in done.stderr
    assert f"{tasks}:11: skipped: missing `prompt` (or `problem_statement`)" in done.stderr
    rows = latest(out)
    assert sorted(rows) == sorted([*ids, "gone"])
    assert rows["t5"]["status"] == "error" and rows["t5"]["error"] == "setup failed (exit 3)"
    assert rows["t5"]["num_turns"] == 0 and rows["t5"]["patch"] is None
    fixed = [task_id for task_id in ids if task_id not in ("t5", "bad-1")]
    for task_id in fixed:
        row = rows[task_id]
        assert (row["status"], row["test_exit_code"], row["num_turns"], row["permission_denials"]) == (
            "completed", 0, STEPS, 0,
        ), row  # fmt: skip
        assert row["cost_usd"] > 0 and row["usage"]["input_tokens"] > 0 and row["duration_s"] > 0
    assert (rows["bad-1"]["status"], rows["bad-1"]["test_exit_code"]) == ("failed", 1)
    assert "add(2, 3) is not 5" in rows["bad-1"]["test_output"]
    assert rows["gone"]["status"] == "error" and "is not a git repository" in rows["gone"]["error"]
    assert "ram batch: 9 ran (6 completed · 1 failed · 2 error) · 0 skipped" in done.stdout
    assert (out / "repos").is_dir() and len(list((out / "repos").glob("*.git"))) == 2  # t3 and t7: file:// URLs

    # the patches: against each task's base (an older commit for some), new files included, bytecode left out
    for number, task_id in enumerate(ids):
        if task_id == "t5":
            continue
        repo = tmp_path / "repos" / f"r{number}"
        patch = out / rows[task_id]["patch"]
        text = patch.read_text()
        assert "new file mode" in text and "+fixed in " + task_id in text and "__pycache__" not in text
        assert "build.txt" not in text and "dist/" not in text  # what setup left is not the agent's work
        base = bases.get(task_id) or git("rev-parse", "HEAD", cwd=repo).strip()
        assert rows[task_id]["base_commit"] == base
        into = tmp_path / "check" / task_id
        into.parent.mkdir(exist_ok=True)
        problems = list(applies_and_passes(repo, base, patch, into))
        assert problems == ([] if task_id != "bad-1" else [f"{patch.name}: the test still fails: add(2, 3) is not 5"])
        assert git("status", "--porcelain", cwd=repo) == ""  # the user's repository is untouched
        assert git("worktree", "list", cwd=repo).count("\n") == 1

    preds = json.loads((out / "preds.json").read_text())
    assert sorted(preds) == sorted([*ids, "gone"])
    assert preds["t2"] == {
        "instance_id": "t2",
        "model_name_or_path": "gpt-4.1-mini",
        "model_patch": (out / "patches" / "t2.patch").read_text(),
    }
    assert preds["gone"]["model_patch"] == ""
    for task_id in [*fixed, "bad-1"]:
        lines = (out / rows[task_id]["transcript"]).read_text().splitlines()
        assert json.loads(lines[0])["type"] == "meta" and f"(task {task_id})" in lines[1]
    assert not (out / "workspaces").exists()  # each removed after its task, then their directory
    sessions = Path(os.environ["XDG_DATA_HOME"], "react-agent-mini", "sessions")
    assert not sessions.exists() or list(sessions.iterdir()) == []  # moved into DIR, not left in ram's store
    summary = json.loads((out / "summary.json").read_text())
    assert summary["statuses"] == {"completed": 6, "failed": 1, "error": 2} and summary["bad_lines"] == 2

    # a rerun skips every task with a result, and says how to run again the ones that did not complete
    asked = len(fake_llm.requests)
    again = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "4")
    assert again.returncode == 1
    assert len(fake_llm.requests) == asked
    hint = "3 did not complete: --retry-failed runs them again"
    assert f"ram batch: 0 task(s) to run, 9 done before (skipped; {hint})\n" in again.stderr
    assert f"\n{hint}\n" in again.stdout
    assert len(results(out)) == 9

    # --retry-failed runs only the ones that did not complete, on as many workers as the header and the footer say
    retried = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "4", "--retry-failed")
    assert retried.returncode == 1
    assert requests_per_task(fake_llm.requests[asked:]) == {"bad-1": STEPS}
    assert "ram batch: 3 task(s) to run, 6 done before (skipped) · pool · 3 worker(s)\n" in retried.stderr
    assert " · pool × 3\n" in retried.stdout and json.loads((out / "summary.json").read_text())["workers"] == 3
    assert f"\n{hint}\n" in retried.stdout  # they did not complete this time either
    # one line per task: each retried task's new line replaced its old one (and comes last)
    after = results(out)
    assert sorted(row["id"] for row in after) == sorted([*ids, "gone"])
    assert sorted(row["id"] for row in after[6:]) == ["bad-1", "gone", "t5"]


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return [int(word) for word in handle.read().split()]


def test_a_batch_stopped_with_ctrl_c_resumes_where_it_stopped(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    ids = [f"t{i}" for i in range(8)]
    tasks, _ = make_tasks(tmp_path, ids)
    fake_llm.set_responder(fixing_model(delay=0.03))
    out = tmp_path / "out"
    env = batch_env(fake_llm.openai_base_url)
    command = batch_command(tasks, out, "--allowed-tools", ALLOW_TEST, "--workers", "3")
    batch = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = out / "results.jsonl"
        assert wait_until(lambda: lines.exists() and len(lines.read_text().splitlines()) >= 2, timeout=120)
        workers = _children(batch.pid)
        busy = subprocess.run(command, env=env, capture_output=True, text=True)  # the same DIR, meanwhile
        batch.send_signal(signal.SIGINT)
        stdout, stderr = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            batch.kill()
    assert busy.returncode == 2 and f"{out} is in use by ram batch (process {batch.pid})" in busy.stderr
    assert batch.returncode == 130, stderr
    assert "stopped early: interrupted (SIGINT)" in stdout
    # --workers 3: a process per CPU (up to 3), the three tasks shared among them (child.TASKS_PER_PROCESS each)
    assert len(workers) == min(os.cpu_count() or 1, 3) and not [p for p in workers if os.path.exists(f"/proc/{p}")]
    first = latest(out)
    assert 2 <= len(first) < 8 and all(row["status"] == "completed" for row in first.values())
    assert len(results(out)) == len(first)  # whole lines only, one per task
    before = len(fake_llm.requests)

    done = subprocess.run(command, env=env, capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    assert f"{len(first)} done before (skipped)" in done.stderr
    rows = latest(out)
    assert sorted(rows) == ids and all(row["status"] == "completed" for row in rows.values())
    asked_again = requests_per_task(fake_llm.requests[before:])
    assert not set(asked_again) & set(first)  # finished tasks were not run again
    assert all(asked_again[task_id] == STEPS for task_id in set(ids) - set(first))
    assert json.loads((out / "summary.json").read_text())["completed_of_all"] == 8


def test_a_429_pauses_every_worker_of_the_endpoint(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Task a gets a 429 (retry-after 3 s) while b streams a slow first answer: b's next call waits out the pause
    too (without the shared limiter it would go about 1 s after the 429)."""
    tasks, _ = make_tasks(tmp_path, ["a", "b"])
    fixing = fixing_model()
    limited: list[float] = []

    def respond(request: RecordedRequest) -> Script:
        steps = sum(1 for m in request.body["messages"] if m.get("role") == "assistant")
        if task_of(request) == "a" and not limited:
            limited.append(request.received_at)
            return HttpError(429, "slow down", retry_after="3")
        if task_of(request) == "b" and steps == 0:
            return Reply(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})], delay=0.1)
        return fixing(request)

    fake_llm.set_responder(respond)
    out = tmp_path / "out"

    done = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "2")

    assert done.returncode == 0, done.stderr
    b_calls = [r.received_at for r in fake_llm.requests if task_of(r) == "b"]
    a_calls = [r.received_at for r in fake_llm.requests if task_of(r) == "a"]
    assert len(b_calls) == STEPS and len(a_calls) == STEPS + 1
    # b's calls after the 429 (and the few ms its worker takes to record it) all wait for the end of the pause
    after = [at - limited[0] for at in b_calls if at > limited[0] + 0.2]
    assert after and min(after) >= 2.9, after
    assert a_calls[1] >= limited[0] + 2.9
    state = [json.loads(p.read_text()) for p in (out / ".limits").iterdir()]
    assert [s["streak"] for s in state] == [0]  # recovered once calls went through again


def test_time_limits_and_the_budget_stop_tasks_without_stopping_the_batch(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    # the slow task's model never answers, so its 2-second limit is the only way out; the others get 10 minutes of
    # headroom (--timeout), which they never need, so a loaded machine cannot make them time out
    tasks, _ = make_tasks(tmp_path, ["slow", "t1", "t2"], overrides={"slow": {"timeout": 2}})
    fixing = fixing_model()
    fake_llm.set_responder(lambda request: Hang() if task_of(request) == "slow" else fixing(request))
    out = tmp_path / "out"

    done = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "2", "--timeout", "600", "--keep-workspaces")

    assert done.returncode == 1, done.stderr
    rows = latest(out)
    assert rows["slow"]["status"] == "timeout" and "time limit (2 s)" in rows["slow"]["error"]
    assert rows["slow"]["test_exit_code"] is None
    assert (rows["t1"]["status"], rows["t2"]["status"]) == ("completed", "completed")
    kept = Path(rows["t1"]["workspace"])
    assert kept == out / "workspaces" / "t1" and "return a + b" in (kept / "calc.py").read_text()

    # --max-cost: each task costs $0.000288 (4 calls at gpt-4.1-mini's price); the 5th call passes $0.0003
    budget_tasks, _ = make_tasks(tmp_path / "budget", ["c1", "c2", "c3"])
    fake_llm.set_responder(fixing)
    budget_out = tmp_path / "budget-out"
    stopped = run_batch(budget_tasks, budget_out, fake_llm.openai_base_url, "--workers", "1", "--max-cost", "0.0003")
    assert stopped.returncode == 1
    assert "stopped early: --max-cost $0.0003 reached" in stopped.stdout
    assert list(latest(budget_out)) == ["c1"]  # c2 was stopped, not recorded: the next run does it
    resumed = run_batch(budget_tasks, budget_out, fake_llm.openai_base_url, "--workers", "1")
    assert resumed.returncode == 0 and sorted(latest(budget_out)) == ["c1", "c2", "c3"]


def test_a_base_commit_that_is_not_a_commit_of_the_repository_says_so(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    repo = tmp_path / "repos" / "r0"
    base = make_repo(repo, 0)
    blob = git("rev-parse", "HEAD:calc.py", cwd=repo).strip()  # an object of the repository, but not a commit
    lines = [task_line("gone", repo, "deadbeef"), task_line("blob", repo, blob), task_line("dash", repo, "--orphan")]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join([*lines, task_line("ok", repo, base)]) + "\n")
    fake_llm.set_responder(fixing_model())
    out = tmp_path / "out"

    done = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "2")

    assert done.returncode == 1, done.stderr
    assert f"{tasks}:3: skipped: `base_commit` '--orphan' is not a commit (it starts with '-')\n" in done.stderr
    rows = latest(out)
    assert sorted(rows) == ["blob", "gone", "ok"]  # the refused line never ran
    for task_id, commit in (("gone", "deadbeef"), ("blob", blob)):
        expected = ("error", f"base_commit {commit} is not a commit in {repo}")
        assert (rows[task_id]["status"], rows[task_id]["error"]) == expected
    assert "path argument" not in done.stderr and "fatal" not in done.stderr
    assert (rows["ok"]["status"], rows["ok"]["base_commit"]) == ("completed", base)
    assert set(requests_per_task(fake_llm.requests)) == {"ok"}


def test_nothing_of_batch_loads_for_other_commands_nor_ray_without_ray(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    probe = "import sys, react_agent_mini.cli; print(sorted(m for m in sys.modules if 'batch' in m or m == 'ray'))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
    tasks, _ = make_tasks(tmp_path, ["t0"])
    fake_llm.set_responder(fixing_model())
    env = batch_env(fake_llm.openai_base_url, {"PYTHONPROFILEIMPORTTIME": "1"})
    out = tmp_path / "out"
    done = subprocess.run(
        batch_command(tasks, out, "--allowed-tools", ALLOW_TEST), env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    driver = _imported(done.stderr)
    worker = _imported((out / "logs" / "worker-1.log").read_text())
    assert "react_agent_mini.batch.run" in driver and "react_agent_mini.batch.worker" in worker
    assert not {m for m in driver | worker if m == "ray" or m.startswith("ray.")}


def _imported(importtime: str) -> set[str]:
    """The modules a `-X importtime` report names."""
    return {line.rsplit("|", 1)[-1].strip() for line in importtime.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"id": "a", "prompt": "p"}', "missing `repo`"),
        ('{"id": "a", "prompt": "p", "repo": ".", "setup": 3}', "`setup` must be a shell command or a list of them"),
        ('{"id": "a", "prompt": "p", "repo": ".", "max_turns": 0}', "`max_turns` must be a whole number above 0"),
        ('{"id": "", "prompt": "p", "repo": "."}', "`id` (or `instance_id`) must not be empty"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_bad_task_lines_say_why(line: str, reason: str, tmp_path: Path) -> None:
    from react_agent_mini.batch.tasks import read_tasks

    path = tmp_path / "tasks.jsonl"
    path.write_text(
        '{"id": "ok", "prompt": "p", "repo": "."}\n\n' + line + "\n" + '{"id": "ok", "prompt": "q", "repo": "."}\n'
    )
    tasks, bad = read_tasks(path)
    assert [t.id for t in tasks] == ["ok"]
    assert [(b.line, b.reason) for b in bad] == [(3, reason), (4, "id 'ok' is already used on line 1")]


def test_swe_bench_instances_are_read_as_they_are(tmp_path: Path) -> None:
    from react_agent_mini.batch.tasks import file_stem, read_tasks

    row = {
        "instance_id": "astropy__astropy-12907",
        "problem_statement": "Modeling's separability_matrix does not compute separability correctly",
        "repo": "astropy/astropy",
        "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
        "patch": "diff --git …",
        "FAIL_TO_PASS": '["test_separable"]',
    }
    (tmp_path / "local").mkdir()
    path = tmp_path / "swe.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "instance_id": "x/y 1", "repo": "local"}) + "\n")
    (first, second), bad = read_tasks(path)
    assert bad == []
    assert (first.id, first.repo, first.base_commit) == (
        "astropy__astropy-12907", "https://github.com/astropy/astropy.git", row["base_commit"],
    )  # fmt: skip
    assert first.prompt == row["problem_statement"] and first.test == ()
    assert second.repo == str(tmp_path / "local")  # a directory of that name wins over the GitHub guess
    assert file_stem(first.id) == first.id and file_stem("x/y 1").startswith("x_y_1-")


def test_the_backoff_state_pauses_then_lets_calls_through_one_at_a_time() -> None:
    from react_agent_mini.batch.limiter import SPACING, BackoffState

    state = BackoffState()
    assert state.reserve(100.0) == 0.0
    assert state.penalize(100.0, 3.0) == 3.0
    assert [state.reserve(101.0) for _ in range(3)] == [2.0, 2.0 + SPACING, 2.0 + 2 * SPACING]
    assert state.penalize(101.0, None, rand=lambda: 1.0) == 2.0  # no retry-after: 1 s doubled for the 2nd in a row
    assert state.succeeded() and not state.succeeded()
    assert state.reserve(104.0) == 0.0


def test_the_file_limiter_is_shared_by_processes(tmp_path: Path) -> None:
    """One process records a 429; another, started afterwards, is told to wait."""
    code = (
        "import asyncio, sys; from pathlib import Path; from react_agent_mini.batch.limiter import FileLimiter\n"
        "limiter = FileLimiter(Path(sys.argv[1]))\n"
        "if sys.argv[2] == 'hit': asyncio.run(limiter.penalize('openai http://x', 30.0))\n"
        "else: print(asyncio.run(limiter.reserve('openai http://x')))\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path), "hit"], check=True)
    waited = subprocess.run([sys.executable, "-c", code, str(tmp_path), "ask"], capture_output=True, text=True)
    assert 0 < float(waited.stdout) <= 30.0
    other = subprocess.run(
        [sys.executable, "-c", code.replace("openai http://x", "openai http://y"), str(tmp_path), "ask"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert float(other.stdout) == 0.0  # another endpoint is not paused


def test_a_results_line_cut_by_a_kill_is_dropped_and_its_task_runs_again(tmp_path: Path) -> None:
    from react_agent_mini.batch.outcome import Outcome, TaskResult
    from react_agent_mini.batch.results import ResultStore

    store = ResultStore.open(tmp_path)
    store.record(Outcome(TaskResult("a", "completed"), patch="diff --git a/x b/x\n", transcript='{"type": "meta"}\n'))
    store.close()
    with (tmp_path / "results.jsonl").open("ab") as handle:
        handle.write(b'{"id": "b", "status": "compl')
    again = ResultStore.open(tmp_path)
    assert list(again.latest) == ["a"] and again.latest["a"].patch == "patches/a.patch"
    assert not again.should_run("a", retry_failed=True) and again.should_run("b", retry_failed=False)
    assert "unfinished last line was removed" in again.warnings[0]
    assert (tmp_path / "results.jsonl").read_bytes().endswith(b"}\n")
    with pytest.raises(Exception, match="is in use by ram batch"):
        ResultStore.open(tmp_path)
    again.close()
    ResultStore.open(tmp_path).close()  # released: a new run may open it


def test_a_run_killed_after_retrying_a_task_leaves_one_line_per_task_once_dir_is_opened_again(tmp_path: Path) -> None:
    """A run appends a retried task's new line and drops the old one when it ends; killed before that, it leaves
    both — the next run's open keeps the last."""
    from react_agent_mini.batch.outcome import Outcome, TaskResult
    from react_agent_mini.batch.results import ResultStore

    store = ResultStore.open(tmp_path)
    for task_id, status in (("a", "failed"), ("b", "completed"), ("a", "completed")):
        store.record(Outcome(TaskResult(task_id, status)))  # type: ignore[arg-type]
    store.close()  # no `compact`: what a kill leaves
    assert [row["id"] for row in results(tmp_path)] == ["a", "b", "a"]
    with (tmp_path / "results.jsonl").open("ab") as handle:
        handle.write(b"not a result\n")

    again = ResultStore.open(tmp_path)
    again.close()

    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [(row["id"], row["status"]) for row in map(json.loads, lines[:-1])] == [
        ("b", "completed"),
        ("a", "completed"),
    ]
    assert lines[-1] == "not a result"  # kept as it was


def test_on_a_terminal_a_live_bar_and_ctrl_c_from_the_keyboard(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    from ..ui.test_repl_minimal import Term

    tasks, _ = make_tasks(tmp_path, ["t0", "bad-1", "t2", "t3", "t4", "t5"])
    fake_llm.set_responder(fixing_model(delay=0.03))
    out = tmp_path / "out"
    env = batch_env(fake_llm.openai_base_url)
    flags = ("batch", str(tasks), "--out", str(out), "--allowed-tools", ALLOW_TEST, "--workers", "2")
    with Term(*flags, env=env, cwd=tmp_path) as term:
        term.expect("bad-1: failed")  # a task that did not complete is printed above the bar
        term.send("\x03")  # Ctrl+C reaches the driver only: the workers run in sessions of their own
        assert term.wait(120) == 130
        screen = term.screen()
    assert "ram batch" in screen and "/6" in screen and "✗ 1" in screen and "running" in screen
    assert "stopping: interrupted (SIGINT)" in screen and "stopped early: interrupted (SIGINT)" in screen
    first = latest(out)
    assert "bad-1" in first and len(first) < 6

    done = run_batch(tasks, out, fake_llm.openai_base_url, "--workers", "2")
    assert done.returncode == 1 and sorted(latest(out)) == ["bad-1", "t0", "t2", "t3", "t4", "t5"]
    assert "[" in done.stderr and "] t" in done.stderr  # not a terminal: plain lines


def test_every_task_gets_the_same_permissions(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """acceptEdits by default: the edits go through; with the sandbox off and no rule for it, the test command the
    model runs is denied in each task (and the task still finishes); a rule in a task's repository grants nothing."""
    tasks, _ = make_tasks(tmp_path, ["t0", "t1"])
    grant = {"permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"}}
    settings = tmp_path / "repos" / "r1" / ".agents" / "settings.json"  # t1 starts at HEAD: the file is there
    settings.parent.mkdir()
    settings.write_text(json.dumps(grant))
    git("add", ".", cwd=settings.parents[1])
    git("commit", "-q", "-m", "settings that try to grant themselves Bash", cwd=settings.parents[1])
    fake_llm.set_responder(fixing_model())
    out = tmp_path / "out"
    done = subprocess.run(
        batch_command(tasks, out, "--sandbox", "off"), env=batch_env(fake_llm.openai_base_url), capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = latest(out)
    assert [(rows[t]["status"], rows[t]["permission_denials"]) for t in ("t0", "t1")] == [("completed", 1)] * 2
    assert all("+    return a + b" in (out / rows[t]["patch"]).read_text() for t in ("t0", "t1"))
    answers = [str(r.body["messages"][-1]["content"]) for r in fake_llm.requests]
    assert sum(a.startswith("Error: Permission denied: Run: python3 test_calc.py") for a in answers) == 2
