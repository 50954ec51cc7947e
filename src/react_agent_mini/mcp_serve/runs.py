"""One turn on a `SessionHost`, as an MCP tool's result: the answer's text, the session id to continue with, how
the turn ended and which calls were refused. A line starting with `/` is resolved as everywhere (`kit.commands`).
"""

from __future__ import annotations

from typing import Any

from ..events import AssistantTurn, Terminal
from ..host import Remark, SessionHost
from ..kit.commands import Done, Send, Unknown, resolve
from ..kit.tally import denial, denied_call
from ..messages import Message


async def run_turn(host: SessionHost, prompt: str, say: Any) -> dict[str, Any]:
    """Run `prompt` on `host`; the tool's structured result. `say(line)`: where remarks go (stderr)."""
    text, scope = prompt, None
    context: tuple[Message, ...] = ()
    outcome = await resolve(host, prompt)
    if isinstance(outcome, Done):
        return _result(host, outcome.text, Terminal("error" if outcome.error else "completed", 0, outcome.text), [])
    if isinstance(outcome, Send):
        text, context, scope = outcome.text, outcome.context, outcome.scope
    answer, denials = "", []
    terminal = Terminal("error", 0, "the turn ended without a result")
    try:
        async for event in host.turn(text, inject=context, scope=scope, files=isinstance(outcome, Unknown)):
            if isinstance(event, Remark):
                say(event.text)
            elif isinstance(event, AssistantTurn):
                answer = event.message.text
            elif isinstance(event, Terminal):
                terminal = event
            elif (use := denied_call(event)) is not None:
                denials.append(denial(use))
    except Exception as exc:  # a bug ends this turn with an error result, never the server
        host.repair()
        terminal = Terminal("error", terminal.turns, f"internal error: {type(exc).__name__}: {exc}")
    return _result(host, answer, terminal, denials)


def _result(host: SessionHost, answer: str, terminal: Terminal, denials: list[dict[str, object]]) -> dict[str, Any]:
    is_error = terminal.reason != "completed"
    return {
        "session_id": host.session_id,
        "result": answer if not is_error or not terminal.error else terminal.error,
        "is_error": is_error,
        "stop_reason": terminal.reason,
        "num_turns": terminal.turns,
        "permission_denials": denials,
    }
