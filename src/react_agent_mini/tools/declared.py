"""What a tool says about itself for the rest of the house: its family, and what a call of it touches.

Nothing outside the tools knows a tool by its name. The permission policy, the sandbox, compaction, the ACP cards
and the subagent definitions ask a tool (or, for a history that only names its calls, `family_named`) instead:

- `family`: `read` (reads files it is given), `edit` (changes files it is given), `search` (reads what is inside
  folders it is given), `shell` (runs a command line), `network` (reaches other machines), `other` (anything else:
  keeping a to-do list, an MCP server's tool). A tool that declares none is `other`.
- `touches(raw)`: the paths a call reads, writes or searches, the URLs it reaches, and the shell command it runs
  (what that touches is the shell analysis', `permissions.bash`). By default it comes from the tool's path fields
  (`path_fields`; for a `ModelTool` that declares none, every field typed as a `Path`, of any name): read by a
  `read` or `search` tool, written by an `edit` tool. None when the tool says nothing about its paths (an MCP
  tool: the policy then guesses them from argument names, as it always did).
"""

from __future__ import annotations

import collections.abc
import os
import types
from collections.abc import Mapping
from pathlib import PurePath
from typing import Annotated, Any, Literal, TypeAlias, Union, get_args, get_origin

import msgspec

Family: TypeAlias = Literal["read", "edit", "search", "shell", "network", "other"]
FAMILIES: tuple[Family, ...] = ("read", "edit", "search", "shell", "network", "other")
READING: frozenset[Family] = frozenset({"read", "search"})
"""The families whose calls only read files (Read rules govern them)."""
REGENERABLE: frozenset[Family] = frozenset({"read", "edit", "search", "shell"})
"""The families whose old results compaction may clear: calling the tool again gives them back."""


class Touches(msgspec.Struct, frozen=True):
    """What one call reaches, as the model wrote it (paths unresolved)."""

    reads: tuple[str, ...] = ()
    """Files it reads."""
    writes: tuple[str, ...] = ()
    """Files it creates or changes."""
    searches: tuple[str, ...] = ()
    """Folders whose contents it reads (a search root)."""
    reaches: tuple[str, ...] = ()
    """URLs it fetches."""
    command: str | None = None
    """The shell command line it runs (None: it runs none); what that touches the shell analysis says."""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path named, in order: files read or written, then folders searched."""
        return (*self.reads, *self.writes, *self.searches)


def family_of(tool: object) -> Family:
    """The family `tool` declares (`other` when it declares none)."""
    family = getattr(tool, "family", None)
    return family if family in FAMILIES else "other"


def touches_of(tool: object, raw: Mapping[str, Any]) -> Touches | None:
    """What a call of `tool` with input `raw` touches: the tool's own `touches`, else its path fields read or
    written as its family says; None when the tool declares no path fields at all (not even `()`)."""
    own = getattr(tool, "touches", None)
    if callable(own):
        found: Touches | None = own(raw)
        return found
    fields = getattr(tool, "path_fields", None)
    if fields is None:
        return None
    paths = field_values(raw, fields)
    family = family_of(tool)
    if family == "search":
        return Touches(searches=paths)
    if family == "edit" or not getattr(tool, "read_only", False):
        return Touches(writes=paths)
    return Touches(reads=paths)


def field_values(raw: Mapping[str, Any], fields: tuple[str, ...]) -> tuple[str, ...]:
    """The non-empty strings in `raw`'s `fields` (a field holds one, or a list of them)."""
    found: list[str] = []
    for field in fields:
        value = raw.get(field)
        values = value if isinstance(value, (list, tuple)) else [value]
        found += [v for v in values if isinstance(v, str) and v]
    return tuple(found)


def typed_path_fields(model: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of `model` typed as paths (`Path`, `os.PathLike`, also in a union or a list of them)."""
    return tuple(field.name for field in msgspec.structs.fields(model) if holds_paths(field.type))


_CONTAINERS = frozenset(
    {list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable, collections.abc.Collection,
     collections.abc.Set, collections.abc.MutableSequence}
)  # fmt: skip


def holds_paths(hint: Any) -> bool:
    """True for `Path`, `os.PathLike` (and subclasses), and for a union or a list, tuple or set holding one."""
    origin = get_origin(hint)
    if origin is Annotated:
        return holds_paths(get_args(hint)[0])
    if origin is Union or isinstance(hint, types.UnionType) or origin in _CONTAINERS:
        return any(holds_paths(arg) for arg in get_args(hint) if arg is not Ellipsis)
    return is_path_class(hint)


def is_path_class(kind: Any) -> bool:
    """`Path` and the other `PurePath`s, `os.PathLike` (also `os.PathLike[str]`)."""
    kind = get_origin(kind) or kind
    return isinstance(kind, type) and (issubclass(kind, PurePath) or issubclass(kind, os.PathLike))
