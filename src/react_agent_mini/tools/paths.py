"""Paths the model gives us, resolved against the workspace: `..` and symlinks followed before any check.

Every tool and the permission policy use these, so "inside the workspace" means one thing everywhere.
"""

from __future__ import annotations

import os
from pathlib import Path


def resolve(root: Path, raw: str) -> Path:
    """The absolute, symlink-resolved path `raw` names (relative paths are relative to `root`)."""
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    return (root / expanded).resolve(strict=False)


def inside(root: Path, path: Path) -> bool:
    """True when `path` (already resolved) is `root` or below it."""
    root = root.resolve(strict=False)
    return path == root or root in path.parents


def display(root: Path, path: Path) -> str:
    """`path` relative to `root` when inside it (with `/`), else absolute: what the model and user read."""
    try:
        return path.relative_to(root.resolve(strict=False)).as_posix() or "."
    except ValueError:
        return str(path)
