"""A provider that says what it billed (OpenRouter's `usage.cost`): that figure is the cost everywhere — the json
result's `total_cost_usd`, `ram usage` — instead of a list price (which this model does not even have)."""

from __future__ import annotations

import json
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer
from ..providers.test_wire_recordings import recorded, result_of
from ..test_cli import env_for, ram
from .test_usage_cli import usage_json


def test_the_providers_own_cost_is_the_cost(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(recorded("openrouter_keepalive_comments.sse"))  # usage.cost 1.26e-05, model qwen3-235b
    proc = ram("--output-format", "json", "hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    result = result_of(proc)
    assert result["total_cost_usd"] == 1.26e-05
    session = json.loads(proc.stdout)["session_id"]
    rows = {row["session"]: row for row in usage_json(tmp_path, "--by", "session")["rows"]}
    assert rows[session]["cost_usd"] == 1.26e-05 and rows[session]["unpriced_calls"] == 0
