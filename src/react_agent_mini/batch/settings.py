"""What every worker of a batch is told once: the provider, the limits, the permissions, where to work.

Sent as JSON to each worker process (and with each Ray task), so it holds plain values only. The provider key
travels with it — to our own child processes over a pipe, or through Ray's object store to the cluster's workers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import msgspec

from ..config import ProviderConfig
from ..permissions.configured import PermissionOptions
from ..sandbox.settings import SandboxConfig

T = TypeVar("T")


class RunSettings(msgspec.Struct, frozen=True):
    """The batch's options, the same for every task (a task may override the model, max_turns and timeout)."""

    provider: ProviderConfig
    """The endpoint and model (with its key)."""
    permissions: PermissionOptions
    """`--permission-mode`, `--allowed-tools`, `--disallowed-tools`, `--setting-sources`, `--settings`."""
    max_turns: int = 20
    """Model calls per task unless the task says otherwise."""
    timeout: float | None = None
    """Seconds per task (workspace, setup, session and test); None: no limit."""
    sandbox: SandboxConfig | None = None
    """`--sandbox`; None: as the settings files say (ram's default)."""
    workspace_root: str | None = None
    """Where workspaces are made (`<root>/<task file stem>`); a relative path is taken in the temporary directory
    of the worker's machine (Ray: one per batch, `ram-batch/<batch key>`), whose first folder (`ram-batch`) every
    task sweeps of dead workers' workspaces; None: `ram-batch/workspaces` there."""
    repo_cache: str | None = None
    """Where git URLs are mirrored once for many tasks (relative: in the worker's temporary directory); None:
    `ram-batch/repos` there."""
    keep_workspaces: bool = False
    """Leave each workspace in place after its task (else it is removed)."""
    limiter_dir: str | None = None
    """The directory of the shared 429 backoff state (the local pool: `DIR/.limits`); None: the engine's own."""


def to_json(value: object) -> bytes:
    """`value` (our structs, with `Path`s in them) as JSON."""
    return msgspec.json.encode(value, enc_hook=_encode_extra)


def from_json(data: bytes | str, kind: type[T]) -> T:
    """JSON back into `kind`; msgspec.ValidationError when it does not fit."""
    return msgspec.json.decode(data, type=kind, dec_hook=_decode_extra)


def _encode_extra(value: object) -> object:
    if isinstance(value, Path):
        return str(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


def _decode_extra(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(f"cannot decode {kind}")
