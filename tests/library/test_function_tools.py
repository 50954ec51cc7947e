"""Python functions as tools: the schema their annotations and docstrings give, validation, how they run, and —
through the fake LLM — what the model is told about them and reads back."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest

from react_agent_mini import Agent, FunctionTool, tool
from react_agent_mini.tools.base import ToolContext, ToolInputError

from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall

# ---- schema and description ----


def forecast(
    city: str,
    days: Annotated[int, "how many days ahead"] = 1,
    unit: Literal["c", "f"] = "c",
    tags: list[str] | None = None,
) -> str:
    """Get the weather forecast.

    Mention the unit in the answer.

    Args:
        city: The city,
            for example Paris.
        days: (the Annotated text wins over this)
        unit: Temperature unit. Note: Celsius
            unless asked.

    Returns:
        The forecast as text.

    Raises:
        KeyError: unknown city.
    """
    return f"{city}: sunny for {days} days ({unit}, {tags})"


FORECAST_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city, for example Paris."},
        "days": {"type": "integer", "description": "how many days ahead", "default": 1},
        "unit": {
            "type": "string",
            "enum": ["c", "f"],
            "description": "Temperature unit. Note: Celsius unless asked.",
            "default": "c",
        },
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
    },
    "required": ["city"],
}


def test_schema_and_description_come_from_annotations_and_a_google_docstring() -> None:
    made = FunctionTool(forecast)
    assert made.name == "forecast"
    assert made.description == (
        "Get the weather forecast.\n\nMention the unit in the answer.\n\nReturns: The forecast as text."
    )
    assert made.input_schema() == FORECAST_SCHEMA
    assert made.read_only is False


def rest_style(path: str, limit: int = 10) -> None:
    """Read the head of a file.

    :param str path: Where the file is,
        relative to the project.
    :type path: str
    :param limit: Lines to read.
    :returns: nothing useful.
    :raises OSError: when it cannot be read.
    """


def numpy_style(path: str, limit: int = 10) -> None:
    """Read the head of a file.

    Parameters
    ----------
    path : str
        Where the file is,
        relative to the project.
    limit : int, optional
        Lines to read.

    Returns
    -------
    None
    """


@pytest.mark.parametrize("fn", [rest_style, numpy_style], ids=["reST", "NumPy"])
def test_rest_and_numpy_docstrings_describe_the_parameters(fn: Any) -> None:
    made = FunctionTool(fn)
    assert made.description.startswith("Read the head of a file.")
    properties = made.input_schema()["properties"]
    assert properties["path"]["description"] == "Where the file is, relative to the project."
    assert properties["limit"]["description"] == "Lines to read."
    assert "OSError" not in made.description and ":type" not in str(properties)


def test_the_decorator_names_describes_and_marks_read_only() -> None:
    @tool(name="lookup-key", description="Find a key.", read_only=True)
    def find(key: str) -> str:
        """Ignored: the decorator's description wins."""
        return key

    @tool
    def plain(x: int) -> int:
        return x

    made = FunctionTool(find)
    assert (made.name, made.description, made.read_only) == ("lookup-key", "Find a key.", True)
    assert find("k") == "k"  # the function itself is unchanged
    assert FunctionTool(plain).description == "Call the Python function plain."
    assert FunctionTool(plain).read_only is False


def test_validation_converts_leniently_and_names_the_field() -> None:
    made = FunctionTool(forecast)
    assert made.validate({"city": "Oslo", "days": "3", "extra": 1}) == {
        "city": "Oslo",
        "days": 3,
        "unit": "c",
        "tags": None,
    }
    with pytest.raises(ToolInputError, match=r"^city: field required$"):
        made.validate({"days": 2})
    with pytest.raises(ToolInputError, match=r"^days: expected `int`, got `str`$"):
        made.validate({"city": "Oslo", "days": "many"})
    with pytest.raises(ToolInputError, match=r"^unit: "):
        made.validate({"city": "Oslo", "unit": "kelvin"})


def test_a_path_parameter_is_a_string_for_the_model_and_a_path_for_the_function() -> None:
    def size(file: Path) -> int:
        return len(file.parts)

    made = FunctionTool(size)
    assert made.input_schema()["properties"]["file"] == {"type": "string"}
    assert made.validate({"file": "a/b.txt"}) == {"file": Path("a/b.txt")}
    with pytest.raises(ToolInputError, match="file: expected a path string, got int"):
        made.validate({"file": 3})


class Opaque:
    pass


def positional_only(x: int, /) -> int:
    return x


def opaque_parameter(thing: Opaque) -> None:
    pass


def unresolvable(thing: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
    pass


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda x: x, "tool name '<lambda>' must be 1-64 letters"),
        (positional_only, "positional_only: positional-only parameter 'x' cannot be passed by name"),
        (opaque_parameter, "opaque_parameter: its parameters have no JSON Schema (type <class"),
        (unresolvable, "cannot read the signature of unresolvable: name 'NotDefinedAnywhere' is not defined"),
    ],
    ids=["lambda", "positional-only", "unsupported type", "unresolved annotation"],
)
def test_functions_that_cannot_be_tools_are_refused_with_the_reason(fn: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        FunctionTool(fn)


async def test_sync_functions_run_in_a_worker_thread_and_async_ones_in_the_loop(tmp_path: Path) -> None:
    threads: list[int] = []

    def sync_fn() -> str:
        threads.append(threading.get_ident())
        return "sync"

    async def async_fn() -> str:
        threads.append(threading.get_ident())
        return "async"

    ctx = ToolContext(cwd=tmp_path)
    assert (await FunctionTool(sync_fn).call({}, ctx)).content == "sync"
    assert (await FunctionTool(async_fn).call({}, ctx)).content == "async"
    assert threads[0] != threading.get_ident()
    assert threads[1] == threading.get_ident()


async def test_what_a_function_returns_or_raises_is_what_the_model_reads(tmp_path: Path) -> None:
    def as_json() -> dict[str, Any]:
        return {"n": 2, "where": Path("a")}

    def nothing() -> None:
        return None

    def broken() -> str:
        raise KeyError("no such city")

    ctx = ToolContext(cwd=tmp_path)
    assert (await FunctionTool(as_json).call({}, ctx)).content == '{"n":2,"where":"a"}'
    assert (await FunctionTool(nothing).call({}, ctx)).content == "(no output)"
    failed = await FunctionTool(broken).call({}, ctx)
    assert failed.is_error
    assert failed.content == "broken failed: KeyError: 'no such city'"


async def test_callable_objects_and_partials_are_tools_too(tmp_path: Path) -> None:
    class Greeter:
        async def __call__(self, name: str) -> str:
            return f"hello {name}"

    def scaled(x: int, factor: int) -> int:
        """Scale a number."""
        return x * factor

    with pytest.raises(ValueError, match=r"^tool name '' must be .* \(name it with @tool\(name=\.\.\.\)\)$"):
        FunctionTool(Greeter())  # an instance has no name of its own
    named = tool(name="greet")(Greeter())
    ctx = ToolContext(cwd=tmp_path)
    assert (await FunctionTool(named).call({"name": "Ada"}, ctx)).content == "hello Ada"
    triple = FunctionTool(tool(name="triple")(functools.partial(scaled, factor=3)))
    assert triple.description == "Scale a number."
    assert (await triple.call(triple.validate({"x": 2}), ctx)).content == "6"


# ---- through the model ----


def tool_messages(request: RecordedRequest) -> dict[str, str]:
    """The tool results of an OpenAI-wire request, by call id."""
    return {m["tool_call_id"]: m["content"] for m in request.body["messages"] if m["role"] == "tool"}


def sent_tools(request: RecordedRequest) -> dict[str, Mapping[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request.body["tools"]}


async def test_the_model_calls_a_sync_and_an_async_function_and_reads_their_results(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("one two three four\n")
    seen: list[str] = []

    @tool(read_only=True)
    def word_count(path: str) -> int:
        """Count the words in a file.

        Args:
            path: The file, relative to the project.
        """
        seen.append(path)
        return len((tmp_path / path).read_text().split())

    async def remember(fact: str) -> str:
        """Remember a fact for later."""
        seen.append(fact)
        return f"remembered: {fact}"

    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("word_count", {"path": "notes.txt"}, id="c1"),
                ToolCall("remember", {"fact": "the sky is blue"}, id="c2"),
            ]
        ),
        Reply(text="4 words, and noted."),
    )
    agent = Agent(
        cwd=tmp_path,
        base_url=fake_llm.openai_base_url,
        api_key="test-key",
        tools=[word_count, remember],
        allowed_tools=["remember"],  # not read-only: it needs an allow rule (or a can_use_tool callback)
    )
    async with agent:
        result = await agent.run("count the words in notes.txt and remember that the sky is blue")
    assert result.stop_reason == "completed" and result.text == "4 words, and noted."
    assert seen == ["notes.txt", "the sky is blue"]
    assert tool_messages(fake_llm.requests[1]) == {"c1": "4", "c2": "remembered: the sky is blue"}
    described = sent_tools(fake_llm.requests[0])
    assert described["word_count"] == {
        "name": "word_count",
        "description": "Count the words in a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The file, relative to the project."}},
            "required": ["path"],
        },
    }
    assert described["remember"]["description"] == "Remember a fact for later."
    assert {"Read", "Bash", "Edit"} <= described.keys()  # the built-in tools stay


async def test_the_schema_reaches_the_anthropic_wire_too(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="ok"))
    async with Agent(
        cwd=tmp_path, provider="anthropic", base_url=fake_llm.anthropic_base_url, api_key="test-key", tools=[forecast]
    ) as agent:
        await agent.run("weather?")
    request = fake_llm.requests[0]
    assert request.path == "/v1/messages"
    sent = {t["name"]: t for t in request.body["tools"]}
    assert sent["forecast"]["input_schema"] == FORECAST_SCHEMA


async def test_invalid_arguments_give_an_error_result_the_model_reads(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []

    @tool(read_only=True)
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        calls.append((a, b))
        return a + b

    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("add", {"a": "many", "b": 1}, id="bad"), ToolCall("add", {"a": 1}, id="short")]),
        Reply(tool_calls=[ToolCall("add", {"a": "2", "b": 3}, id="good")]),
        Reply(text="5"),
    )
    async with Agent(cwd=tmp_path, base_url=fake_llm.openai_base_url, api_key="test-key", tools=[add]) as agent:
        result = await agent.run("add")
    assert tool_messages(fake_llm.requests[1]) == {
        "bad": "Error: Invalid input for add: a: expected `int`, got `str`",
        "short": "Error: Invalid input for add: b: field required",
    }
    assert tool_messages(fake_llm.requests[2])["good"] == "5"
    assert calls == [(2, 3)]  # never called with arguments that do not fit
    assert result.text == "5"


async def test_a_function_that_raises_gives_the_model_an_error_result(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    @tool(read_only=True)
    async def lookup(key: str) -> str:
        raise LookupError(f"no entry for {key!r}")

    fake_llm.enqueue(Reply(tool_calls=[ToolCall("lookup", {"key": "k"}, id="c1")]), Reply(text="not found"))
    async with Agent(cwd=tmp_path, base_url=fake_llm.openai_base_url, api_key="test-key", tools=[lookup]) as agent:
        result = await agent.run("look up k")
    assert tool_messages(fake_llm.requests[1]) == {"c1": "Error: lookup failed: LookupError: no entry for 'k'"}
    assert result.stop_reason == "completed"
