"""A Stop hook at the turn limit, end to end: `ram` as a user runs it, a user-level command hook (no trust needed),
the loopback fake LLM as the model. A hook that blocks the stop asks for more work, which the last model call
cannot do: the run stops at `--max-turns` (exit 3), not as completed. One that lets it stop still runs there."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..test_cli import assert_no_traceback, env_for, ram


def user_hooks(hooks: dict[str, object]) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def stop_hook(command: str) -> dict[str, object]:
    return {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]}


def test_a_stop_hook_that_always_blocks_ends_at_the_turn_limit(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    user_hooks(stop_hook("""echo '{"decision": "block", "reason": "the tests still fail"}'"""))
    fake_llm.enqueue(Reply(text="Done, I think."), Reply(text="Done now."))
    proc = ram("--max-turns", "2", "fix the tests", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert "stopped: reached the limit of 2 model calls (--max-turns)" in proc.stderr
    assert len(fake_llm.requests) == 2
    assert fake_llm.requests[1].body["messages"][-1]["content"] == "Stop hook feedback: the tests still fail"


def test_a_stop_hook_that_lets_it_stop_runs_at_the_turn_limit_too(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    ran = tmp_path / "stop-hook-ran"
    user_hooks(stop_hook(f"cat > {ran}"))
    fake_llm.enqueue(Reply(text="All done."))
    proc = ram("--max-turns", "1", "say done", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "All done.\n"
    assert json.loads(ran.read_text())["hook_event_name"] == "Stop"
