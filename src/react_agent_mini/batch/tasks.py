"""The tasks file: JSONL, one task an object a line; SWE-bench instances are read as they are.

Fields: `id` (or SWE-bench's `instance_id`), `prompt` (or `problem_statement`), `repo` (a local path — relative to
the tasks file — or a git URL; SWE-bench's `owner/name` becomes its GitHub URL when no such directory exists),
optional `base_commit` (a commit id, tag or branch; not starting with `-`), `setup` and `test` (a shell command or
a list of them), and per-task options `model`, `max_turns`, `timeout` (seconds), `num_cpus` (Ray) and `image` (a
container image the task's commands run in, with podman: `environments.py`). Other fields (SWE-bench carries many)
are ignored. A line that is not such an object is reported with its number and skipped;
blank lines are skipped silently.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import msgspec


class BatchTask(msgspec.Struct, frozen=True):
    """One task of the batch, as the tasks file gives it (paths already resolved)."""

    id: str
    """Unique in the file; names the patch, the transcript and the SWE-bench prediction."""
    prompt: str
    """What the agent is asked to do."""
    repo: str
    """An absolute local path or a git URL."""
    base_commit: str | None = None
    """The commit to start from; None: the repository's checked-out HEAD."""
    setup: tuple[str, ...] = ()
    """Shell commands run in the workspace before the session (a failure is an `error`)."""
    test: tuple[str, ...] = ()
    """Shell commands run after the session; the exit code of the first that fails (or 0) is recorded."""
    model: str | None = None
    """A model for this task instead of the batch's."""
    max_turns: int | None = None
    """Model calls allowed for this task instead of the batch's `--max-turns`."""
    timeout: float | None = None
    """Seconds for this task instead of the batch's `--timeout`."""
    num_cpus: float | None = None
    """CPUs a Ray worker reserves for this task instead of `--ray-num-cpus`."""
    image: str | None = None
    """A container image to run the task's commands in (`environments.Container`); None: the worker's machine."""
    line: int = 0
    """Its line in the tasks file."""


class BadLine(msgspec.Struct, frozen=True):
    """A line that was skipped, and why."""

    line: int
    reason: str


_SWE_BENCH_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


def read_tasks(path: Path) -> tuple[list[BatchTask], list[BadLine]]:
    """Every good task of the file in order, and every bad line; OSError when the file cannot be read."""
    tasks: list[BatchTask] = []
    bad: list[BadLine] = []
    seen: dict[str, int] = {}
    base = path.resolve().parent
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                task = parse_task(text, number, base)
            except ValueError as exc:
                bad.append(BadLine(number, str(exc)))
                continue
            if task.id in seen:
                bad.append(BadLine(number, f"id {task.id!r} is already used on line {seen[task.id]}"))
                continue
            seen[task.id] = number
            tasks.append(task)
    return tasks, bad


def parse_task(text: str, line: int, base: Path) -> BatchTask:
    """One line as a task; ValueError saying what is wrong with it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    task_id = _text(data, "id", "instance_id")
    prompt = _text(data, "prompt", "problem_statement")
    repo = _text(data, "repo")
    if not task_id.strip():
        raise ValueError("`id` (or `instance_id`) must not be empty")
    if not prompt.strip():
        raise ValueError("`prompt` (or `problem_statement`) must not be empty")
    base_commit = data.get("base_commit")
    if base_commit is not None and (not isinstance(base_commit, str) or not base_commit.strip()):
        raise ValueError("`base_commit` must be a non-empty string")
    if isinstance(base_commit, str) and base_commit.strip().startswith("-"):
        raise ValueError(f"`base_commit` {base_commit.strip()!r} is not a commit (it starts with '-')")
    return BatchTask(
        id=task_id,
        prompt=prompt,
        repo=resolve_repo(repo, base),
        base_commit=base_commit.strip() if base_commit else None,
        setup=_commands(data, "setup"),
        test=_commands(data, "test"),
        model=_optional_text(data, "model"),
        max_turns=_positive(data, "max_turns", whole=True),
        timeout=_positive(data, "timeout"),
        num_cpus=_positive(data, "num_cpus", allow_zero=True),
        image=_optional_text(data, "image"),
        line=line,
    )


def resolve_repo(repo: str, base: Path) -> str:
    """A URL as it is; a path made absolute against `base`; SWE-bench's `owner/name`, when no such directory is
    there, as its GitHub URL."""
    repo = repo.strip()
    if not repo:
        raise ValueError("`repo` must not be empty")
    if "://" in repo or _SCP_LIKE.match(repo):
        return repo
    path = (base / Path(repo).expanduser()).resolve()
    if not path.exists() and _SWE_BENCH_REPO.match(repo):
        return f"https://github.com/{repo}.git"
    return str(path)


def file_stem(task_id: str) -> str:
    """A file name for the task's patch and transcript: the id where it is safe as one, else a safe form of it
    plus a short hash (so two ids never share a file)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", task_id)[:120].lstrip(".") or "task"
    if safe == task_id:
        return safe
    return f"{safe}-{hashlib.sha1(task_id.encode()).hexdigest()[:8]}"


def _text(data: dict[str, Any], *names: str) -> str:
    for name in names:
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and name in ("id", "instance_id"):
            return str(value)
        if value is not None:
            if not isinstance(value, str):
                raise ValueError(f"`{name}` must be a string")
            return value
    raise ValueError(f"missing `{names[0]}`" + (f" (or `{names[1]}`)" if len(names) > 1 else ""))


def _optional_text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{name}` must be a non-empty string")
    return value.strip()


def _commands(data: dict[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item for item in value if item.strip())
    raise ValueError(f"`{name}` must be a shell command or a list of them")


def _positive(data: dict[str, Any], name: str, *, whole: bool = False, allow_zero: bool = False) -> Any:
    value = data.get(name)
    if value is None:
        return None
    number_ok = isinstance(value, int | float) and not isinstance(value, bool)
    if whole:
        number_ok = number_ok and isinstance(value, int)
    if not number_ok or value < 0 or (value == 0 and not allow_zero):
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"`{name}` must be {kind} above 0" if not allow_zero else f"`{name}` must be {kind} >= 0")
    return value
