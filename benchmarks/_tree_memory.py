"""Peak memory of a process tree, sampled from /proc: the summed PSS (each shared page divided among the processes
sharing it — what forked workers share counts once in all) and, for comparison, the summed RSS (shared pages counted
in every process). Sampled every `EVERY` seconds in a thread while the tree runs.

A child that shares its parent's address space — one `vfork`ed (as `subprocess` and `posix_spawn` start commands)
and not yet at its `exec` — reports its parent's whole memory as its own: it is counted once, with its parent
(`kcmp`), or a process starting many commands would be counted twice at every peak."""

from __future__ import annotations

import ctypes
import os
import threading

EVERY = 0.05
_PAGE = os.sysconf("SC_PAGE_SIZE")
_KCMP = {"x86_64": 312, "aarch64": 272}.get(os.uname().machine)
_KCMP_VM = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _same_memory(pid: int, other: int) -> bool:
    """Whether two processes share one address space (False when the kernel cannot say)."""
    if _KCMP is None:
        return False
    return bool(_libc.syscall(_KCMP, pid, other, _KCMP_VM, 0, 0) == 0)


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def _pss_rss(pid: int) -> tuple[int, int]:
    """The process's PSS and RSS in bytes (0, 0 when it is gone)."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith(b"Rss:"):
                    rss = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return 0, 0
    return pss, rss


def _borrowed(pid: int, parent: int | None, tree: set[int]) -> bool:
    """Whether `pid` runs in its parent's memory (a vfork child before its exec), which is counted with the parent."""
    return parent is not None and parent in tree and _same_memory(pid, parent)


class TreeMemory(threading.Thread):
    """Peak summed PSS and RSS of `root` and all its descendants."""

    def __init__(self, root: int) -> None:
        super().__init__(name="tree-memory", daemon=True)
        self.root = root
        self.peak_pss = 0
        self.peak_rss = 0
        self._done = threading.Event()

    def sample(self) -> None:
        parents = {int(d): _ppid(int(d)) for d in os.listdir("/proc") if d.isdigit()}
        tree = {self.root}
        grew = True
        while grew:
            grew = False
            for pid, parent in parents.items():
                if parent in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        sizes = [_pss_rss(pid) for pid in tree if not _borrowed(pid, parents.get(pid), tree)]
        self.peak_pss = max(self.peak_pss, sum(size[0] for size in sizes))
        self.peak_rss = max(self.peak_rss, sum(size[1] for size in sizes))

    def run(self) -> None:
        while True:
            self.sample()
            if self._done.wait(EVERY):
                return

    def stop(self) -> None:
        self._done.set()
        self.join()
