"""Which pids a command's look for leftovers reads (`leftovers.Window`): those handed out since its bash's, around
the circle Linux hands them out in, or every one when the counter may have gone all the way round."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from react_agent_mini.tools.leftovers import Clock, Command, Scan, Window


def test_the_window_runs_from_bash_to_the_latest_pid_across_the_wrap() -> None:
    window = Window(32760, Clock(last=32760, forks=1000, pid_max=32768))
    covers = window.covers(Clock(last=830, forks=2000, pid_max=32768))
    assert covers is not None
    assert [pid for pid in (32759, 32760, 32767, 300, 830, 831, 20000) if covers(pid)] == [32760, 32767, 300, 830]


def test_every_pid_when_the_counter_may_have_wrapped_or_cannot_be_read() -> None:
    window = Window(500, Clock(last=500, forks=1000, pid_max=32768))
    assert window.covers(Clock(last=600, forks=1000 + 16384, pid_max=32768)) is None  # half the circle forked
    assert window.covers(Clock(last=600, forks=1100, pid_max=4194304)) is None  # pid_max changed
    assert window.covers(None) is None


def test_a_look_reads_the_processes_started_since_bash_and_not_the_others() -> None:
    before = subprocess.Popen(["sleep", "30"])  # started before the command: not its, never read
    command = Command()
    bash = subprocess.Popen(["bash", "-c", "sleep 30 & wait"], start_new_session=True)
    try:
        command.started(bash.pid)
        scan = Scan()
        assert Clock.now() is not None and before.pid in scan.pids
        found = command.find(scan)
        assert before.pid not in scan._stats and os.getpid() not in scan._stats  # what was read
        assert bash.pid in scan._stats
        assert all(proc.pid != before.pid for proc in found)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bash.pid, signal.SIGKILL)  # bash and its sleep
        bash.wait()
        before.kill()
        before.wait()
