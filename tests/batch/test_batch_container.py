"""A task with an `image` runs in a real podman container: its setup, its test and the agent's Bash commands run
inside (they see a marker file only the image has, and not the host's python), its file tools write the same
workspace through the bind mount, and nothing of the container stays behind. No image can be pulled here: the test
makes a small one from this machine's own bash and coreutils (`podman import`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from react_agent_mini.batch.environments import container_name

from ..fakes.fake_llm import FakeLLMServer, Hang, RecordedRequest, Reply, Script, ToolCall
from ..processes import wait_until
from .batch_support import batch_command, batch_env, latest, make_repo, task_of

MARKER = "only-in-the-ram-test-image"
PROGRAMS = ("bash", "sleep", "cat", "ls", "test", "echo", "mkdir")
CONTAINERS_CONF = '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n'
"""What podman needs on these machines (see the team's dependencies-checked notes)."""


def _libraries(program: str) -> list[str]:
    done = subprocess.run(["ldd", program], capture_output=True, text=True)
    return [word for line in done.stdout.splitlines() for word in line.split() if word.startswith("/")]


def _root_filesystem(root: Path) -> None:
    """A merged-/usr root filesystem with bash, a few coreutils, the libraries they need and the marker file."""
    (root / "usr" / "bin").mkdir(parents=True)
    for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
        (root / link).symlink_to(target)
    for name in PROGRAMS:
        program = shutil.which(name)
        assert program is not None, name
        shutil.copy2(os.path.realpath(program), root / "usr" / "bin" / name)
        for library in _libraries(program):
            inside = Path(library).relative_to("/")
            place = root / (inside if inside.parts[0] == "usr" else Path("usr", inside))  # /lib is usr/lib
            place.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.realpath(library), place)
    for folder in ("etc", "tmp", "root"):
        (root / folder).mkdir()
    (root / "etc" / "ram-image-marker").write_text(MARKER + "\n")
    (root / "etc" / "os-release").write_text("ID=ram-test\n")


@pytest.fixture(scope="module")
def podman_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/setup --dev installs Debian's podman and runc as root)")
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    env = {**os.environ, "CONTAINERS_CONF": str(conf)}
    info = subprocess.run(["podman", "info"], env=env, capture_output=True, text=True)
    if info.returncode != 0:
        pytest.skip(f"podman cannot run here: {info.stderr.strip().splitlines()[-1:]}")
    yield env


@pytest.fixture(scope="module")
def image(podman_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("rootfs")
    _root_filesystem(root)
    name = f"localhost/ram-batch-test:{uuid.uuid4().hex[:8]}"
    tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
    made = subprocess.run(["podman", "import", "-", name], stdin=tar.stdout, env=podman_env, capture_output=True)
    tar.wait()
    assert made.returncode == 0, made.stderr
    try:
        yield name
    finally:
        subprocess.run(["podman", "rmi", "--force", name], env=podman_env, capture_output=True)


def _in_container_model(request: RecordedRequest) -> Script:
    step = sum(1 for m in request.body.get("messages", []) if m.get("role") == "assistant")
    if step == 0:
        command = "cat /etc/ram-image-marker /setup-ran; test -e /usr/bin/python3 || echo no python here"
        return Reply(tool_calls=[ToolCall("Bash", {"command": command})])
    if step == 1:
        return Reply(tool_calls=[ToolCall("Write", {"file_path": "notes.txt", "content": "written by Write\n"})])
    if step == 2:
        return Reply(tool_calls=[ToolCall("Bash", {"command": "mkdir -p sub && cd sub && cat ../notes.txt"})])
    if step == 3:
        return Reply(tool_calls=[ToolCall("Bash", {"command": "pwd; ls /"})])
    return Reply(text="Done.")


def test_a_task_with_an_image_runs_its_commands_in_the_container(
    image: str, podman_env: dict[str, str], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    assert not Path("/etc/ram-image-marker").exists()
    repo = tmp_path / "repo"
    make_repo(repo, 0)
    row = {"id": "c1", "prompt": "Look around.", "repo": str(repo), "image": image}
    row |= {"setup": "echo setup ran in the container > /setup-ran", "test": "cat /etc/os-release notes.txt"}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(row) + "\n")
    fake_llm.set_responder(_in_container_model)
    out = tmp_path / "out"
    env = batch_env(fake_llm.openai_base_url, {"CONTAINERS_CONF": podman_env["CONTAINERS_CONF"]})
    done = subprocess.run(
        batch_command(tasks, out, "--allowed-tools", "Bash"), env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    result = latest(out)["c1"]
    assert (result["status"], result["test_exit_code"]) == ("completed", 0), result
    assert result["test_output"] == "ID=ram-test\nwritten by Write\n"  # the test ran inside, on the shared files
    transcript = (out / result["transcript"]).read_text()
    assert MARKER in transcript and "setup ran in the container" in transcript and "no python here" in transcript
    workspace = out / "workspaces" / "c1"
    assert f"{workspace}/sub\\nbin" in transcript  # the directory carried over; / is the image's
    patch = (out / result["patch"]).read_text()
    assert "+written by Write" in patch
    assert container_name(workspace) not in _names(podman_env)


def _holders(path: Path) -> list[int]:
    """The processes that have `path` open (the worker holding a workspace's lock)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if any(os.readlink(f"/proc/{entry}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{entry}/fd")):
                    found.append(int(entry))
    return found


def _names(podman_env: dict[str, str]) -> list[str]:
    listed = subprocess.run(
        ["podman", "ps", "--all", "--format", "{{.Names}}"], env=podman_env, capture_output=True, text=True
    )
    return listed.stdout.split()


def test_a_killed_worker_s_container_and_clone_do_not_stay_behind(
    image: str, podman_env: dict[str, str], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The worker is killed mid-task, its container running; the next task the pool starts sweeps away its clone
    and its container (as the next run in the same DIR would)."""
    repo = tmp_path / "repo"
    make_repo(repo, 0)
    rows = [{"id": task_id, "prompt": f"(task {task_id})", "repo": str(repo), "image": image} for task_id in ("a", "b")]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    hung: list[RecordedRequest] = []

    def respond(request: RecordedRequest) -> Script:
        if task_of(request) == "a":
            hung.append(request)
            return Hang()
        return Reply(text="Done.")

    fake_llm.set_responder(respond)
    out = tmp_path / "out"
    env = batch_env(fake_llm.openai_base_url, {"CONTAINERS_CONF": podman_env["CONTAINERS_CONF"]})
    batch = subprocess.Popen(
        batch_command(tasks, out, "--workers", "1"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    first = container_name(out / "workspaces" / "a")
    try:
        assert wait_until(lambda: bool(hung), timeout=300)  # mid-task: its clone and its container are there
        assert first in _names(podman_env) and (out / "workspaces" / "a").is_dir()
        (worker,) = _holders(out / "workspaces" / "a.workspace-lock")
        os.kill(worker, signal.SIGKILL)
        _, stderr = batch.communicate(timeout=600)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    rows_by_id = latest(out)
    assert rows_by_id["a"]["status"] == "error" and "the worker process died" in rows_by_id["a"]["error"], stderr
    assert rows_by_id["b"]["status"] == "completed", stderr
    assert first not in _names(podman_env) and container_name(out / "workspaces" / "b") not in _names(podman_env)
    assert not (out / "workspaces").exists() or list((out / "workspaces").iterdir()) == []
