"""react-agent-mini: a small, fast, trustworthy terminal coding agent — and a Python library.

    from react_agent_mini import Agent, Allow, Deny, run

    async with Agent(cwd=".", tools=[my_function], can_use_tool=check) as agent:
        result = await agent.run("task")

Importing the package has no side effects and imports nothing heavy: the names below load their modules when first
used (`Agent` costs asyncio and the session's own modules, never the HTTP client or the MCP SDK until a session
needs them), and the CLI entry point (`react_agent_mini.cli:main`) decides what it loads.
"""

__version__ = "0.1.0"

TYPE_CHECKING = False  # not `typing`'s: importing typing would cost more than everything else here (≈7 ms)
if TYPE_CHECKING:
    from typing import Any

    from .config import ConfigError
    from .events import (
        AssistantTurn,
        Compacted,
        Followup,
        Notice,
        StreamRetry,
        TextDelta,
        ThinkingDelta,
        ToolFinished,
        ToolProgress,
        ToolResults,
        ToolStarted,
    )
    from .function_tools import FunctionTool, tool
    from .hooks.runner import HookOutput
    from .hooks.typed import AgentHooks
    from .library.agent import Agent, run
    from .library.options import AgentOptions
    from .library.permission import Allow, CanUseTool, Deny, PermissionAsked, PermissionDecided, PermissionResult
    from .library.results import AgentEvent, PermissionDenial, Result, StopReason
    from .messages import (
        ContentBlock,
        Message,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        Usage,
    )

_EXPORTS: dict[str, str] = {
    "Agent": "library.agent",
    "run": "library.agent",
    "AgentOptions": "library.options",
    "Allow": "library.permission",
    "Deny": "library.permission",
    "CanUseTool": "library.permission",
    "PermissionResult": "library.permission",
    "PermissionAsked": "library.permission",
    "PermissionDecided": "library.permission",
    "Result": "library.results",
    "AgentEvent": "library.results",
    "PermissionDenial": "library.results",
    "StopReason": "library.results",
    "ConfigError": "config",
    "AgentHooks": "hooks.typed",
    "HookOutput": "hooks.runner",
    "FunctionTool": "function_tools",
    "tool": "function_tools",
    "TextDelta": "events",
    "ThinkingDelta": "events",
    "StreamRetry": "events",
    "AssistantTurn": "events",
    "ToolStarted": "events",
    "ToolFinished": "events",
    "ToolProgress": "events",
    "ToolResults": "events",
    "Followup": "events",
    "Compacted": "events",
    "Notice": "events",
    "Message": "messages",
    "ContentBlock": "messages",
    "TextBlock": "messages",
    "ThinkingBlock": "messages",
    "ToolUseBlock": "messages",
    "ToolResultBlock": "messages",
    "Usage": "messages",
}
"""Public name → the module (under this package) that defines it."""

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentHooks",
    "AgentOptions",
    "Allow",
    "AssistantTurn",
    "CanUseTool",
    "Compacted",
    "ConfigError",
    "ContentBlock",
    "Deny",
    "Followup",
    "FunctionTool",
    "HookOutput",
    "Message",
    "Notice",
    "PermissionAsked",
    "PermissionDecided",
    "PermissionDenial",
    "PermissionResult",
    "Result",
    "StopReason",
    "StreamRetry",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolFinished",
    "ToolProgress",
    "ToolResultBlock",
    "ToolResults",
    "ToolStarted",
    "ToolUseBlock",
    "Usage",
    "__version__",
    "run",
    "tool",
]


def __getattr__(name: str) -> "Any":
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module_name}"), name)
    globals()[name] = value  # the next lookup does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
