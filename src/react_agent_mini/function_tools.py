"""Plain Python functions as tools (`Agent(tools=[my_function])`).

The tool's name is the function's, its description the docstring, and its input schema comes from the
annotations: a `msgspec.Struct` is made from the signature, so schema and validation work exactly as for the
built-in tools (lax conversions such as `"3"` → 3, a missing required field named). Parameter descriptions come
from `Annotated[int, "how many"]` (or `msgspec.Meta(description=...)`) or from the docstring's parameter section
(Google `Args:`, reST `:param x:`, or NumPy `Parameters` / `----------`); a `Returns` section is added to the
description. Types are whatever msgspec converts (str, int, float, bool, lists, dicts, Literal, enums, dataclasses,
TypedDicts, Structs, datetimes, ...) plus `pathlib.Path` and `os.PathLike` (a `Path` is passed), which the model
sends as a string.

A sync function runs in a worker thread so it cannot stall the event loop (an interrupted turn stops waiting for
it, but a thread cannot be stopped: it runs to its end); an async one is awaited and cancelled on interrupt. What it
returns becomes the tool result: a string as is, None as `(no output)`, anything else as JSON. An exception becomes
an error result the model reads (`name failed: ValueError: ...`). Function tools are not read-only unless
`@tool(read_only=True)` says so, so they pass through the permission pipeline like any other tool that may change
something.

Which arguments are paths, the permission policy learns from the function (`path_fields`), never from a guess: a
parameter annotated `pathlib.Path` (any `PurePath`) or `os.PathLike`, also inside `Optional`/`| None`, a union, or
a `list`/`tuple`/`set` of them (`list[Path]`), is a path, whatever its name; so is one the decorator names
(`@tool(path_params=["where"])`, for a path taken as `str`), and, as before, a parameter called `file_path`,
`path` or `notebook_path`. A read-only tool called with such a path outside the workspace is then asked for (denied
headless) exactly like Read outside it: `@tool(read_only=True) def list_files(directory: Path)` on `/etc` asks.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePath
from typing import Annotated, Any, TypeVar, get_args, get_origin, overload

import msgspec

from .tools.base import ToolContext, ToolInputError, ToolOutput, format_validation_error, struct_schema
from .tools.declared import holds_paths, is_path_class

F = TypeVar("F", bound=Callable[..., Any])

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What both providers accept as a tool name."""
_ATTRIBUTE = "__ram_tool__"


class ToolOptions(msgspec.Struct, frozen=True):
    """What `@tool(...)` says about a function."""

    name: str | None = None
    """The name the model calls it by; None: the function's name."""
    description: str | None = None
    """What the model is told about it; None: the docstring."""
    read_only: bool = False
    """True: it cannot change anything, so it needs no permission to run (as Read and Grep)."""
    path_params: tuple[str, ...] = ()
    """Parameters that hold a path (or a list of paths) although their annotation does not say so (`str`)."""


LEGACY_PATH_NAMES = frozenset({"file_path", "path", "notebook_path"})
"""Parameter names that count as paths whatever their type, as the permission policy took them before tools said."""


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    path_params: Iterable[str] = (),
) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    path_params: Iterable[str] = (),
) -> F | Callable[[F], F]:
    """Mark a function's tool options (`@tool(read_only=True)`, `@tool(path_params=["where"])` for parameters
    that hold paths without a `Path` annotation); the function itself is unchanged."""
    params = (path_params,) if isinstance(path_params, str) else tuple(path_params)

    def mark(function: F) -> F:
        setattr(function, _ATTRIBUTE, ToolOptions(name, description, read_only, params))
        return function

    return mark(fn) if fn is not None else mark


class FunctionTool:
    """A `Tool` that calls a Python function. `ValueError` when the function cannot be one (its name, a
    positional-only parameter, an annotation that does not resolve or has no JSON Schema)."""

    concurrency_safe = False  # the caller's functions need not be thread-safe

    def __init__(self, fn: Callable[..., Any], options: ToolOptions | None = None) -> None:
        base = fn.func if isinstance(fn, functools.partial) else fn  # a partial's own name and doc say nothing
        options = options or getattr(fn, _ATTRIBUTE, None) or getattr(base, _ATTRIBUTE, None) or ToolOptions()
        self.fn = fn
        self.name: str = options.name or str(getattr(base, "__name__", ""))
        if not _NAME.match(self.name):
            raise ValueError(
                f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-' (name it with @tool(name=...))"
            )
        summary, param_docs, returns = _split_docstring(inspect.getdoc(base) or "")
        if returns:
            summary = f"{summary}\n\nReturns: {returns}".strip()
        self.description: str = options.description or summary or f"Call the Python function {self.name}."
        self.read_only: bool = options.read_only
        self._args_model = _args_struct(fn, self.name, param_docs)
        self.path_fields: tuple[str, ...] = _path_fields(self._args_model, self.name, options.path_params)
        """The parameters holding paths, for the permission policy (`tools.base.path_arguments`)."""
        try:
            self._schema = struct_schema(self._args_model, _schema_hook)
        except (TypeError, ValueError) as exc:
            problem = str(exc).strip().splitlines()[-1]
            raise ValueError(f"{self.name}: its parameters have no JSON Schema ({problem})") from None
        self._is_async = is_async_callable(fn)

    def input_schema(self) -> Mapping[str, Any]:
        return self._schema

    def validate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        try:
            args = msgspec.convert(dict(raw), self._args_model, strict=False, dec_hook=_dec_hook)
        except msgspec.ValidationError as exc:
            raise ToolInputError(format_validation_error(str(exc))) from None
        return {field: getattr(args, field) for field in args.__struct_fields__}

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            if self._is_async:
                value = await self.fn(**args)
            else:
                value = await asyncio.to_thread(self.fn, **args)
                if inspect.isawaitable(value):  # a plain callable that hands back a coroutine
                    value = await value
        except Exception as exc:  # the function's failure is the model's to read
            return ToolOutput(f"{self.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        return ToolOutput(_as_text(value))

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in raw.items())
        return shown if len(shown) <= 80 else shown[:79] + "…"


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """True for an async function, a partial of one, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def _args_struct(fn: Callable[..., Any], name: str, param_docs: Mapping[str, str]) -> type[msgspec.Struct]:
    """A Struct with one field per parameter of `fn` (keyword-callable ones; *args/**kwargs cannot be sent)."""
    try:
        signature = inspect.signature(fn, eval_str=True)  # resolves `from __future__ import annotations`
    except (NameError, SyntaxError, TypeError, ValueError) as exc:  # an annotation that does not resolve
        raise ValueError(f"cannot read the signature of {name}: {exc}") from None
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ValueError(f"{name}: positional-only parameter {param.name!r} cannot be passed by name")
        hint = Any if param.annotation is inspect.Parameter.empty else param.annotation
        annotation = _described(hint, param_docs.get(param.name, ""))
        if param.default is inspect.Parameter.empty:
            fields.append((param.name, annotation))
        else:
            fields.append((param.name, annotation, param.default))
    try:
        return msgspec.defstruct(name, fields, kw_only=True)
    except TypeError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _path_fields(model: type[msgspec.Struct], name: str, marked: tuple[str, ...]) -> tuple[str, ...]:
    """The fields of `model` that hold paths: annotated as paths, named in `marked`, or with a legacy path name."""
    hints = {field.name: field.type for field in msgspec.structs.fields(model)}
    if unknown := [p for p in marked if p not in hints]:
        raise ValueError(f"{name}: path_params names {', '.join(map(repr, unknown))}, not a parameter of it")
    return tuple(f for f, hint in hints.items() if f in marked or f in LEGACY_PATH_NAMES or holds_paths(hint))


def _described(annotation: Any, doc: str) -> Any:
    """`Annotated[T, "text"]` and docstring text become `msgspec.Meta(description=...)` (the Annotated text wins)."""
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        texts = [e for e in extras if isinstance(e, str)]
        kept = [e for e in extras if not isinstance(e, str)]
        doc = " ".join(texts) or doc
        if doc and not any(isinstance(e, msgspec.Meta) and e.description for e in kept):
            kept.append(msgspec.Meta(description=doc))
        return Annotated[(base, *kept)] if kept else base
    if doc:
        return Annotated[annotation, msgspec.Meta(description=doc)]
    return annotation


def _schema_hook(kind: type) -> dict[str, Any]:
    if is_path_class(kind):
        return {"type": "string"}
    raise NotImplementedError


def _dec_hook(kind: type, value: Any) -> Any:
    if is_path_class(kind):
        if isinstance(value, str):
            concrete = get_origin(kind) or kind
            return concrete(value) if issubclass(concrete, PurePath) else Path(value)  # os.PathLike: a Path
        raise TypeError(f"expected a path string, got {type(value).__name__}")
    raise NotImplementedError


# ---- docstrings ----

_ARG_SECTIONS = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "other parameters"}
)
_RETURN_SECTIONS = frozenset({"returns", "return", "yields", "yield"})
_OTHER_SECTIONS = frozenset(
    {"raises", "raise", "examples", "example", "notes", "note", "attributes", "see also", "warning", "warnings",
     "todo", "references", "methods"}
)  # fmt: skip
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
"""`name: text` or `name (type): text`."""
_NUMPY_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?::.*)?$")
"""`name : type` (its text is on the lines below, indented)."""
_REST_FIELD = re.compile(r"^:(\w+)((?:\s+[^:]+)?):\s*(.*)$")
"""`:param int x: text`, `:returns: text`, `:raises ValueError: text`, `:type x: int`."""


def _heading(lines: list[str], index: int) -> tuple[str, bool] | None:
    """The section starting at `lines[index]`, and whether it is NumPy style (underlined): `Args:` or
    `Parameters` followed by `----------`."""
    line = lines[index]
    if line[:1].isspace():
        return None
    title = line.strip().lower()
    underlined = index + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[index + 1].strip()) is not None
    if underlined:
        title = title.rstrip(":")
    elif title.endswith(":"):
        title = title[:-1].strip()
    else:
        return None
    if title in _ARG_SECTIONS:
        return "args", underlined
    if title in _RETURN_SECTIONS:
        return "returns", underlined
    if title in _OTHER_SECTIONS:
        return "other", underlined
    return None


def _split_docstring(doc: str) -> tuple[str, dict[str, str], str]:
    """The description (the docstring up to its first section), the text for each parameter, and what it
    returns; Google, reST and NumPy styles."""
    lines = doc.splitlines()
    summary: list[str] = []
    returns: list[str] = []
    params: dict[str, str] = {}
    section, numpy, current, indent = "", False, "", -1
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        index += 1
        if (heading := _heading(lines, index - 1)) is not None:
            (section, numpy), current, indent = heading, "", -1
            index += 1 if numpy else 0
            continue
        if field := _REST_FIELD.match(stripped):
            kind, spec, text = field.groups()
            section, current = "rest", ""
            if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and spec.split():
                current = spec.split()[-1]
                params[current] = text.strip()
            elif kind in ("returns", "return"):
                section = "returns"
                returns.append(text.strip())
            continue
        if not section:
            summary.append(line)
            continue
        if not stripped:
            continue
        depth = len(line) - len(line.lstrip())
        if section == "returns":
            returns.append(stripped)
        elif section == "args":
            match = (_NUMPY_PARAM if numpy else _GOOGLE_PARAM).match(stripped)
            if match and (indent < 0 or depth <= indent):  # a parameter's first line
                indent, current = depth, match.group(1).lstrip("*")
                params[current] = "" if numpy else match.group(2).strip()
            elif current:  # its text goes on (deeper indented)
                params[current] = f"{params[current]} {stripped}".strip()
        elif section == "rest" and current:
            params[current] = f"{params[current]} {stripped}".strip()
    return "\n".join(summary).strip(), params, " ".join(r for r in returns if r)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "(no output)"
    try:
        return msgspec.json.encode(value, enc_hook=str).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)
