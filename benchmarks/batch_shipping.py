"""What it costs for a repository to travel with its tasks (`ram batch --ray` past one disk), and tasks/s on one
Ray node against two.

1. Shipping: a repository of N small files (2,000 and 20,000; a few commits) is packed on the driver as the
   cluster gets it (`shipping.pack`: a bare clone of ours, the base commit resolved, a bundle of its history) and
   unpacked on a "node" (`shipping.receive`: SHA-256, `git bundle verify`, fetch into a bare repository, the
   commit checked). Reported: bundle size, pack time, receive time (medians of `--runs`).
2. Tasks/s: the batch of `tests/batch` (small repositories with a failing test, 4 model calls each on the loopback
   fake model) with `--ray` on one node with 4 CPUs and on a two-node cluster of 2 + 2 CPUs on this machine
   (`ray start` twice, each node its own temporary directory), interleaved A B A B after a warm-up each. Both go
   through the object store; on one machine the second node adds the transfers and the scheduling, not CPUs.

Run: `.venv/bin/python -m benchmarks.batch_shipping [--runs 3] [--tasks 16] [--no-cluster]`.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.batch_throughput import Run, run_measured
from react_agent_mini.batch import shipping
from tests.batch.batch_support import ALLOW_TEST, batch_command, batch_env, fixing_model, git, latest, make_tasks
from tests.batch.ray_nodes import RAY_ENV, RayNode
from tests.fakes.fake_llm import FakeLLMServer

from ._stats import fmt_seconds


def make_big_repo(path: Path, files: int) -> str:
    """A repository of `files` small files in folders of 100, in three commits; its HEAD."""
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    for commit in range(3):
        for number in range(commit * files // 3, (commit + 1) * files // 3):
            folder = path / f"pkg{number // 100:03d}"
            folder.mkdir(exist_ok=True)
            (folder / f"mod{number:05d}.py").write_text(
                f'"""Module {number}."""\n\n\ndef f{number}(x):\n    return x * {number} + {commit}\n'
            )
        git("add", "-A", cwd=path)
        git("commit", "-q", "-m", f"part {commit}", cwd=path)
    return git("rev-parse", "HEAD", cwd=path).strip()


def ship_once(repo: Path, base: str, node: Path) -> tuple[int, float, float]:
    """Bundle bytes, pack seconds, receive seconds."""
    started = time.perf_counter()
    packed = asyncio.run(shipping.pack(str(repo), [base], shipping.scratch_dir()))
    packing = time.perf_counter() - started

    async def fetch() -> bytes:
        return packed.data

    started = time.perf_counter()
    asyncio.run(shipping.receive(packed.shipment, fetch, node))
    receiving = time.perf_counter() - started
    shipping.remove_shipped(node)
    return packed.shipment.size, packing, receiving


def shipping_costs(root: Path, runs: int) -> None:
    print("shipping a repository (pack on the driver, receive on a node; medians)")
    for files in (2_000, 20_000):
        repo = root / f"repo-{files}"
        base = make_big_repo(repo, files)
        disk = sum(p.stat().st_size for p in (repo / ".git").rglob("*") if p.is_file())
        ship_once(repo, base, root / "node")  # warm-up: page cache
        samples = [ship_once(repo, base, root / "node") for _ in range(runs)]
        size = samples[0][0]
        pack = statistics.median(s[1] for s in samples)
        receive = statistics.median(s[2] for s in samples)
        print(
            f"  {files:>6} files: bundle {size / 2**20:6.2f} MiB (.git {disk / 2**20:6.2f} MiB)  "
            f"pack {fmt_seconds(pack):>9}  receive {fmt_seconds(receive):>9}"
        )


def run_batch(tasks: Path, out: Path, url: str, address: str) -> Run:
    """One `ram batch --ray` run: its time and the driver's peak memory (the cluster's processes are not its)."""
    command = batch_command(tasks, out, "--allowed-tools", ALLOW_TEST, "--workers", "4", "--ray", address)
    run, code, err = run_measured(command, batch_env(url, RAY_ENV))
    rows = latest(out)
    if code != 0 or any(row["status"] != "completed" for row in rows.values()):
        raise SystemExit(f"ram batch --ray failed ({code}): {err}")
    return run


def _returned_bytes(out: Path) -> int:
    """What came back through the object store: the patches and transcripts (and the results lines)."""
    return sum(
        p.stat().st_size for folder in ("patches", "transcripts") for p in (out / folder).rglob("*") if p.is_file()
    )


def _shipped(out: Path) -> str:
    lines = [line for line in (out / "logs" / "ray.log").read_text().splitlines() if "shipped as bundles" in line]
    return lines[-1].partition(" tasks ran on ")[2] if lines else "?"


def cluster_rates(root: Path, runs: int, count: int) -> None:
    tasks, _ = make_tasks(root / "batch", [f"t{i}" for i in range(count)])
    more, _ = make_tasks(root / "batch4", [f"t{i}" for i in range(4 * count)])
    home = root / "xdg"
    one = RayNode(root / "one-tmp", home, cpus=4)
    head = RayNode(root / "a-tmp", home, cpus=2)
    other = RayNode(root / "b-tmp", home, cpus=2, head=head.address)
    try:
        with FakeLLMServer(api_key="test-key") as server:
            server.set_responder(fixing_model())
            url = server.openai_base_url
            contenders = {"one node (4 CPUs)": one.address, "two nodes (2 + 2 CPUs)": head.address}
            times: dict[str, list[Run]] = {name: [] for name in contenders}
            for name, address in contenders.items():
                run_batch(tasks, root / f"warm-{name[:3]}", url, address)
            for number in range(runs):
                for name, address in contenders.items():
                    times[name].append(run_batch(tasks, root / f"run-{name[:3]}-{number}", url, address))
            bigger = run_batch(more, root / "scale", url, one.address)
    finally:
        for node in (other, head, one):
            node.stop()
    print(f"ram batch --ray --workers 4, {count} tasks (local repositories shipped as bundles), {runs} runs")
    for name, samples in times.items():
        median = statistics.median(run.seconds for run in samples)
        driver = statistics.median(run.peak_rss for run in samples)
        print(
            f"  {name:<24} median {fmt_seconds(median):>9}  {count / median:5.2f} tasks/s  "
            f"driver peak RSS {driver / 2**20:5.0f} MiB"
        )
    small = statistics.median(run.peak_rss for run in times["one node (4 CPUs)"])
    per_task = (bigger.peak_rss - small) / (3 * count)
    returned = _returned_bytes(root / "scale") / (4 * count)
    print(
        f"  driver at {4 * count} tasks: peak RSS {bigger.peak_rss / 2**20:.0f} MiB "
        f"({per_task / 2**10:+.1f} KiB per task more than at {count}); returned per task {returned / 2**10:.1f} KiB "
        f"(patch + transcript); tasks ran on {_shipped(root / 'scale')}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch_shipping", description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--no-cluster", action="store_true", help="only the shipping costs")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="batch-ship-bench-"))
    try:
        shipping_costs(root, args.runs)
        if not args.no_cluster:
            for folder in ("one-tmp", "a-tmp", "b-tmp", "xdg"):
                (root / folder).mkdir()
            cluster_rates(root, args.runs, args.tasks)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
