"""`ram batch --ray`: the same batch as on the local pool, on a real Ray cluster this test starts on 127.0.0.1 (no
dashboard, no usage reports, no token), with the same results; and what a worker killed mid-task leaves (nothing:
Ray runs the task again, and the dead worker's clone is swept away), said in one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Hang, RecordedRequest, Script
from ..processes import pids_with, wait_until
from .batch_support import (
    ALLOW_TEST,
    batch_command,
    batch_env,
    fixing_model,
    latest,
    make_tasks,
    requests_per_task,
    run_batch,
    task_of,
)

RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # a single-node cluster: Ray keeps every address on loopback
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",  # stop at once when the test ends
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def ray_node_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary directory of the cluster's node: where its workers make workspaces and mirrors."""
    return tmp_path_factory.mktemp("ray-node-tmp")


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory, ray_node_tmp: Path) -> Iterator[str]:
    """A Ray head node with 2 CPUs on 127.0.0.1, for the tests of this module; its address. Its workers get an
    environment of their own: no provider keys, empty user directories, a temporary directory of the test's."""
    pytest.importorskip("ray")
    home = tmp_path_factory.mktemp("ray-xdg")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env |= {**RAY_ENV, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config")}
    env["TMPDIR"] = str(ray_node_tmp)
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    log = Path(temp, "start.log")
    ray = str(Path(sys.executable).with_name("ray"))
    command = [ray, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port)]
    command += ["--include-dashboard=false", "--disable-usage-stats", "--num-cpus", "2", "--temp-dir", temp]
    with log.open("w") as sink:
        head = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        started = wait_until(lambda: "Ray runtime started" in log.read_text() or head.poll() is not None, 180)
        assert started and head.poll() is None, log.read_text()[-3000:]
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(autouse=True)
def ray_driver_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch's driver talks to the cluster on loopback, without a token, as its nodes do."""
    for name, value in RAY_ENV.items():
        monkeypatch.setenv(name, value)


def test_the_same_batch_on_ray_gives_the_same_results(
    ray_cluster: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    ids = [f"t{i}" for i in range(7)] + ["bad-1"]
    tasks, _ = make_tasks(tmp_path, ids)
    fake_llm.set_responder(fixing_model())

    pool = run_batch(tasks, tmp_path / "pool", fake_llm.openai_base_url, "--workers", "4")
    on_ray = run_batch(tasks, tmp_path / "ray", fake_llm.openai_base_url, "--workers", "4", "--ray", ray_cluster)

    assert (pool.returncode, on_ray.returncode) == (1, 1), on_ray.stderr[-3000:]
    assert "· ray × 4" in on_ray.stdout
    local, remote = latest(tmp_path / "pool"), latest(tmp_path / "ray")
    assert sorted(remote) == sorted(ids)
    fields = ("status", "test_exit_code", "num_turns", "usage", "cost_usd", "permission_denials", "base_commit")
    for task_id in ids:
        assert {f: remote[task_id][f] for f in fields} == {f: local[task_id][f] for f in fields}, task_id
        assert (tmp_path / "ray" / remote[task_id]["patch"]).read_text() == (
            tmp_path / "pool" / local[task_id]["patch"]
        ).read_text()
        assert (tmp_path / "ray" / remote[task_id]["transcript"]).stat().st_size > 0
    assert (tmp_path / "ray" / "preds.json").read_text() == (tmp_path / "pool" / "preds.json").read_text()
    assert requests_per_task(fake_llm.requests) == {task_id: 2 * 4 for task_id in ids}

    # a rerun on Ray skips what is done, as on the pool
    again = run_batch(tasks, tmp_path / "ray", fake_llm.openai_base_url, "--ray", ray_cluster)
    hint = "1 did not complete: --retry-failed runs it again"
    assert again.returncode == 1 and f"0 task(s) to run, 8 done before (skipped; {hint})" in again.stderr


def test_workers_that_cannot_import_ram_stop_the_batch_at_once(ray_cluster: str, tmp_path: Path) -> None:
    """The runtime_env reaches the workers: here it shadows ram with a package that fails to import."""
    tasks, _ = make_tasks(tmp_path, ["t0"])
    shadow = tmp_path / "shadow" / "react_agent_mini"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('this is not ram')\n")
    runtime_env = json.dumps({"py_modules": [str(shadow)]})
    done = run_batch(
        tasks, tmp_path / "out", "http://127.0.0.1:9/v1", "--ray", ray_cluster, "--ray-runtime-env", runtime_env
    )
    assert done.returncode == 2
    assert "error: the Ray workers cannot run ram (ImportError: this is not ram); give them ram with" in done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def _workspaces_left(node_tmp: Path) -> list[str]:
    """What the node's `ram-batch` folder holds besides the mirrors of git URLs (a cache kept on purpose)."""
    area = node_tmp / "ram-batch"
    return sorted(str(p.relative_to(area)) for p in area.rglob("*") if p.relative_to(area).parts[0] != "repos")


def _kill_worker_of(task_id: str) -> int:
    """SIGKILL the Ray worker running the task (Ray names its process after the task) once it is there; its pid."""
    found: list[int] = []

    def look() -> bool:
        found[:] = found or pids_with(f"ram-batch {task_id}")
        return bool(found)

    assert wait_until(look, timeout=120), task_id
    os.kill(found[0], signal.SIGKILL)
    return found[0]


def test_a_killed_worker_task_runs_again_and_leaves_no_clone(
    ray_cluster: str, ray_node_tmp: Path, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    tasks, _ = make_tasks(tmp_path, ["t0", "kill-me"])
    fixing = fixing_model()
    hung: list[RecordedRequest] = []

    def respond(request: RecordedRequest) -> Script:
        if task_of(request) == "kill-me" and not hung:  # the first attempt waits here until its worker is killed
            hung.append(request)
            return Hang()
        return fixing(request)

    fake_llm.set_responder(respond)
    out = tmp_path / "out"
    command = batch_command(tasks, out, "--allowed-tools", ALLOW_TEST, "--ray", ray_cluster)
    batch = subprocess.Popen(
        command, env=batch_env(fake_llm.openai_base_url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert wait_until(lambda: bool(hung), timeout=300)  # mid-task: its clone is made, its session running
        _kill_worker_of("kill-me")
        stdout, stderr = batch.communicate(timeout=600)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()

    assert batch.returncode == 0, stderr
    assert "kill-me: the Ray worker died; Ray runs the task again (attempt 2 of 3)\n" in stderr
    rows = latest(out)
    assert (rows["kill-me"]["status"], rows["t0"]["status"]) == ("completed", "completed")
    assert "+    return a + b" in (out / rows["kill-me"]["patch"]).read_text()
    assert stdout.startswith("ram batch: 2 ran (2 completed · 0 failed)") and len(stdout.splitlines()) == 3, stdout
    assert "kill-me: the Ray worker died" in (out / "logs" / "ray.log").read_text()
    assert _workspaces_left(ray_node_tmp) == []


def test_a_task_whose_worker_dies_every_time_is_one_line_and_leaves_no_clone(
    ray_cluster: str, ray_node_tmp: Path, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Ray runs it three times; each attempt's worker is killed mid-task. The last one's clone is swept by the
    driver at the end (no other task comes to that node to do it)."""
    tasks, _ = make_tasks(tmp_path, ["doomed"])
    fake_llm.set_responder(lambda request: Hang())
    out = tmp_path / "out"
    command = batch_command(tasks, out, "--allowed-tools", ALLOW_TEST, "--ray", ray_cluster)
    batch = subprocess.Popen(
        command, env=batch_env(fake_llm.openai_base_url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        for attempt in (1, 2, 3):
            assert wait_until(lambda: len(fake_llm.requests) >= attempt, timeout=300), attempt  # noqa: B023
            _kill_worker_of("doomed")
        stdout, stderr = batch.communicate(timeout=600)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()

    assert batch.returncode == 1, stderr
    log = out / "logs" / "ray.log"
    died = [line for line in stderr.splitlines() if "the Ray worker died" in line]
    assert died[:2] == [
        "doomed: the Ray worker died; Ray runs the task again (attempt 2 of 3)",
        "doomed: the Ray worker died; Ray runs the task again (attempt 3 of 3)",
    ]
    assert len(died) == 3 and died[2].startswith("[1/1] doomed error · 0 turns · ")
    assert died[2].endswith(f" · the Ray worker died (3 attempts; details in {log})")
    assert latest(out)["doomed"]["error"] == f"the Ray worker died (3 attempts; details in {log})"
    assert "Worker" not in stdout and "127.0.0.1" not in stdout and len(stdout.splitlines()) == 4, stdout
    assert "WorkerCrashedError" in log.read_text()
    assert _workspaces_left(ray_node_tmp) == []
