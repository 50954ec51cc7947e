"""`ram batch --ray`: the same batch as on the local pool, on a real Ray cluster this test starts on 127.0.0.1 (no
dashboard, no usage reports, no token), with the same results."""

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

from ..fakes.fake_llm import FakeLLMServer
from ..processes import wait_until
from .batch_support import fixing_model, latest, make_tasks, requests_per_task, run_batch

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
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Ray head node with 2 CPUs on 127.0.0.1, for the tests of this module; its address. Its workers get an
    environment of their own: no provider keys, empty user directories, a temporary directory of the test's."""
    pytest.importorskip("ray")
    home = tmp_path_factory.mktemp("ray-xdg")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env |= {**RAY_ENV, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config")}
    env["TMPDIR"] = str(tmp_path_factory.mktemp("ray-node-tmp"))  # the workspaces and mirrors the workers make
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
    assert again.returncode == 1 and "0 task(s) to run, 8 done before (skipped)" in again.stderr


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
