"""What a Bash permission check costs: importing the policy (on every start), the first Bash check of a process
(it imports the shell parser and the program table), and checks after that.

Each "first" figure is a fresh interpreter (`python -c`), timed from inside it so interpreter start-up is left
out: the policy module's import, then one `PermissionPolicy` decision for `git status && grep -rn TODO src` with a
Read deny rule in place. "Later checks" decide a mix of read-only, changing and hostile commands in one process.
Run: `.venv/bin/python -m benchmarks.permission_check [--runs N]` from the repo root.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._stats import line, runs_from

_FIRST = r"""
import asyncio, json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from react_agent_mini.permissions.policy import PermissionPolicy
from react_agent_mini.permissions.rules import RuleSet
t1 = time.perf_counter()

class Bash:
    name = "Bash"
    read_only = False

rules = RuleSet()
rules.add("deny", "Read(./secrets/**)", "bench")
policy = PermissionPolicy(Path(sys.argv[1]), rules=rules)
t2 = time.perf_counter()
asyncio.run(policy.decide(Bash(), {"command": "git status && grep -rn TODO src"}))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t3 - t2}))
"""

_LATER = r"""
import asyncio, json, sys, time
from pathlib import Path
from react_agent_mini.permissions.policy import PermissionPolicy
from react_agent_mini.permissions.rules import RuleSet

class Bash:
    name = "Bash"
    read_only = False

rules = RuleSet()
rules.add("deny", "Read(./secrets/**)", "bench")
rules.add("deny", "Bash(rm:*)", "bench")
policy = PermissionPolicy(Path(sys.argv[1]), rules=rules)
commands = json.loads(sys.argv[2])
asyncio.run(policy.decide(Bash(), {"command": "ls"}))
out = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter()
    for command in commands:
        asyncio.run(policy.decide(Bash(), {"command": command}))
    out.append((time.perf_counter() - t0) / len(commands))
print(json.dumps(out))
"""

COMMANDS = [
    "git status",
    "git log --oneline -5 | head -3",
    "grep -rn 'def ' src | sort | uniq -c | sort -rn | head",
    "cat src/app.py | wc -l",
    "find . -name '*.py' -type f",
    "sed -n 1,5p src/app.py",
    "rm -rf build",
    "cat {secrets,nope}/key",
    "env -u X timeout 5 rm x",
    "git diff --stat HEAD~1 -- src",
]


def _workspace(base: Path) -> Path:
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("k")
    return root


def main(argv: Sequence[str] | None = None) -> None:
    runs = runs_from(argv, "benchmarks.permission_check", __doc__, default=10)
    with tempfile.TemporaryDirectory() as tmp:
        root = _workspace(Path(tmp))
        imports: list[float] = []
        firsts: list[float] = []
        for _ in range(runs):
            done = subprocess.run([sys.executable, "-c", _FIRST, str(root)], capture_output=True, text=True, check=True)
            figures = json.loads(done.stdout)
            imports.append(figures["import"])
            firsts.append(figures["first"])
        later = subprocess.run(
            [sys.executable, "-c", _LATER, str(root), json.dumps(COMMANDS), str(runs)],
            capture_output=True,
            text=True,
            check=True,
        )
        per_check = json.loads(later.stdout)
    print(line("import permissions.policy", imports))
    print(line("first Bash check (fresh process)", firsts))
    print(line("later checks (mean over a mix)", per_check, note=f"{len(COMMANDS)} commands"))


if __name__ == "__main__":
    main()
