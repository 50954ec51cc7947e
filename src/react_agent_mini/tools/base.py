"""What a tool is, and the table of tools a session offers the model.

A tool has a model-facing name and description, a JSON Schema for its input, two flags the loop uses to
schedule it (read-only tools skip write permission; concurrency-safe ones run in parallel), a validator, and
an async `call`. A tool also says what family it belongs to and what a call touches (`declared.py`: `family`,
`touches`, or just `path_fields`, the input fields that hold paths): the permission policy, the sandbox and
compaction read those declarations, never a table of tool names, and guess paths from the fields' names only for a
tool that says nothing (MCP tools). Tools return `ToolOutput` values, errors included, instead of raising: the
model reads them.
Most tools are `ModelTool`s: a `msgspec.Struct` describes the input and yields both the JSON Schema and the
validation (msgspec: C-implemented, ≈20 ms to import where pydantic costs ≈130 ms on the startup path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import msgspec

from ..credentials import provider_credentials
from ..messages import ContentBlock, ImageData
from ..result_details import ToolDetails
from .declared import Family, field_values, typed_path_fields
from .file_state import FileReads
from .spec import ToolSpec


class ToolInputError(ValueError):
    """The model's arguments do not fit the tool's schema; the message names the field."""


class ToolOutput(msgspec.Struct, frozen=True):
    """What a tool call produced."""

    content: str
    """Text the model reads."""
    is_error: bool = False
    """True when the call failed; the content says why."""
    after: tuple[ContentBlock, ...] = ()
    """Blocks to place after this call's tool_result (e.g. a skill body), never before it."""
    images: tuple[ImageData, ...] = ()
    """Images for the tool_result (the content names each one in a placeholder line)."""
    denied: bool = False
    """Set by the runner when the permission check refused the call."""
    end_turn: bool = False
    """The turn ends after this call's batch (a subagent whose tool call the user refused)."""
    details: ToolDetails | None = None
    """The result as data, for the front ends and compaction (`result_details`: Bash's, whose text `content` is;
    Read's, Grep's, Glob's)."""


class ToolContext(msgspec.Struct):
    """What a running tool may know about its session."""

    cwd: Path
    """The workspace root (absolute)."""
    file_reads: FileReads = msgspec.field(default_factory=FileReads)
    """What this session has read (shared by Read, Write, Edit)."""
    shell: ShellState = msgspec.field(default_factory=lambda: ShellState())
    """Bash's state kept between calls (shared by every per-call copy of this context)."""
    whole_results: frozenset[str] = frozenset()
    """Ids of the tool_results the model saw whole in the latest request (not cut or cleared by compaction)."""
    call_id: str = ""
    """The id of the tool_use being run (set per call by the runner)."""
    read_denied: Callable[[Path], bool] | None = None
    """True for files the permission rules forbid reading (deny or ask rules): Glob and Grep leave them out of
    their results, so searching a directory cannot reveal what reading the file would not."""
    progress: Callable[[Any], None] | None = None
    """Set by the runner per call: a tool that has events of its own to show while it runs (a subagent's loop)
    hands each one here, and it reaches the front ends as a `ToolProgress` at once."""
    changes: ChangeObserver | None = None
    """Told before and after each call that may change files (the session's checkpoints); None: nobody."""


class ChangeObserver(Protocol):
    """Sees tool calls before and after they run, to snapshot what they may change (`checkpoints.tracker`)."""

    async def before_call(self, tool: str, args: Mapping[str, Any], ctx: ToolContext) -> object | None:
        """Called just before the call runs; what it returns (None: nothing to do) goes to `after_call`."""
        ...

    async def after_call(self, token: object) -> None:
        """Called once the call has ended, however it ended."""
        ...


class ShellState(msgspec.Struct):
    """Mutable state Bash keeps between calls."""

    cwd: Path | None = None
    """Where the next command starts (None: the workspace root)."""
    withheld: frozenset[str] = msgspec.field(default_factory=provider_credentials)
    """Environment variables commands do not get: the credentials ram uses (see `shell_env`)."""


class Tool(Protocol):
    """The contract every tool (built-in or MCP) satisfies."""

    @property
    def name(self) -> str:
        """Unique name the model calls it by."""
        ...

    @property
    def description(self) -> str:
        """Model-facing: when to use it, its limits, what it returns."""
        ...

    @property
    def read_only(self) -> bool:
        """True when it cannot change anything (no write permission needed)."""
        ...

    @property
    def concurrency_safe(self) -> bool:
        """True when it may run in parallel with other such calls."""
        ...

    def input_schema(self) -> Mapping[str, Any]:
        """JSON Schema of the input object."""
        ...

    def validate(self, raw: Mapping[str, Any]) -> Any:
        """Parsed arguments for `call`, or ToolInputError."""
        ...

    async def call(self, args: Any, ctx: ToolContext) -> ToolOutput:
        """Run the tool."""
        ...

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        """A short label for status lines, e.g. `notes.txt` for a Read."""
        ...

    # Optional, so not part of the protocol's required members (`declared.py` reads them): `family`, one of
    # `declared.FAMILIES`; `path_fields: tuple[str, ...]`, the names of the input fields that hold a path or a list
    # of paths (see `path_arguments`); `touches(raw) -> Touches`, what a call touches when path fields do not say.


def path_arguments(tool: Tool, raw: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The paths a call of `tool` names, as the model wrote them, from the fields the tool declares in its
    `path_fields` (a field holds a path, or a list of them); None when the tool declares none (not even `()`)."""
    fields = getattr(tool, "path_fields", None)
    return None if fields is None else field_values(raw, fields)


ArgsT = TypeVar("ArgsT", bound=msgspec.Struct)


class ModelTool(Generic[ArgsT]):
    """A tool whose input is a msgspec Struct: schema and validation come from it.

    Field descriptions go in `Annotated[..., msgspec.Meta(description=...)]`; unknown keys are ignored and
    lax conversions ("10" → 10) accepted, since models are not always exact."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[msgspec.Struct]]
    read_only: ClassVar[bool] = False
    concurrency_safe: ClassVar[bool] = False
    family: ClassVar[Family] = "other"
    """What kind of tool it is (`declared.py`): the policy, compaction and the front ends go by it."""
    status_field: ClassVar[str] = ""
    """The input field shown on status lines."""
    path_fields: ClassVar[tuple[str, ...] | None] = None
    """The input fields that hold paths (`path_arguments`); None: every field typed as a `Path`, whatever its name
    (and when none is, not declared: the policy goes by the fields' names)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        model = cls.__dict__.get("args_model")
        if "path_fields" not in cls.__dict__ and model is not None and (typed := typed_path_fields(model)):
            cls.path_fields = typed

    text_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields holding free text that may contain any character; every other string field (paths, commands,
    patterns) is refused when it holds a NUL, which no path or argv can carry."""

    def input_schema(self) -> Mapping[str, Any]:
        return struct_schema(self.args_model, plain_optionals=True)

    def validate(self, raw: Mapping[str, Any]) -> ArgsT:
        try:
            args = msgspec.convert(dict(raw), self.args_model, strict=False)
        except msgspec.ValidationError as exc:
            raise ToolInputError(format_validation_error(str(exc))) from None
        for field in args.__struct_fields__:
            value = getattr(args, field)
            if isinstance(value, str) and "\x00" in value and field not in self.text_fields:
                raise ToolInputError(f"{field}: contains a NUL character (\\x00), which no path or command can hold")
        return args  # type: ignore[return-value]

    async def call(self, args: ArgsT, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        value = raw.get(self.status_field) if self.status_field else None
        return str(value) if value is not None else ""


_MISSING = re.compile(r"missing required field `([^`]*)`")
_WHERE = re.compile(r"^(.*) - at `\$\.?(.*)`$")


def format_validation_error(message: str) -> str:
    """msgspec's error as `field: problem` (e.g. `message: expected `str`, got `int``)."""
    if missing := _MISSING.search(message):
        return f"{missing.group(1)}: field required"
    if where := _WHERE.match(message):
        problem, field = where.groups()
        return f"{field or '(input)'}: {problem[:1].lower()}{problem[1:]}"
    return message


def struct_schema(
    model: type[msgspec.Struct],
    schema_hook: Callable[[type], dict[str, Any]] | None = None,
    *,
    plain_optionals: bool = False,
) -> dict[str, Any]:
    """The JSON Schema of a Struct, inlined at the top level, without `title`s (tokens for nothing); `schema_hook`
    describes types msgspec does not know (as `msgspec.json.schema` takes it); `plain_optionals`: an optional
    property defaulting to None by its type alone (ram's own tools; a library user's function keeps its schema)."""
    schema = msgspec.json.schema(model, schema_hook=schema_hook)
    defs: dict[str, Any] = schema.pop("$defs", {})
    if "$ref" in schema:
        schema = defs.pop(schema["$ref"].rsplit("/", 1)[-1])
    if defs:
        schema["$defs"] = defs
    cleaned: dict[str, Any] = _drop_titles(schema)
    if plain_optionals:
        _plain_optionals(cleaned)
    return cleaned


def _plain_optionals(schema: dict[str, Any]) -> None:
    """An optional property whose default is None (`offset: int | None = None`) is described by its type alone:
    `{"type": "integer"}`, not `{"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}` — leaving it
    out says the same, in a sixth of the tokens. An explicit null is still accepted."""
    required = set(schema.get("required", ()))
    for name, prop in (schema.get("properties") or {}).items():
        options = prop.get("anyOf")
        if name in required or "default" not in prop or prop["default"] is not None or not isinstance(options, list):
            continue
        kept = [option for option in options if option != {"type": "null"}]
        if len(kept) == 1 and len(options) == 2 and isinstance(kept[0], dict):
            rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
            schema["properties"][name] = {**kept[0], **rest}


def _drop_titles(node: Any) -> Any:
    """Also types string enums explicitly: some providers want `type` beside `enum`."""
    if isinstance(node, dict):
        out = {k: _drop_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
        if "enum" in out and "type" not in out and all(isinstance(v, str) for v in out["enum"]):
            out = {"type": "string", **out}
        return out
    if isinstance(node, list):
        return [_drop_titles(v) for v in node]
    return node


class ToolRegistry:
    """The tools offered to the model, by name, in a stable order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._aliases: dict[str, str] = {}
        self._specs: list[ToolSpec] | None = None
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name: {tool.name}")
        self._tools[tool.name] = tool
        self._specs = None

    def alias(self, other: str, name: str) -> None:
        """Let `other` name the tool `name` too, when no tool is called `other` (a name the model may use from
        elsewhere, never offered under it)."""
        self._aliases[other] = name

    def get(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None and name in self._aliases:
            return self._tools.get(self._aliases[name])
        return tool

    def changed(self) -> None:
        """A tool's description changed (the Agent tool learned more agent types): tell the model anew."""
        self._specs = None
        for tool in self._tools.values():
            forget = getattr(tool, "forget_description", None)
            if forget is not None:
                forget()

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """What the model is told about each tool (computed once: schemas do not change)."""
        if self._specs is None:
            self._specs = [ToolSpec(t.name, t.description, t.input_schema()) for t in self._tools.values()]
        return list(self._specs)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
