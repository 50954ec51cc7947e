"""What a worker sends back: progress while a task runs, and its outcome (the results line, the patch, the
transcript) at the end. Plain structs, so they cross a pipe or Ray's object store as JSON."""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

Status: TypeAlias = Literal["completed", "failed", "error", "max_turns", "timeout", "interrupted"]
"""completed: the session finished and the test (if any) passed; failed: it finished and the test failed;
error: the workspace, setup, model API or ram failed; max_turns, timeout: stopped at that limit; interrupted:
stopped by Ctrl+C or the batch's budget (never recorded, so a rerun runs the task again)."""
RECORDED: frozenset[str] = frozenset({"completed", "failed", "error", "max_turns", "timeout"})


class TaskResult(msgspec.Struct):
    """One line of `results.jsonl`."""

    id: str
    status: Status
    num_turns: int = 0
    """Model calls the session made."""
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    """Tokens (Anthropic's field names, as `ram --output-format json` gives them)."""
    cost_usd: float | None = None
    """At list price; None when the model's price is not known."""
    duration_s: float = 0.0
    error: str | None = None
    """One line saying what went wrong (status error, timeout, max_turns)."""
    test_exit_code: int | None = None
    """The test command's exit code; None when there is none or it did not run."""
    test_output: str | None = None
    """The end of what the test command printed."""
    model: str = ""
    session_id: str | None = None
    permission_denials: int = 0
    """Tool calls the permission settings refused."""
    base_commit: str | None = None
    patch: str | None = None
    """The patch file, relative to DIR (None when the task changed nothing or never reached its workspace)."""
    transcript: str | None = None
    """The transcript file, relative to DIR."""
    workspace: str | None = None
    """Where the workspace was left (`--keep-workspaces`)."""
    finished_at: float = 0.0
    """Seconds since the epoch."""


class Outcome(msgspec.Struct):
    """A task's result with the files that go with it."""

    result: TaskResult
    patch: str = ""
    """The diff against the base commit ("" when nothing changed)."""
    transcript: str = ""
    """The session's transcript (JSONL text)."""
    stop_batch: str | None = None
    """Why the whole batch must stop (the disk refused ram's writes, `disk.py`); the result is then `interrupted`,
    so the task is not recorded and runs again next time."""


class Progress(msgspec.Struct, frozen=True):
    """A running task after one more model call."""

    id: str
    turns: int
    cost_usd: float | None
    """Spent so far by this task."""
