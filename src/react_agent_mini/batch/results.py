"""What a batch leaves in DIR, and the one process that writes it (the driver).

    DIR/results.jsonl        one line per finished task (a task run again gets a new line, which replaces its
                             old one when the run ends: `--retry-failed`)
    DIR/patches/<id>.patch   its diff against the base commit (`git apply` takes it), when it changed something
    DIR/transcripts/<id>.jsonl  its session
    DIR/preds.json           SWE-bench predictions: {instance_id: {instance_id, model_name_or_path, model_patch}}
    DIR/summary.json         the last run's summary
    DIR/logs/                the worker processes' stderr

A task's patch and transcript are written (whole, then renamed into place) before its results line, and the line
is one `write` of a whole line, so a line always has its files and a stop at any moment leaves at most a partial
last line — which the next run cuts off before it appends. A lock on `DIR/.lock` keeps a second batch out.

While a batch runs it only appends, so a task run again (`--retry-failed`) has two lines for a moment; `compact`
rewrites the file with the last line of each task (whole, then renamed into place) when the run ends, and when
the next run opens a DIR whose run was killed before it could. Any reader of a file caught in between — ours
included — takes the last line of an id.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path

import msgspec

from .outcome import Outcome, TaskResult
from .tasks import file_stem


class DirectoryInUse(Exception):
    """Another `ram batch` is writing this DIR."""


class ResultStore:
    """DIR's results: the ones recorded so far, and appending new ones."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.latest: dict[str, TaskResult] = {}
        """The last recorded result of each task id."""
        self.warnings: list[str] = []
        self._lock_fd: int | None = None
        self._superseded = 0
        """Lines of the results file that a later line of the same task replaces (`compact` drops them)."""

    @classmethod
    def open(cls, out: Path) -> ResultStore:
        """Lock DIR (`DirectoryInUse`), mend a results file cut mid-line, and load what it holds."""
        store = cls(out)
        for name in ("patches", "transcripts", "logs"):
            (out / name).mkdir(parents=True, exist_ok=True)
        fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise DirectoryInUse(f"{out} is in use by ram batch (process {holder})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        store._lock_fd = fd
        store._load()
        with contextlib.suppress(OSError):  # a full disk: the lines stay (the last of each task wins)
            store.compact()
        return store

    @property
    def results_path(self) -> Path:
        return self.out / "results.jsonl"

    def _load(self) -> None:
        path = self.results_path
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1
        if end < len(data):  # a line cut off by a kill: drop it (its task runs again)
            with path.open("r+b") as handle:
                handle.truncate(end)
            self.warnings.append(f"{path}: an unfinished last line was removed (its task runs again)")
        for number, line in enumerate(data[:end].splitlines(), 1):
            if not line.strip():
                continue
            try:
                result = msgspec.json.decode(line, type=TaskResult)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                self.warnings.append(f"{path}:{number}: not a result ({exc}); ignored")
                continue
            self._superseded += result.id in self.latest
            self.latest[result.id] = result

    def should_run(self, task_id: str, retry_failed: bool) -> bool:
        """True unless the task has a result already (with `retry_failed`: a completed one)."""
        done = self.latest.get(task_id)
        return done is None or (retry_failed and done.status != "completed")

    def record(self, outcome: Outcome) -> TaskResult:
        """Write the outcome's files, then its results line; the result as recorded."""
        result = outcome.result
        stem = file_stem(result.id)
        patch = self.out / "patches" / f"{stem}.patch"
        if outcome.patch:
            _write_whole(patch, outcome.patch)
            result.patch = f"patches/{stem}.patch"
        else:
            with contextlib.suppress(FileNotFoundError):
                patch.unlink()  # an earlier attempt's patch must not pass for this one's
        if outcome.transcript:
            _write_whole(self.out / "transcripts" / f"{stem}.jsonl", outcome.transcript)
            result.transcript = f"transcripts/{stem}.jsonl"
        line = msgspec.json.encode(result) + b"\n"
        fd = os.open(self.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            written = os.write(fd, line)
            if written != len(line):  # a full disk: take the partial line back off
                os.ftruncate(fd, os.fstat(fd).st_size - written)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.results_path))
            os.fsync(fd)
        finally:
            os.close(fd)
        self._superseded += result.id in self.latest
        self.latest[result.id] = result
        return result

    def compact(self) -> bool:
        """Rewrite the results file with only the last line of each task, when an earlier one is there; True when
        it did. Lines that are not results are kept as they are. OSError when the disk refuses (the file stays)."""
        if not self._superseded:
            return False
        lines = [(line, _id_of(line)) for line in self.results_path.read_bytes().splitlines(keepends=True)]
        last = {task_id: number for number, (_line, task_id) in enumerate(lines) if task_id is not None}
        kept = [line for number, (line, task_id) in enumerate(lines) if task_id is None or last[task_id] == number]
        _write_whole(self.results_path, b"".join(kept))
        self._superseded = 0
        return True

    def patch_text(self, result: TaskResult) -> str:
        if result.patch is None:
            return ""
        try:
            return (self.out / result.patch).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def write_predictions(self, ids: Iterable[str], model_name: str | None) -> Path:
        """`preds.json` for the tasks `ids` (in that order) that have a result."""
        preds = {}
        for task_id in ids:
            result = self.latest.get(task_id)
            if result is None:
                continue
            preds[task_id] = {
                "instance_id": task_id,
                "model_name_or_path": model_name or result.model,
                "model_patch": self.patch_text(result),
            }
        path = self.out / "preds.json"
        _write_whole(path, json.dumps(preds, indent=2, ensure_ascii=False) + "\n")
        return path

    def write_summary(self, summary: dict[str, object]) -> None:
        _write_whole(self.out / "summary.json", json.dumps(summary, indent=2) + "\n")

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def _id_of(line: bytes) -> str | None:
    """The task of a results line; None for a line that is not a result (`_load` skips it too)."""
    try:
        return msgspec.json.decode(line, type=TaskResult).id
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _write_whole(path: Path, text: str | bytes) -> None:
    """Write `path` so that it is never seen half-written: a temporary file, synced, renamed over it (a disk that
    refuses the temporary file leaves `path` as it was, and no temporary file)."""
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as handle:
            handle.write(text.encode() if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    os.replace(partial, path)
