"""`ram batch --ray` past one disk: a real two-node Ray cluster on 127.0.0.1 whose nodes cannot see the driver's
files — the driver runs in a mount namespace of its own (`unshare -m`) with its repositories on a private tmpfs —
gives the same statuses and patches as the local pool on one machine: every local repository travels to the nodes
as a git bundle through Ray's object store, once per repository, verified on arrival; nothing stays on the nodes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer
from .batch_support import ALLOW_TEST, batch_env, fixing_model, latest, make_tasks, run_batch
from .ray_nodes import RAY_ENV, RayNode

ROOT = Path(__file__).resolve().parents[2]
TASKS = 20


def _ids() -> list[str]:
    return [f"t{i}" if i % 7 else f"bad-{i}" for i in range(TASKS)]  # the same ids as private_driver.py's


def _unshare_works() -> str | None:
    """Why a private mount namespace cannot be made here (None: it can)."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare(1) or mount(8) is not installed"
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "probe", "/mnt"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"no private mount namespace here ({probe.stderr.strip()[:200]}): it needs root or CAP_SYS_ADMIN"
    return None


@pytest.fixture(scope="module")
def node_tmps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Each node's temporary directory: where its workers make workspaces and keep what arrived."""
    return tmp_path_factory.mktemp("node-a-tmp"), tmp_path_factory.mktemp("node-b-tmp")


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory: pytest.TempPathFactory, node_tmps: tuple[Path, Path]) -> Iterator[str]:
    pytest.importorskip("ray")
    why = _unshare_works()
    if why:
        pytest.skip(why)
    home = tmp_path_factory.mktemp("ray-xdg")
    head = RayNode(node_tmps[0], home, cpus=2)
    try:
        other = RayNode(node_tmps[1], home, cpus=2, head=head.address)
        try:
            yield head.address
        finally:
            other.stop()
    finally:
        head.stop()


def test_a_batch_on_two_nodes_without_the_driver_s_disk_gives_the_one_node_results(
    two_nodes: str, node_tmps: tuple[Path, Path], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.set_responder(fixing_model())
    one = tmp_path / "one"
    tasks, _ = make_tasks(tmp_path / "here", _ids())
    on_one_node = run_batch(tasks, one, fake_llm.openai_base_url, "--workers", "4")
    assert on_one_node.returncode == 1, on_one_node.stderr[-3000:]

    private, cluster = tmp_path / "private", tmp_path / "cluster"
    private.mkdir()
    command = ["unshare", "-m", "--propagation", "private", sys.executable, "-m", "tests.batch.private_driver"]
    command += [str(private), str(cluster), str(TASKS), "--allowed-tools", ALLOW_TEST, "--workers", "4"]
    command += ["--ray", two_nodes]
    env = batch_env(fake_llm.openai_base_url, RAY_ENV)
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)

    assert done.returncode == 1, done.stderr[-3000:]
    assert list(private.iterdir()) == []  # outside the driver's namespace its repositories were never there
    local, remote = latest(one), latest(cluster)
    assert sorted(remote) == sorted(local) == sorted(_ids())
    for task_id in _ids():
        assert remote[task_id]["status"] == local[task_id]["status"], (task_id, remote[task_id])
        assert (cluster / remote[task_id]["patch"]).read_text() == (one / local[task_id]["patch"]).read_text()
        assert (cluster / remote[task_id]["transcript"]).stat().st_size > 0
    assert {row["status"] for row in remote.values()} == {"completed", "failed"}
    log = (cluster / "logs" / "ray.log").read_text()
    assert f"tasks ran on 2 node(s); {TASKS} local repositories shipped as bundles" in log, log[-2000:]
    for node_tmp in node_tmps:  # each node unpacked what it needed; the sweep at the end took it away
        left = [p for p in (node_tmp / "ram-batch").rglob("*") if "repos" not in p.relative_to(node_tmp).parts]
        assert left == [], left
