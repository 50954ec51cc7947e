"""What a tool is, and the table of tools a session offers the model.

A tool has a model-facing name and description, a JSON Schema for its input, two flags the loop uses to
schedule it (read-only tools skip write permission; concurrency-safe ones run in parallel), a validator, and
an async `call`. Tools return `ToolOutput` values, errors included, instead of raising: the model reads them.
Most tools are `ModelTool`s: a pydantic model describes the input and yields both schema and validation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from ..messages import ContentBlock
from ..providers.base import ToolSpec

if TYPE_CHECKING:
    from pydantic import BaseModel


class ToolInputError(ValueError):
    """The model's arguments do not fit the tool's schema; the message names the field."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool call produced."""

    content: str
    """Text the model reads."""
    is_error: bool = False
    """True when the call failed; the content says why."""
    after: tuple[ContentBlock, ...] = ()
    """Blocks to place after this call's tool_result (e.g. a skill body), never before it."""


@dataclass(slots=True)
class ToolContext:
    """What a running tool may know about its session."""

    cwd: Path
    """The workspace root."""
    state: dict[str, Any] = field(default_factory=dict)
    """Per-session scratch space for tools (e.g. which files were read)."""


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


ArgsT = TypeVar("ArgsT", bound="BaseModel")


class ModelTool(Generic[ArgsT]):
    """A tool whose input is a pydantic model: schema and validation come from it."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    read_only: ClassVar[bool] = False
    concurrency_safe: ClassVar[bool] = False
    status_field: ClassVar[str] = ""
    """The input field shown on status lines."""

    def input_schema(self) -> Mapping[str, Any]:
        return _clean_schema(self.args_model.model_json_schema())

    def validate(self, raw: Mapping[str, Any]) -> ArgsT:
        from pydantic import ValidationError

        try:
            return self.args_model.model_validate(dict(raw))  # type: ignore[return-value]
        except ValidationError as exc:
            raise ToolInputError(format_validation_error(exc)) from None

    async def call(self, args: ArgsT, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        value = raw.get(self.status_field) if self.status_field else None
        return str(value) if value is not None else ""


def format_validation_error(exc: Any) -> str:
    """`field: problem; other.field: problem` from a pydantic ValidationError."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "(input)"
        problems.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(problems)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's `title`s: noise the model pays tokens for."""
    cleaned: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            cleaned[key] = {k: _clean_schema(v) if isinstance(v, dict) else v for k, v in value.items()}
        elif isinstance(value, dict):
            cleaned[key] = _clean_schema(value)
        elif isinstance(value, list):
            cleaned[key] = [_clean_schema(v) if isinstance(v, dict) else v for v in value]
        else:
            cleaned[key] = value
    return cleaned


class ToolRegistry:
    """The tools offered to the model, by name, in a stable order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: list[ToolSpec] | None = None
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name: {tool.name}")
        self._tools[tool.name] = tool
        self._specs = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

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
