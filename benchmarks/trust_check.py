"""What the folder-trust check costs on the way to the first request.

In a fresh interpreter each time, after what a headless run imports anyway (`react_agent_mini.headless`): import
the gate, build it for a folder (reading the
user settings and the trust store), and ask it about the parts a session meets — once for a folder with no
configuration at all, once for a hostile folder (18 hooks, 4 MCP servers, 7 allow rules, a default mode), trusted
and not. The parts are digested as the loaders meet them, so the hostile case times the digests too; the parsing
of the files themselves is the loaders' own and was paid before trust existed. Printed beside `python -c pass`.

Run: `.venv/bin/python -m benchmarks.trust_check --runs 30`
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ._stats import line, runs_from

CHILD = """
import json, os, sys, time
from pathlib import Path
import react_agent_mini.headless  # what the way to the first request imports anyway, before the check
start = time.perf_counter()
from react_agent_mini.trust.gate import trust_gate
gate = trust_gate(Path(sys.argv[1]))
for kind, source, label, content in json.loads(sys.argv[2]):
    from react_agent_mini.trust.items import make_item
    gate.permits(make_item(kind, source, label, content))
gate.left_out_line()
print((time.perf_counter() - start) * 1000)
"""


def parts() -> list[tuple[str, str, str, object]]:
    out: list[tuple[str, str, str, object]] = []
    for number in range(18):
        command = f"python3 .claude/hooks/check_{number}.py --strict"
        out.append(("hook", ".claude/settings.json", command, {"event": "PreToolUse", "command": command}))
    for number in range(4):
        entry = {"command": "npx", "args": ["-y", f"@example/server-{number}"], "env": {"TOKEN": "x" * 40}}
        out.append(("mcp", ".mcp.json", f"s{number}", {"name": f"s{number}", "entry": entry}))
    for rule in ("Bash", "Read(~/**)", "Read(//**)", "Write(~/**)", "Edit(//**)", "WebFetch", "Write"):
        out.append(("allow", ".claude/settings.json", rule, rule))
    out.append(("mode", ".claude/settings.json", "defaultMode: acceptEdits", "acceptEdits"))
    return out


def run_child(folder: Path, items: list[tuple[str, str, str, object]], env: dict[str, str]) -> float:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), json.dumps(items)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return float(done.stdout)  # ms


def floor(env: dict[str, str]) -> float:
    import time

    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    runs = runs_from(sys.argv[1:], __name__, __doc__, 30)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = {**os.environ, "XDG_CONFIG_HOME": str(root / "config")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on users' machines: bytecode written once, then reused
        folder = root / "repo"
        folder.mkdir()
        hostile = parts()
        cases = {"no configuration": [], "hostile, untrusted": hostile}
        figures: dict[str, list[float]] = {name: [] for name in [*cases, "hostile, trusted", "python -c pass"]}
        from react_agent_mini.trust.items import make_item
        from react_agent_mini.trust.store import record_trust

        run_child(folder, hostile, env)  # writes the bytecode the measured runs use
        for _ in range(runs):  # interleaved: every case sees the same load
            for name, items in cases.items():
                figures[name].append(run_child(folder, items, env))
            record_trust(folder, [make_item(*item).key for item in hostile], env)  # type: ignore[arg-type]
            figures["hostile, trusted"].append(run_child(folder, hostile, env))
            from react_agent_mini.trust.store import revoke_trust

            revoke_trust(folder, env)
            figures["python -c pass"].append(floor(env))
    print("trust check in a fresh interpreter: import, gate, every part asked (the last line: a whole process)")
    for name, values in figures.items():
        print(line(name, [value / 1000 for value in values]))


if __name__ == "__main__":
    main()
