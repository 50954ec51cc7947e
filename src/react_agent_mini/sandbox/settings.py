"""Which sandbox a session asks for: the `--sandbox` flags and the `sandbox` block of the settings files.

`{"sandbox": {"mode": "read-only" | "workspace-write" | "off", "network": true | false}}`, in the same files as
the permission rules: the user's `~/.config/react-agent-mini/settings.json` and the project's
`.claude/settings.json`, `.claude/settings.local.json` and `.agents/settings.json` (Claude Code's
`"sandbox": {"enabled": true | false}` is read as workspace-write / off). How they combine:

- the user file may choose any mode and allow the network;
- a project file may only tighten: `read-only` beats `workspace-write`, `network: false` beats `true`; its `off`
  and its `network: true` are ignored with a warning (a cloned repository must not be able to switch the sandbox
  off or open the network, as it cannot set `bypassPermissions` or pass credentials);
- the flags (`--sandbox MODE`, `--sandbox-network`) beat every file: the user typed them.

The result is `explicit` when a flag or a file asked for a mode other than `off`: then a machine where the sandbox
cannot run is an error (the CLI exits 2; `unavailable_message` says why) instead of one warning and commands run
as without it.

Stdlib and msgspec only, and no other ram module: the CLI resolves this before anything heavy is imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias

import msgspec
import msgspec.json

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("read-only", "workspace-write", "off")
"""The values of `--sandbox` and `sandbox.mode`, tightest first."""
DEFAULT_MODE: SandboxMode = "workspace-write"

_PROJECT_FILES = (
    (".claude/settings.json", "project"),
    (".claude/settings.local.json", "local"),
    (".agents/settings.json", "project"),
)
"""The settings files inside the workspace and their `--setting-sources` kind (as `permissions.settings` reads
them; repeated here so that the CLI need not import the permission rules to know the sandbox)."""


class SandboxConfig(msgspec.Struct, frozen=True):
    """The sandbox a session's Bash commands run in, as flags and settings ask for it."""

    mode: SandboxMode = DEFAULT_MODE
    """read-only: nothing but a private /tmp is writable; workspace-write: the workspace and `writable` too;
    off: commands run as they would without ram's sandbox."""
    network: bool = False
    """True: commands share the host's network; False: a network namespace of their own (loopback only)."""
    writable: tuple[Path, ...] = ()
    """More directories writable in workspace-write mode (`--add-dir`), resolved."""
    explicit: bool = False
    """Asked for by a flag or a settings file: if it cannot run here, that is an error, not a warning."""
    warnings: tuple[str, ...] = ()
    """Problems found in the flags and files, one line each (already applied: ignored)."""

    @property
    def enabled(self) -> bool:
        return self.mode != "off"


def user_settings_file(env: Mapping[str, str]) -> Path:
    """The user's settings file (`$XDG_CONFIG_HOME/react-agent-mini/settings.json`, as `permissions.settings`)."""
    config = env.get("XDG_CONFIG_HOME", "")
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "react-agent-mini" / "settings.json"


def resolve_sandbox(
    workspace: Path,
    env: Mapping[str, str],
    *,
    mode: SandboxMode | None = None,
    network: bool = False,
    add_dirs: Sequence[str] = (),
    sources: Iterable[str] | None = None,
) -> SandboxConfig:
    """The sandbox the flags (`mode`: `--sandbox`, None when not given; `network`: `--sandbox-network`;
    `add_dirs`: `--add-dir`) and the settings files of the kinds `sources` names (None: all) ask for."""
    warnings: list[str] = []
    wanted = set(("user", "project", "local") if sources is None else sources)
    files: list[tuple[Path, bool]] = [(user_settings_file(env), True)] if "user" in wanted else []
    files += [(workspace / name, False) for name, kind in _PROJECT_FILES if kind in wanted]
    modes: list[SandboxMode] = []
    networks: list[bool] = []
    for path, user_level in files:
        found = _read_block(path, warnings)
        if found is None:
            continue
        file_mode, file_network = _parse_block(found, str(path), user_level, warnings)
        if file_mode is not None:
            modes.append(file_mode)
        if file_network is not None:
            networks.append(file_network)
    if mode is not None:
        chosen, explicit = mode, mode != "off"
    elif modes:
        chosen = min(modes, key=SANDBOX_MODES.index)  # the tightest: a project file can only tighten
        explicit = chosen != "off"
    else:
        chosen, explicit = DEFAULT_MODE, False
    allow_network = network or (bool(networks) and all(networks))
    writable = _writable_dirs(workspace, add_dirs, warnings)
    return SandboxConfig(chosen, allow_network, writable, explicit, tuple(warnings))


def _read_block(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """The `sandbox` object of one settings file; None when the file or the block is absent or unreadable (the
    permission loader reports unreadable files)."""
    try:
        data = msgspec.json.decode(path.read_bytes().removeprefix(b"\xef\xbb\xbf"))
    except (OSError, msgspec.DecodeError):
        return None
    block = data.get("sandbox") if isinstance(data, dict) else None
    if block is None:
        return None
    if not isinstance(block, dict):
        warnings.append(f"{path}: `sandbox` must be an object (ignored)")
        return None
    return block


def _parse_block(
    block: dict[str, Any], where: str, user_level: bool, warnings: list[str]
) -> tuple[SandboxMode | None, bool | None]:
    """The mode and network setting one file gives (None: it gives none, or one it may not)."""
    mode: SandboxMode | None = None
    raw = block.get("mode")
    if raw is None and isinstance(block.get("enabled"), bool):  # Claude Code's switch
        raw = DEFAULT_MODE if block["enabled"] else "off"
    if raw is not None:
        if raw not in SANDBOX_MODES:
            warnings.append(f"{where}: `sandbox.mode` must be one of {', '.join(SANDBOX_MODES)} (ignored)")
        elif raw == "off" and not user_level:
            warnings.append(f"{where}: `sandbox.mode: off` is accepted only from the user settings or --sandbox off")
        else:
            mode = raw
    network: bool | None = None
    raw_network = block.get("network")
    if isinstance(raw_network, bool):
        if raw_network and not user_level:
            warnings.append(
                f"{where}: `sandbox.network: true` is accepted only from the user settings or --sandbox-network"
            )
        else:
            network = raw_network
    elif raw_network is not None and not isinstance(raw_network, dict):  # a dict: Claude Code's own network block
        warnings.append(f"{where}: `sandbox.network` must be true or false (ignored)")
    return mode, network


def _writable_dirs(workspace: Path, add_dirs: Sequence[str], warnings: list[str]) -> tuple[Path, ...]:
    out: list[Path] = []
    for raw in add_dirs:
        path = (workspace / os.path.expanduser(raw)).resolve()
        if not path.is_dir():
            warnings.append(f"--add-dir {raw}: not a directory (ignored)")
        elif path not in out:
            out.append(path)
    return tuple(out)


def sandbox_from_flags(args: Any, env: Mapping[str, str], err: Any = None) -> SandboxConfig | None:
    """The CLI's sandbox (`args`: the parsed flags, with `setting_sources` already a tuple or None), its warnings
    printed; None, with the error printed, when it was asked for explicitly and cannot run here (exit 2)."""
    import sys

    err = err or sys.stderr
    config = resolve_sandbox(
        Path.cwd(),
        env,
        mode=args.sandbox,
        network=args.sandbox_network,
        add_dirs=getattr(args, "add_dir", None) or (),
        sources=args.setting_sources,
    )
    for warning in config.warnings:
        print(f"warning: {warning}", file=err)
    if config.enabled and config.explicit:
        from .bwrap import find_bwrap

        found = find_bwrap(env, config.network)
        if found.binary is None:
            print(f"error: {unavailable_message(config, found.problem)}", file=err)
            return None
    return config


def unavailable_message(config: SandboxConfig, problem: str) -> str:
    """Why nothing runs: the sandbox was asked for and cannot run here."""
    return (
        f"the sandbox ({config.mode}) was asked for, but it cannot run here: {problem}. Pass --sandbox off, or "
        'set {"sandbox": {"mode": "off"}} in the user settings, to run commands without it'
    )
