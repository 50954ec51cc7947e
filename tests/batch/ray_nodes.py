"""Real Ray nodes on 127.0.0.1 for the batch tests: `ray start` with no dashboard, no usage reports and no token,
each node with a temporary directory of its own (its "disk") and an environment without provider keys."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from ..processes import wait_until

RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1",  # more than one node on this machine, every address on loopback
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",  # stop at once when the test ends
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RayNode:
    """One `ray start --block` process (a head, or a node joining `head`)."""

    def __init__(self, node_tmp: Path, home: Path, cpus: int, head: str | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
        env |= {**RAY_ENV, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config")}
        env["TMPDIR"] = str(node_tmp)
        self.temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
        self.log = Path(self.temp, "start.log")
        ray = str(Path(sys.executable).with_name("ray"))
        command = [ray, "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus)]
        command += ["--disable-usage-stats", "--dashboard-agent-listen-port", str(free_port())]
        if head is None:
            self.address = f"127.0.0.1:{free_port()}"
            command += ["--head", "--port", self.address.rpartition(":")[2], "--include-dashboard=false"]
            command += ["--temp-dir", self.temp]
        else:
            self.address = head
            command += ["--address", head]
        with self.log.open("w") as sink:
            self.process = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        started = wait_until(
            lambda: "Ray runtime started" in self.log.read_text() or self.process.poll() is not None, 180
        )
        if not started or self.process.poll() is not None:
            text = self.log.read_text()[-3000:]
            self.stop()
            raise RuntimeError(f"ray start failed:\n{text}")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # it may have failed to start
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        shutil.rmtree(self.temp, ignore_errors=True)
