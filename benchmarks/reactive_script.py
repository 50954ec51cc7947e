"""The reactive benchmark's workspace and script: real files to work on, and what each turn needs.

The workspace: this repository's files at `HEAD`, standard-library modules, and command logs (pytest -v runs and
git diffs, written once: `cat .logs/…` stands for the command that printed them). The script, seeded and the
same for every strategy: 150 user turns in English and Chinese (`sessions.py`'s texts; the first sets ground rules
for the session), each needing 0-3 spans — lines a..b of a file, of a command's output, or Grep entries a..b — and,
now and then, a span an earlier turn needed again. A span is a file's or an output's whole only when that is at
most `WHOLE_CHARS` long; otherwise a function-sized part of it.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .sessions import REPO_ROOT, _Gen, _git_head_files, _working_tree_files, is_test_file, load_corpus

FIRST_INSTRUCTION = (
    "Ground rules for this whole session: never print tokens or API keys, keep every log message in English, "
    "and ask me before you delete any file. Start by reading the README and tell me how the project is laid out."
)


# ---------------------------------------------------------------------------------------------------------------
# The workspace and the script
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Need:
    """A span the model needs: lines a..b (1-based, inclusive) of a file or a command's output, or Grep entries."""

    kind: str
    """`read`, `bash` or `grep`."""
    source: str
    """The file's path, the command, or the Grep pattern."""
    span: tuple[int, int]
    expected: tuple[str, ...]
    """The source as the tool shows it when nothing is cut: Read's numbered lines, the output's lines, the
    Grep entries (index 0 = line 1)."""
    grep_path: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.source}:{self.grep_path}"


@dataclass
class Turn:
    text: str
    zh: bool
    needs: list[Need]
    again: list[Need]
    """Needs of earlier turns needed once more."""


def _pytest_log(rng: random.Random, tests: list[tuple[str, list[str]]], sources: list[str]) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0",
        "rootdir: /work/main",
        f"collected {sum(len(n) for _, n in tests)} items",
        "",
    ]
    failures: list[str] = []
    for path, names in tests:
        for name in names:
            failed = rng.random() < 0.01
            lines.append(f"{path}::{name} {'FAILED' if failed else 'PASSED'}{' ' * 8}[{rng.randint(1, 99):3d}%]")
            if failed:
                failures.append(f"{path}::{name}")
    if failures:
        lines += ["", "=================================== FAILURES ==================================="]
        for test in failures:
            source = rng.choice(sources).splitlines() or [""]
            start = rng.randrange(max(1, len(source) - 20))
            lines += [f"_________________________ {test.split('::')[1]} _________________________", ""]
            lines += [f"    {line}" for line in source[start : start + rng.randint(8, 20)]]
            lines += [
                "E   AssertionError: assert 3 == 4",
                "",
                f"{test.split('::')[0]}:{rng.randint(10, 400)}: AssertionError",
            ]
        lines += ["=========================== short test summary info ============================"]
        lines += [f"FAILED {t} - AssertionError: assert 3 == 4" for t in failures]
    lines.append(
        f"==================== {len(failures)} failed, {rng.randint(700, 900)} passed in 41.20s ===================="
    )
    return "\n".join(lines) + "\n"


def _diff_log(rng: random.Random, files: list[tuple[str, str]]) -> str:
    chunks: list[str] = []
    for _ in range(rng.randint(4, 25)):
        path, text = rng.choice(files)
        body = text.splitlines()
        start = rng.randrange(max(1, len(body) - 60))
        part = body[start : start + rng.randint(20, 80)]
        chunks += [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}"]
        chunks.append(f"@@ -{start + 1},{len(part)} +{start + 1},{len(part) + 1} @@")
        for line in part:
            r = rng.random()
            chunks.append(f"-{line}\n+{line}  # changed" if r < 0.08 else f"+{line}" if r < 0.12 else f" {line}")
    return "\n".join(chunks) + "\n"


def build_workspace(root: Path, seed: int) -> list[Path]:
    """Copy this repository's files (git HEAD) and standard-library modules into `root`, and write the logs.
    Returns the readable files (relative), in a fixed order."""
    rng = random.Random(seed ^ 0x5EED)
    repo = _git_head_files(REPO_ROOT) or _working_tree_files(REPO_ROOT)
    written: list[Path] = []
    for f in repo:
        if f.path.startswith(("src/", "tests/", "benchmarks/", "README", "scripts/")) or f.path.endswith(".md"):
            target = root / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.text)
            written.append(Path(f.path))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(p for p in stdlib.glob("*.py") if 3_000 <= p.stat().st_size <= 200_000)
    for p in modules[::2]:
        rel = Path("lib") / p.name
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, root / rel)
        written.append(rel)
    for pkg in ("json", "email", "asyncio", "http", "logging", "unittest", "xml/etree", "importlib"):
        for p in sorted((stdlib / pkg).glob("*.py")):
            rel = Path("lib") / pkg / p.name
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, root / rel)
            written.append(rel)
    tests = [(f.path, re.findall(r"^(?:async )?def (test_\w+)", f.text, re.M)) for f in repo if is_test_file(f.path)]
    sources = [f.text for f in repo if f.path.endswith(".py")]
    logs = root / ".logs"
    logs.mkdir()
    for i in range(12):
        (logs / f"pytest-{i}.log").write_text(_pytest_log(rng, tests, sources))
        (logs / f"diff-{i}.log").write_text(_diff_log(rng, [(f.path, f.text) for f in repo if f.path.endswith(".py")]))
    return written


def _numbered(path: Path) -> tuple[str, ...]:
    from react_agent_mini.tools.text_files import numbered, split_lines

    text = path.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff")
    return tuple(numbered(line, n) for n, line in enumerate(split_lines(text), 1))


def _command_lines(root: Path, command: str) -> tuple[str, ...]:
    out = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False).stdout
    return tuple(out.rstrip("\n").split("\n"))


async def _grep_entries(root: Path, pattern: str, path: str) -> tuple[str, ...]:
    from react_agent_mini.tools.base import ToolContext
    from react_agent_mini.tools.builtin.grep import GrepTool

    tool = GrepTool()
    args = tool.validate({"pattern": pattern, "path": path, "output_mode": "content", "head_limit": 0})
    out = await tool.call(args, ToolContext(cwd=root))
    return tuple(line for line in out.content.split("\n") if not line.startswith("["))


_GREP = ["def \\w+\\(self", "import ", "raise \\w+", "return None", "class \\w+", "self\\.\\w+ = ", "isinstance\\("]


WHOLE_CHARS = 40_000
"""A span is the whole of a file or an output only when it is at most this long (a model that needs to see a
200 KB file at once is not a coding agent's everyday case: it needs a function of it)."""


def _span(rng: random.Random, lines: Sequence[str], small: tuple[int, int]) -> tuple[int, int]:
    total = len(lines)
    if total <= small[0] or (rng.random() < 0.3 and sum(map(len, lines)) + total <= WHOLE_CHARS):
        return 1, total
    size = min(total, rng.randint(*small))
    start = rng.randint(1, total - size + 1)
    return start, start + size - 1


def build_script(root: Path, files: list[Path], turns: int, seed: int) -> list[Turn]:
    """The session's turns: what the user says and what each turn needs (the same for every strategy)."""
    rng = random.Random(seed)
    gen = _Gen(load_corpus(), seed)
    by_size = sorted((f for f in files if f.suffix in (".py", ".md")), key=lambda f: (root / f).stat().st_size)
    small, medium, large = (
        [f for f in by_size if (root / f).stat().st_size < lo_hi[1] and (root / f).stat().st_size >= lo_hi[0]]
        for lo_hi in ((1_000, 10_000), (10_000, 40_000), (40_000, 200_000))
    )
    dirs = sorted({str(f.parent) for f in files if f.suffix == ".py" and len(f.parts) > 1})
    cache: dict[str, tuple[str, ...]] = {}
    script: list[Turn] = []
    seen: list[Need] = []
    for number in range(turns):
        zh = rng.random() < 0.5
        gen.reseed()
        text = FIRST_INSTRUCTION if number == 0 else gen.user_message(zh, number)
        count = 1 if number == 0 else rng.choices([0, 1, 2, 3], [15, 45, 27, 13])[0]
        needs: list[Need] = []
        for k in range(count):
            kind = "read" if number == 0 else rng.choices(["read", "bash", "grep"], [55, 27, 18])[0]
            if kind == "read":
                pool = rng.choices([small, medium, large], [35, 45, 20])[0] or by_size
                path = Path("README.md") if number == 0 and k == 0 else rng.choice(pool)
                lines = cache.setdefault(str(path), _numbered(root / path))
                span = _span(rng, lines, (30, 200))
                needs.append(Need("read", str(path), span, lines))
            elif kind == "bash":
                which = rng.random()
                if which < 0.45:
                    command = f"cat .logs/pytest-{rng.randrange(12)}.log"
                elif which < 0.8:
                    command = f"cat .logs/diff-{rng.randrange(12)}.log"
                else:
                    command = (
                        f"grep -rn '{rng.choice(['def ', 'return ', 'import ', 'self.'])}' {rng.choice(dirs)} | sort"
                    )
                lines = cache.setdefault(command, _command_lines(root, command))
                if command.startswith("cat .logs/pytest") and rng.random() < 0.6:
                    span = (max(1, len(lines) - rng.randint(3, 40)), len(lines))  # the end: failures, summary
                else:
                    span = _span(rng, lines, (20, 120))
                needs.append(Need("bash", command, span, lines))
            else:
                pattern, where = rng.choice(_GREP), rng.choice(dirs)
                entries = cache.setdefault(f"grep:{pattern}:{where}", asyncio.run(_grep_entries(root, pattern, where)))
                if len(entries) < 2:
                    continue
                span = _span(rng, entries[:250], (10, 80))
                needs.append(Need("grep", pattern, span, entries, grep_path=where))
        again = []
        if seen and rng.random() < 0.3:
            again.append(seen[-1 - min(len(seen) - 1, int(rng.expovariate(1 / 8)))])
        seen.extend(needs)
        script.append(Turn(text, zh, needs, again))
    return script
