"""Throughput of many tasks at once: `ram batch` against `xargs -P` of headless `ram` runs doing the same work.

32 small git repositories with a failing test (`tests/batch_support.py`); the loopback fake model fixes each in 4
calls (Read, Edit + Write, Bash runs the test, done). Both sides do the whole job per task — a clone at the base
commit, the session, the patch (`git add -A; git diff --cached BASE`), the test command — with 8 at a time:

* `ram batch TASKS --workers 8` (the local pool: 8 worker processes, started once);
* `xargs -P 8` running, per task, a shell line that clones, runs `ram --permission-mode acceptEdits …`, diffs and
  tests (one `ram` process per task: what users script today);
* `ram batch --ray` on a 2-CPU local Ray cluster on 127.0.0.1 (started and stopped here), with `--ray`; each task
  reserves 0.25 CPU, so 8 run at a time there too (the model, not the CPU, is what they wait for);
* mini-swe-agent's batch mode (`mini-extra swebench -w 8`) when it is installed — it takes SWE-bench instances
  and Docker or local environments, so it is only reported as present or not.

Runs alternate A B A B after one warm-up each; the figure is the median wall time per batch and tasks per second,
with the ratio to `ram batch`, and the peak memory of each side's whole process tree (`_tree_memory`): summed PSS,
where pages shared by processes count once in all (the fair sum for processes that share an interpreter's pages),
beside summed RSS. Noisy shared machines: read the ratios.
Run: `.venv/bin/python -m benchmarks.batch_throughput [--runs 3] [--tasks 32] [--ray]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

from tests.batch.batch_support import ALLOW_TEST, TEST_COMMAND, batch_env, fixing_model, git, latest, make_tasks
from tests.fakes.fake_llm import FakeLLMServer

from ._stats import fmt_seconds
from ._tree_memory import TreeMemory

WORKERS = 8
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
}
XARGS_TASK = r"""set -e
id=$1; repo=$2; base=$3; out=$4
ws=$out/ws/$id
git clone -q --no-checkout "$repo" "$ws"
cd "$ws"
git checkout -q --detach "$base"
{ram} --permission-mode acceptEdits --allowed-tools {allow} --output-format json \
  "Fix the failing test in this repository (task $id)." > "$out/$id.json" < /dev/null
git add -A -- . ':(exclude,glob)**/__pycache__/**'
git diff --cached --binary "$base" > "$out/$id.patch"
{test} > /dev/null 2>&1 && echo "$id 0" >> "$out/tests" || echo "$id 1" >> "$out/tests"
cd / && rm -rf "$ws"
"""


def ram() -> list[str]:
    script = Path(sys.executable).parent / "ram"
    return [str(script)] if script.exists() else [sys.executable, "-m", "react_agent_mini"]


def _env(base_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = batch_env(base_url, extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on users' machines: bytecode is written once and reused
    return env


class Run(NamedTuple):
    seconds: float
    peak_pss: int
    """Peak summed PSS of the whole process tree, bytes."""
    peak_rss: int


def run_measured(command: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[Run, int, str]:
    """Run `command` with its tree's memory sampled: the figures, its exit code and the end of its stderr."""
    started = time.monotonic()
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    sampler = TreeMemory(process.pid)
    sampler.start()
    _, err = process.communicate(stdin)
    seconds = time.monotonic() - started
    sampler.stop()
    return Run(seconds, sampler.peak_pss, sampler.peak_rss), process.returncode, err[-2000:]


def run_ram_batch(tasks: Path, out: Path, base_url: str, *flags: str) -> Run:
    command = [*ram(), "batch", str(tasks), "--out", str(out), "--workers", str(WORKERS), "--allowed-tools", ALLOW_TEST]
    run, code, err = run_measured([*command, *flags], _env(base_url))
    rows = latest(out)
    if code != 0 or sum(row["status"] == "completed" for row in rows.values()) != len(rows):
        raise SystemExit(f"ram batch failed ({code}): {err}")
    return run


def run_xargs(lines: list[tuple[str, str, str]], out: Path, base_url: str) -> Run:
    out.mkdir(parents=True)
    script = out / "task.sh"
    script.write_text(
        XARGS_TASK.format(ram=shlex.join(ram()), allow=shlex.quote(ALLOW_TEST), test=TEST_COMMAND)
    )  # fmt: skip
    argv = "".join(f"{task_id}\n{repo}\n{base}\n{out}\n" for task_id, repo, base in lines)
    command = ["xargs", "-P", str(WORKERS), "-n", "4", "bash", str(script)]
    run, code, err = run_measured(command, _env(base_url), stdin=argv)
    passed = (out / "tests").read_text().split().count("0") if (out / "tests").exists() else 0
    if code != 0 or passed != len(lines):
        raise SystemExit(f"xargs failed ({code}, {passed} passed): {err}")
    return run


@contextmanager
def ray_cluster(env: dict[str, str]) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    log = Path(temp, "start.log")
    command = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", "--port", str(port)]
    command += ["--node-ip-address", "127.0.0.1", "--include-dashboard=false", "--disable-usage-stats"]
    command += ["--num-cpus", "2", "--temp-dir", temp]
    with log.open("w") as sink:
        head = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        while "Ray runtime started" not in log.read_text():
            if head.poll() is not None:
                raise SystemExit(f"ray start failed: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def measure(runs: int, contenders: dict[str, Callable[[int], Run]]) -> dict[str, list[Run]]:
    times: dict[str, list[Run]] = {name: [] for name in contenders}
    for run in contenders.values():
        run(-1)  # warm-up: bytecode, page cache, the first clone
    for number in range(runs):
        for name, run in contenders.items():
            times[name].append(run(number))
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.batch_throughput", description=__doc__.partition("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=3, help="measured batches per contender (default 3)")
    parser.add_argument("--tasks", type=int, default=32, help="tasks per batch (default 32)")
    parser.add_argument("--ray", action="store_true", help="also ram batch --ray on a local 2-CPU cluster")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="batch-bench-"))
    try:
        ids = [f"t{i}" for i in range(args.tasks)]
        tasks, bases = make_tasks(root, ids)
        repos = [root / "repos" / f"r{n}" for n in range(args.tasks)]
        # the xargs line needs a commit for every task (make_tasks leaves some at their HEAD)
        xargs_lines = [
            (task_id, str(repo), bases.get(task_id) or git("rev-parse", "HEAD", cwd=repo).strip())
            for task_id, repo in zip(ids, repos, strict=True)
        ]
        with FakeLLMServer(api_key="test-key") as server, ExitStack() as stack:
            server.set_responder(fixing_model())
            url = server.openai_base_url
            contenders: dict[str, Callable[[int], Run]] = {
                "ram batch (pool)": lambda n: run_ram_batch(tasks, root / f"pool-{n}", url),
                "xargs -P 8 of headless ram": lambda n: run_xargs(xargs_lines, root / f"xargs-{n}", url),
            }
            if args.ray:
                os.environ.update(RAY_ENV)
                address = stack.enter_context(ray_cluster(_env(url)))
                contenders["ram batch --ray (8 in flight)"] = lambda n: run_ram_batch(
                    tasks, root / f"ray-{n}", url, "--ray", address, "--ray-num-cpus", "0.25"
                )
            times = measure(args.runs, contenders)
        base = statistics.median(run.seconds for run in times["ram batch (pool)"])
        base_pss = statistics.median(run.peak_pss for run in times["xargs -P 8 of headless ram"])
        print(f"{args.tasks} tasks, {WORKERS} at a time, 4 model calls each (loopback fake model), {args.runs} runs")
        print("memory: peak of the whole process tree, summed PSS (shared pages divided) and summed RSS; medians")
        for name, samples in times.items():
            median = statistics.median(run.seconds for run in samples)
            pss = statistics.median(run.peak_pss for run in samples)
            rss = statistics.median(run.peak_rss for run in samples)
            rate = args.tasks / median
            print(
                f"{name:<30} median {fmt_seconds(median):>9}  min {fmt_seconds(min(r.seconds for r in samples)):>9}  "
                f"{rate:5.1f} tasks/s  {median / base:4.2f}× ram batch  PSS {pss / 2**20:5.0f} MiB "
                f"({pss / base_pss:4.2f}× xargs)  RSS {rss / 2**20:5.0f} MiB"
            )
        present = importlib.util.find_spec("minisweagent") is not None or shutil.which("mini-extra") is not None
        print(
            "mini-swe-agent batch (mini-extra swebench -w 8): "
            + ("installed, but it runs SWE-bench instances in its own environments: not comparable here" if present
               else "not installed (pip install mini-swe-agent); peers-measured.md: 6.6 s for 8 tasks vs 2.5 s xargs")
        )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
