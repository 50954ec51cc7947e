"""Where the saved sessions are: every transcript under `$XDG_DATA_HOME/react-agent-mini/sessions/`.

    sessions/<workspace-slug>/<session-id>.jsonl                       a session (transcript.py)
    sessions/<workspace-slug>/<session-id>/subagents/agent-<id>.jsonl  one of its subagents (subagents/run.py)

A subagent's transcript counts into its session. Folders are listed with `os.scandir` (no per-file `stat` beyond
what listing gives), so finding a year of sessions costs a few milliseconds. A folder that cannot be listed
costs one warning.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec


class TranscriptFile(msgspec.Struct, frozen=True):
    """A transcript, and the session its calls count into."""

    path: Path
    slug: str
    """The workspace's folder name (its path with separators made safe)."""
    session_id: str
    """The session (for a subagent's transcript, the session that started it)."""
    subagent: bool = False


def find_transcripts(root: Path, warnings: list[str]) -> Iterator[TranscriptFile]:
    """Every session transcript under `root` (the sessions folder), then each one's subagents'."""
    for slug in _entries(root, warnings):
        if not slug.is_dir():
            continue
        for entry in _entries(Path(slug.path), warnings):
            name = entry.name
            if name.endswith(".jsonl") and entry.is_file():
                yield TranscriptFile(Path(entry.path), slug.name, name[: -len(".jsonl")])
            elif entry.is_dir() and "." not in name:  # `<id>/`, not `<id>.checkpoints/`
                agents = Path(entry.path) / "subagents"
                if not agents.is_dir():
                    continue
                for agent in _entries(agents, warnings):
                    if agent.name.endswith(".jsonl") and agent.is_file():
                        yield TranscriptFile(Path(agent.path), slug.name, name, subagent=True)


def _entries(folder: Path, warnings: list[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        warnings.append(f"{folder}: cannot be listed ({exc.strerror or exc}); its sessions are not counted")
        return []
