"""ram as a Python library: a tool of your own, a say in what runs, and the answer as it streams.

OPENAI_API_KEY=sk-... python examples/library_agent.py "How many words are in README.md?"
"""

import asyncio
import sys
from typing import Any

from react_agent_mini import Agent, Allow, Deny, Result, TextDelta, tool


@tool(read_only=True)  # it changes nothing, so it runs without asking
def word_count(path: str) -> int:
    """Count the words in a text file.

    Args:
        path: The file, relative to the project root.
    """
    with open(path, encoding="utf-8") as file:
        return len(file.read().split())


def can_use_tool(tool_name: str, tool_input: dict[str, Any]) -> Allow | Deny:
    """Asked before anything that changes files or runs commands (in a worker thread: input() is fine)."""
    answer = input(f"\nAllow {tool_name} {tool_input}? [y/N] ")
    return Allow() if answer.strip().lower() == "y" else Deny("The user said no; suggest what to do instead.")


async def main(task: str) -> None:
    async with Agent(cwd=".", tools=[word_count], can_use_tool=can_use_tool) as agent:
        async for event in agent.stream(task):
            if isinstance(event, TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, Result):
                print(f"\n[{event.stop_reason} · {event.num_turns} model calls · session {event.session_id}]")


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "How many words are in README.md?"))
