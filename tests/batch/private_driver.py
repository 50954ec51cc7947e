"""Run as `unshare -m --propagation private python -m tests.batch.private_driver PRIVATE OUT TASKS-COUNT FLAG...`:
in a mount namespace of its own, mount a tmpfs on PRIVATE — seen by this process and its children only, not by
the Ray nodes started outside — make the batch's repositories and tasks file there, and run `ram batch` on them
(the same repositories as `make_tasks` makes anywhere else). Its exit code is the batch's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .batch_support import batch_command, make_tasks


def main(argv: list[str]) -> int:
    private, out, count, flags = Path(argv[0]), Path(argv[1]), int(argv[2]), argv[3:]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "ram-private", str(private)], check=True)
    tasks, _ = make_tasks(private, [f"t{i}" if i % 7 else f"bad-{i}" for i in range(count)])
    return subprocess.run(batch_command(tasks, out, *flags), stdin=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
