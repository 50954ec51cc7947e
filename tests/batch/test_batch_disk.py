"""`ram batch` when the disk under DIR fills up mid-batch: a real filesystem that really fills — a 32 MiB tmpfs
mounted in a private mount namespace (`unshare -m`), held open by a `sleep` so the test can run `ram batch` in it
(`nsenter`) and look at it from outside (`/proc/<pid>/root`). Mounting needs root, as CI runs the tests; where it
is refused the test is skipped, saying why."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer
from ..processes import wait_until
from .batch_support import ALLOW_TEST, batch_command, batch_env, fixing_model, latest, make_tasks, results


class SmallDisk:
    """A tmpfs at `path`, seen only by processes started with `run` (and through `inside`)."""

    def __init__(self, holder: subprocess.Popen[str], path: Path) -> None:
        self.holder, self.path = holder, path

    def inside(self, path: Path) -> Path:
        """`path` as the processes in the namespace see it."""
        return Path(f"/proc/{self.holder.pid}/root") / path.relative_to(path.anchor)

    def command(self, command: list[str]) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-m", "--", *command]

    def fill(self) -> Path:
        """Write a file until the disk takes no more; the file."""
        filler = self.inside(self.path / "filler")
        with filler.open("wb", buffering=0) as handle:
            chunk = b"\0" * (1 << 20)
            while True:
                try:
                    handle.write(chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    if len(chunk) == 1:
                        return filler
                    chunk = chunk[: len(chunk) // 16] or b"\0"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        pytest.skip("needs unshare and nsenter (util-linux)")
    path = tmp_path / "disk"
    path.mkdir()
    script = 'mount -t tmpfs -o size=32m tmpfs "$0" && echo mounted && exec sleep infinity'
    holder = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stderr is not None
    if holder.stdout.readline().strip() != "mounted":
        holder.wait()
        pytest.skip(f"cannot mount a tmpfs in a private mount namespace here: {holder.stderr.read().strip()}")
    try:
        yield SmallDisk(holder, path)
    finally:
        holder.kill()
        holder.wait()


def test_a_full_disk_stops_the_batch_with_its_tasks_pending_and_the_rerun_does_them(
    fake_llm: FakeLLMServer, tmp_path: Path, small_disk: SmallDisk
) -> None:
    ids = [f"t{number:02}" for number in range(16)]
    tasks, _ = make_tasks(tmp_path, ids)  # the repositories are outside the small disk; DIR is on it
    fake_llm.set_responder(fixing_model(delay=0.03))
    out = small_disk.path / "out"
    command = small_disk.command(batch_command(tasks, out, "--allowed-tools", ALLOW_TEST, "--workers", "4"))
    env = batch_env(fake_llm.openai_base_url)
    seen = small_disk.inside(out)
    batch = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = seen / "results.jsonl"
        assert wait_until(lambda: lines.exists() and lines.read_text().count("\n") >= 2, timeout=300)
        filler = small_disk.fill()  # the disk is full from now on, with most tasks still to run
        stdout, stderr = batch.communicate(timeout=600)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()

    assert batch.returncode == 1, stderr
    stops = [line for line in stderr.splitlines() if line.startswith("stopping: ")]
    assert len(stops) == 1 and stops[0].startswith(f"stopping: the disk is full at {out}"), stderr
    assert "(No space left on device)" in stops[0] and "free some space, then run the same command again" in stops[0]
    assert "Traceback" not in stderr and "Traceback" not in stdout
    assert f"stopped early: the disk is full at {out}" in stdout
    first = latest(seen)
    assert 2 <= len(first) < len(ids), first
    assert all(row["status"] == "completed" for row in first.values()), [  # none recorded as failed
        (row["id"], row["status"], row["error"]) for row in first.values()
    ]
    assert stdout.rstrip().endswith(f"{out}/preds.json")  # no task has a result but `completed`: no retry hint
    assert len(results(seen)) == len(first)

    filler.unlink()
    done = subprocess.run(command, env=env, capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    assert f"ram batch: {len(ids) - len(first)} task(s) to run, {len(first)} done before (skipped) · " in done.stderr
    rows = latest(seen)
    assert sorted(rows) == ids and all(row["status"] == "completed" for row in rows.values())
    assert sorted(json.loads((seen / "preds.json").read_text())) == ids
    assert not (seen / "workspaces").exists()  # no workspace of the stopped tasks left on the disk


def test_a_disk_full_before_the_batch_starts_says_so_in_one_line(
    fake_llm: FakeLLMServer, tmp_path: Path, small_disk: SmallDisk
) -> None:
    tasks, _ = make_tasks(tmp_path, ["t0", "t1"])
    fake_llm.set_responder(fixing_model())
    out = small_disk.path / "out"
    command = small_disk.command(batch_command(tasks, out, "--allowed-tools", ALLOW_TEST))
    env = batch_env(fake_llm.openai_base_url)
    filler = small_disk.fill()

    full = subprocess.run(command, env=env, capture_output=True, text=True)

    assert full.returncode == 1 and full.stdout == ""
    assert full.stderr == (
        f"error: the disk is full at {out} (No space left on device); "
        "free some space, then run the same command again to go on\n"
    )
    filler.unlink()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(latest(small_disk.inside(out))) == ["t0", "t1"]
