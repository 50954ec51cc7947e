"""A small MCP server built with the SDK's MCPServer, with tools, resources and prompts, and switchable faults.

    python toolbox.py [--transport stdio|streamable-http|sse] [--port N] [--fault hang-init|exit-at-start|noise]
                      [--barrier DIR --barrier-count N]

With TOOLBOX_TRACE=<file> in its environment it appends a line per resource read and per `write_note` call, so
a test can tell what a client really asked for.

Tools cover every result shape and the failures a client must survive: `crash` exits mid-call, `crash_once`
exits on its first call only (read-only, so a client may repeat it), `stale_once` refuses its first call with
the 2026 HEADER_MISMATCH error (a client re-lists the tools and resends), `ask_name` asks for input first
(2026 input_required), `refuse` answers with error -32000, `orphan_exit` exits leaving a process that holds
its stdout, `sleep` outlasts a timeout, `big` returns a megabyte. `--fault hang-init` never answers
the handshake; `--fault exit-at-start` dies before it; `--fault noise` writes a line that is not JSON-RPC to
stdout first (and chatter to stderr). The barrier makes each server wait until N servers have started:
connecting them one after the other then can
never succeed, so a test can prove concurrency without timing anything.
"""

# no `from __future__ import annotations`: MCPServer evaluates the tools' annotations, which name local imports
import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

# a 1x1 transparent PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def wait_at_barrier(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / str(os.getpid())).touch()
    deadline = time.monotonic() + 30
    while len(list(directory.iterdir())) < count:
        if time.monotonic() > deadline:
            print(f"barrier: only {len(list(directory.iterdir()))} of {count} servers started", file=sys.stderr)
            sys.exit(2)
        time.sleep(0.02)


def trace(event: str) -> None:
    if path := os.environ.get("TOOLBOX_TRACE"):
        with open(path, "a", encoding="utf-8") as out:
            out.write(event + "\n")


def build() -> Any:
    from mcp.server.mcpserver import Context, Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

    server = MCPServer("toolbox", version="1.0")
    read_only = ToolAnnotations(read_only_hint=True)

    @server.tool(annotations=read_only, description="Echo the message back.")
    def echo(message: str) -> str:
        return f"echo: {message}"

    @server.tool(annotations=read_only, description="Add two integers.")
    def add(a: int, b: int) -> dict[str, int]:
        return {"sum": a + b}

    @server.tool(annotations=read_only, description="The Authorization header of this request (HTTP only).")
    def authorization(ctx: Context) -> str:
        return (ctx.headers or {}).get("authorization", "(none)")

    @server.tool(annotations=read_only, description="The server's process id.")
    def pid() -> str:
        return str(os.getpid())

    @server.tool(description="Exit the server process in the middle of this call.")
    def crash() -> str:
        sys.stdout.flush()
        os._exit(1)

    @server.tool(annotations=read_only, description="Exit on the first call (marker file absent), answer after.")
    def crash_once(marker: str) -> str:
        path = Path(marker)
        if not path.exists():
            path.write_text("crashed")
            os._exit(1)
        return f"survived in {os.getpid()}"

    @server.tool(annotations=read_only, description="Refuse the first call as made from a stale tool listing.")
    def stale_once(marker: str) -> str:
        from mcp.shared.exceptions import MCPError
        from mcp_types import HEADER_MISMATCH

        path = Path(marker)
        if not path.exists():
            path.write_text("refused")
            raise MCPError(HEADER_MISMATCH, "the tool listing used for this call is stale")
        return "answered after a fresh listing"

    @server.tool(annotations=read_only, description="Ask the user for their name first (2026-07-28 input_required).")
    def ask_name() -> InputRequiredResult:
        question = ElicitRequest(
            params=ElicitRequestFormParams(
                message="Your name?", requested_schema={"type": "object", "properties": {"name": {"type": "string"}}}
            )
        )
        return InputRequiredResult(input_requests={"name": question}, request_state="asked")

    @server.tool(annotations=read_only, description="Answer with a server-defined JSON-RPC error (-32000).")
    def refuse(message: str) -> str:
        from mcp.shared.exceptions import MCPError

        raise MCPError(-32000, message)

    @server.tool(description="Start a process that keeps our stdout open, then exit.")
    def orphan_exit() -> str:
        import subprocess

        subprocess.Popen(["sleep", "120"])  # inherits stdout, so the client never sees it close
        os._exit(1)

    @server.tool(annotations=read_only, description="Sleep, then answer.")
    def sleep(seconds: float) -> str:
        trace("sleep started")
        time.sleep(seconds)
        return "woke up"

    @server.tool(annotations=read_only, description="Return `size` characters.")
    def big(size: int) -> str:
        return "x" * size

    @server.tool(description="Always fails with the given message.")
    def fail(message: str) -> str:
        raise ToolError(message)

    @server.tool(annotations=read_only, description="A picture and a caption.", structured_output=False)
    def picture() -> list[object]:
        return ["see below", Image(data=PNG, format="png")]

    @server.tool(description="Pretend to write a note (not read-only).")
    def write_note(text: str) -> str:
        trace(f"write_note {text}")
        return f"noted: {text}"

    @server.tool(name="dotted.name", annotations=read_only, description="A name with a dot.")
    def dotted() -> str:
        return "dotted"

    @server.tool(name="dotted_name", annotations=read_only, description="Collides with dotted.name once cleaned.")
    def underscored() -> str:
        return "underscored"

    @server.tool(name="t" * 70, annotations=read_only, description="A name too long for some providers.")
    def long_name() -> str:
        return "long"

    @server.resource("notes://handbook", name="handbook", description="The travel handbook", mime_type="text/plain")
    def handbook() -> str:
        trace("read notes://handbook")
        return "Travel handbook: economy class first."

    @server.resource("notes://other", name="other", mime_type="text/plain")
    def other() -> str:
        trace("read notes://other")
        return "other-body"

    @server.resource("notes://logo", name="logo", mime_type="image/png")
    def logo() -> bytes:
        trace("read notes://logo")
        return PNG

    @server.resource("notes://dynamic/{item}", name="dynamic", mime_type="text/plain")
    def dynamic(item: str) -> str:
        return f"dynamic item {item}"

    @server.prompt(description="Plan a trip.")
    def plan_trip(city: str, days: str = "1") -> str:
        return f"Plan a trip to {city} for {days} day(s)."

    @server.prompt(description="Summarise a text.")
    def summarise(text: str) -> str:
        return f"Summarise: {text}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fault", default="")
    parser.add_argument("--barrier", default="")
    parser.add_argument("--barrier-count", type=int, default=0)
    opts = parser.parse_args()
    print(f"toolbox starting (pid {os.getpid()})", file=sys.stderr, flush=True)
    if opts.fault == "exit-at-start":
        print("fatal: the database password is wrong", file=sys.stderr, flush=True)
        sys.exit(3)
    if opts.fault == "hang-init":
        # read requests and never answer any of them
        for _ in sys.stdin:
            pass
        return
    if opts.fault == "noise":
        print("this line is not JSON-RPC", flush=True)
        print("warming up the flux capacitor", file=sys.stderr, flush=True)
    if opts.barrier:
        wait_at_barrier(Path(opts.barrier), opts.barrier_count)
    server = build()
    if opts.transport == "stdio":
        server.run()
    elif opts.transport == "sse":
        server.run("sse", host="127.0.0.1", port=opts.port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
