"""`TrustGate`: the question every loader of project configuration asks, part by part — may this part apply?

A part applies when the folder lies in a tree the user trusts whole (`trustedFolders` in the user settings,
`ram trust --always`, or a program that said so: the library's `trust_project=True`), or when the user approved
exactly this part in this folder (its digest is in the trust store). Everything else is left out, and the gate
remembers it: the session starts with one line naming what was left out and how to trust it, and the REPL asks
about it.

Building a gate reads two small files (the user settings and the trust store); nothing else happens on the way to
the first request (`benchmarks/startup.py` measures it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .store import folder_key, read_store, trusted_trees

if TYPE_CHECKING:  # the digests load with the first project part a loader meets, not for a folder without any
    from .items import ItemKind, TrustItem

TRUST_HINT = "`ram trust` shows them and trusts this folder"


class TrustGate:
    """Which project parts apply in one folder, and which were left out."""

    def __init__(
        self,
        folder: Path,
        *,
        everything: bool = False,
        approved: frozenset[str] = frozenset(),
        recorded: bool = False,
        warnings: list[str] | None = None,
    ) -> None:
        self.folder = folder
        self.everything = everything
        """True: every part applies (a trusted tree, or a program's explicit trust)."""
        self.approved = approved
        self.recorded = recorded
        """True when the user trusted this folder before (so a part left out is one that changed since)."""
        self.warnings: list[str] = warnings or []
        """Problems with the trust settings themselves (a broken store, a bad `trustedFolders` entry)."""
        self.withheld: list[TrustItem] = []
        """Every part left out so far, once each, in the order met."""
        self._withheld_keys: set[str] = set()
        self._reported = 0

    @property
    def trusted(self) -> bool:
        """True when nothing has been left out (so far)."""
        return not self.withheld

    def permits(self, item: TrustItem) -> bool:
        """May `item` apply? A part that may not is remembered as left out."""
        if self.everything or item.key in self.approved:
            return True
        if item.key not in self._withheld_keys:
            self._withheld_keys.add(item.key)
            self.withheld.append(item)
        return False

    def approve(self, keys: frozenset[str]) -> None:
        """The user trusted these parts just now (the REPL's question): they apply from here on."""
        self.approved = self.approved | keys
        self.recorded = True
        self.withheld = [item for item in self.withheld if item.key not in keys]
        self._withheld_keys -= keys
        self._reported = min(self._reported, len(self.withheld))

    def left_out_line(self) -> str | None:
        """One line naming what was left out since the last call, and how to trust it; None when nothing new."""
        fresh = self.withheld[self._reported :]
        self._reported = len(self.withheld)
        if not fresh:
            return None
        return describe_left_out(fresh, changed=self.recorded)


def describe_left_out(items: list[TrustItem], *, changed: bool) -> str:
    """`this folder is not trusted yet, so its configuration was left out: 2 hooks, 1 MCP server (.mcp.json, …)`."""
    from .items import counted

    counts: dict[ItemKind, int] = {}
    for item in items:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    what = ", ".join(counted(kind, number) for kind, number in counts.items())
    files = ", ".join(dict.fromkeys(item.source for item in items))
    if changed:
        return (
            f"this folder's configuration changed since you trusted it, so the new parts were left out: {what} "
            f"({files}); {TRUST_HINT}"
        )
    return (
        f"this folder is not trusted yet, so its configuration that runs commands or widens permissions was left "
        f"out: {what} ({files}); {TRUST_HINT} (its deny rules, CLAUDE.md and skills apply)"
    )


def trust_gate(cwd: Path, env: Mapping[str, str] | None = None, *, explicit: bool | None = None) -> TrustGate:
    """The gate for a session in `cwd`: `explicit` True trusts everything, False nothing (a program's choice);
    None as the user's settings and trust store say."""
    env = os.environ if env is None else env
    folder = Path(folder_key(cwd))
    if explicit is not None:
        return TrustGate(folder, everything=explicit)
    trees, warnings = trusted_trees(read_user_settings(env))
    if any(folder == tree or tree in folder.parents for tree in trees):
        return TrustGate(folder, everything=True, warnings=warnings)
    folders, problem = read_store(env)
    if problem:
        warnings.append(problem)
    if any(record.always and (str(folder) == key or Path(key) in folder.parents) for key, record in folders.items()):
        return TrustGate(folder, everything=True, warnings=warnings)
    record = folders.get(str(folder))
    return TrustGate(
        folder,
        approved=record.approved if record is not None else frozenset(),
        recorded=record is not None,
        warnings=warnings,
    )


def read_user_settings(env: Mapping[str, str]) -> Any:
    """The user settings file's JSON value (None when it is missing or broken)."""
    from ..context import user_config_dir

    try:
        return json.loads((user_config_dir(env) / "settings.json").read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # missing is normal; a broken file the permission loader names
        return None
