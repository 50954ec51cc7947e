"""Where the user's trust is kept: `$XDG_CONFIG_HOME/react-agent-mini/trusted-folders.json`.

It belongs to the user, never to a project (a repository cannot ship its own trust), and holds, per folder, the
digests of the parts the user approved (`items.TrustItem.key`) and when — or that the user trusts the folder and
everything below it whatever its configuration says later (`ram trust --always`, `"always": true`):

    {"version": 1, "folders": {"/home/me/src/app": {"trusted_at": "2026-12-01T10:00:00Z", "approved": ["…"]},
                               "/home/me/own": {"trusted_at": "…", "always": true}}}

Writes are atomic (a temporary file renamed over the old one, readable by the user only) under an advisory lock,
so two `ram` processes trusting folders at once both land. A store that cannot be read or parsed trusts nothing
and says so in one line; the next write replaces it.

The other way to trust is the user settings file's `trustedFolders` (`trusted_trees`): folders trusted with
everything below them, whatever their configuration says.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

STORE_NAME = "trusted-folders.json"
TREES_KEY = "trustedFolders"
"""The user settings key listing folders trusted with everything below them."""


class FolderTrust(msgspec.Struct, frozen=True):
    """What the user approved in one folder."""

    approved: frozenset[str] = frozenset()
    """Digests of the approved parts."""
    trusted_at: str = ""
    """When, as an ISO 8601 UTC time."""
    always: bool = False
    """True: the folder and everything below it are trusted whatever their configuration says."""


def store_path(env: Mapping[str, str] | None = None) -> Path:
    from ..context import user_config_dir

    return user_config_dir(env) / STORE_NAME


def folder_key(folder: Path) -> str:
    """The store's key for `folder`: its resolved absolute path."""
    return str(folder.resolve())


def read_store(env: Mapping[str, str] | None = None) -> tuple[dict[str, FolderTrust], str | None]:
    """Every folder's record, and a warning when the store exists but cannot be used (then nothing is trusted)."""
    path = store_path(env)
    try:
        data: Any = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError, RecursionError) as exc:
        return {}, f"{path}: cannot be read ({_reason(exc)}), so no folder counts as trusted until it is rewritten"
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        return {}, f"{path}: not a trust store (no `folders` object), so no folder counts as trusted"
    out: dict[str, FolderTrust] = {}
    for key, record in folders.items():
        if isinstance(key, str) and isinstance(record, dict):
            approved = record.get("approved", [])
            keys = frozenset(k for k in approved if isinstance(k, str)) if isinstance(approved, list) else frozenset()
            when = record.get("trusted_at", "")
            out[key] = FolderTrust(keys, when if isinstance(when, str) else "", record.get("always") is True)
    return out, None


def record_trust(
    folder: Path, keys: Iterable[str], env: Mapping[str, str] | None = None, *, always: bool = False
) -> None:
    """Record that the user trusts `folder` with exactly the parts `keys` (replacing what it approved before:
    a part that is gone from the configuration is not kept approved), or, `always`, with everything below it.
    Raises OSError when it cannot be written."""
    record: dict[str, Any] = {"trusted_at": _now(), "approved": sorted(set(keys))}
    if always:
        record["always"] = True
    with _locked(env) as folders:
        folders[folder_key(folder)] = record


def revoke_trust(folder: Path, env: Mapping[str, str] | None = None) -> bool:
    """Forget `folder`'s record; False when there was none. Raises OSError when the store cannot be written."""
    with _locked(env) as folders:
        return folders.pop(folder_key(folder), None) is not None


def trusted_trees(user_settings: Any) -> tuple[list[Path], list[str]]:
    """The folders the user settings' `trustedFolders` trusts with everything below them (`~` expanded,
    relative entries ignored), and a warning per entry that cannot be used."""
    if not isinstance(user_settings, dict) or TREES_KEY not in user_settings:
        return [], []
    value = user_settings[TREES_KEY]
    if not isinstance(value, list):
        return [], [f"user settings: `{TREES_KEY}` must be a list of folder paths (ignored)"]
    trees: list[Path] = []
    warnings: list[str] = []
    for entry in value:
        path = Path(os.path.expanduser(entry)) if isinstance(entry, str) and entry.strip() else None
        if path is None or not path.is_absolute():
            warnings.append(f"user settings: `{TREES_KEY}` entry {entry!r} is not an absolute path (ignored)")
            continue
        with contextlib.suppress(OSError, RuntimeError):
            path = path.resolve()
        trees.append(path)
    return trees, warnings


@contextlib.contextmanager
def _locked(env: Mapping[str, str] | None) -> Iterator[dict[str, Any]]:
    """The store's `folders`, to change in place; written back atomically when the block ends without error."""
    import fcntl

    path = store_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(path.with_name(STORE_NAME + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        try:
            data: Any = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            data = {}
        folders = data.get("folders") if isinstance(data, dict) else None
        folders = folders if isinstance(folders, dict) else {}
        yield folders
        temporary = path.with_name(f".{STORE_NAME}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump({"version": 1, "folders": folders}, stream, indent=1, sort_keys=True)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    finally:
        os.close(lock_fd)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return "not valid JSON"
