"""A disk that refuses ram's own writes — full (ENOSPC), over quota (EDQUOT), read-only (EROFS), a file too large
(EFBIG) — stops the batch; it is not the task's fault.

Without this, every task that starts once DIR's disk is full fails in its first `git clone` and is recorded as an
`error`, so the rerun skips it. Instead such a task is not recorded (as after Ctrl+C) and the driver stops the
batch with one line saying the disk is full and that the same command goes on once there is room.

Three ways to tell, because a refused write is often undone before anyone looks (git removes a clone it could not
finish, freeing the space again):
- an `OSError` ram itself got, by its errno (`from_exception`);
- what ram's own git commands printed (`from_text`; they run in the C locale, so git's words are known: the
  errno's text, or "Out of diskspace");
- a look at the disk when a task ends (`probe`): a small file written in ram's folder (the workspaces, the
  session transcripts, DIR). A setup or test command's output is not read for these words — it is the
  repository's code and may print anything — but a disk it filled is still full when the probe looks.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

REFUSED = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})
"""The errnos that mean the disk refuses the write, whatever is written."""
PROBE_BYTES = 64 * 1024
"""What the probe writes: a disk with less room than this is as good as full for a batch."""
_WORDS = (*(os.strerror(code) for code in sorted(REFUSED)), "Out of diskspace")


def describe(code: int, where: str | os.PathLike[str] | None) -> str:
    """`the disk is full at DIR (No space left on device)`: one line for the driver's stop message."""
    what = "the disk is read-only" if code == errno.EROFS else "the disk is full"
    return f"{what}{f' at {where}' if where else ''} ({os.strerror(code)})"


def from_exception(error: BaseException | None, where: Path | None = None) -> str | None:
    """The description when `error` (or what caused it) is an OSError the disk refused; else None. `where`: the
    place to name when the error names no file."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in REFUSED:
            return describe(error.errno, error.filename or where)
        error = error.__cause__ or error.__context__
    return None


def from_text(text: str) -> int | None:
    """The errno a message of ram's own git names (C locale), if it names one of `REFUSED`."""
    for code in sorted(REFUSED):
        if os.strerror(code) in text:
            return code
    return errno.ENOSPC if "Out of diskspace" in text else None


def probe(folder: Path) -> str | None:
    """Write (and drop) `PROBE_BYTES` in `folder` — or its nearest existing parent — and say whether the disk took
    them: None when it did (or the folder cannot be written for another reason, such as permissions)."""
    here = folder
    while not here.is_dir() and here != here.parent:
        here = here.parent
    try:
        with tempfile.TemporaryFile(dir=here, prefix=".ram-disk-probe-") as handle:  # unnamed where the OS allows
            handle.write(b"\0" * PROBE_BYTES)
            handle.flush()
    except OSError as exc:
        if exc.errno in REFUSED:
            return describe(exc.errno, folder)
    return None


def first_problem(folders: list[Path]) -> str | None:
    """`probe` of each folder in turn; the first problem found."""
    for folder in folders:
        problem = probe(folder)
        if problem:
            return problem
    return None
