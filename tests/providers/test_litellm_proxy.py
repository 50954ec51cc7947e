"""ram through a real OpenAI-compatible server: the LiteLLM proxy, installed from PyPI, in front of the fake model.

    ram ──OpenAI Chat Completions──▶ LiteLLM proxy ──Anthropic Messages──▶ tests/fakes/fake_llm.py

LiteLLM's own code translates ram's requests to Anthropic's wire and the fake's Anthropic stream back to OpenAI
chunks, so what ram parses here was written by LiteLLM's streaming code, not by us. `scripts/setup --dev` installs
the pinned proxy into `.litellm/` (a venv of its own); when it is missing the tests fail, saying so. The proxy runs
on 127.0.0.1 on a free port, with its model-price map read from its package (no download) and every proxy
variable pointed at a closed loopback port, so nothing it tries reaches beyond this machine.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..fakes.fake_llm import FakeLLMServer, HttpError, Reply, ToolCall
from ..fakes.fake_llm import Usage as FakeUsage
from ..test_cli import ECHO
from .replay import error_lines, ram_env, run_ram

ROOT = Path(__file__).parents[2]
LITELLM = ROOT / ".litellm" / "bin" / "litellm"
MODEL = "claude-via-litellm"
UPSTREAM_MODEL = "claude-sonnet-4-5"


class Proxy:
    def __init__(self, url: str, key: str, fake: FakeLLMServer, log: Path) -> None:
        self.url, self.key, self.fake, self.log = url, key, fake, log

    def env(self, **extra: str) -> dict[str, str]:
        """ram pointed at the proxy, with its master key; no retries (the proxy's answer is what is checked)."""
        return ram_env("openai", self.url + "/v1", MODEL, OPENAI_API_KEY=self.key, RAM_MAX_RETRIES="0", **extra)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    if not LITELLM.exists():
        pytest.fail(f"the LiteLLM proxy is not installed ({LITELLM} is missing): run scripts/setup --dev")
    home = tmp_path_factory.mktemp("litellm")
    key = "sk-ram-" + secrets.token_hex(16)
    with FakeLLMServer(api_key="test-key") as fake:
        config = home / "config.yaml"
        config.write_text(
            json.dumps(  # JSON is YAML
                {
                    "model_list": [
                        {
                            "model_name": MODEL,
                            "litellm_params": {
                                "model": f"anthropic/{UPSTREAM_MODEL}",
                                "api_base": fake.anthropic_base_url,
                                "api_key": "test-key",
                            },
                        }
                    ],
                    "general_settings": {"master_key": key},
                    "litellm_settings": {"drop_params": True, "num_retries": 0},
                }
            )
        )
        port = free_port()
        closed = "http://127.0.0.1:9"  # the discard port: refused at once
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LITELLM_"))},
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HTTP_PROXY": closed,
            "HTTPS_PROXY": closed,
            "ALL_PROXY": closed,
            "NO_PROXY": "127.0.0.1,localhost",
            "HOME": str(home),
        }
        log = home / "proxy.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                cwd=home,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            # No time limit: it starts in ~8 s on an idle machine, longer under load; it either answers or exits.
            while process.poll() is None:
                try:
                    if httpx.get(url + "/health/liveliness", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.25)
            if process.poll() is not None:
                pytest.fail(f"the LiteLLM proxy exited with {process.returncode}:\n{log.read_text()[-3000:]}")
            yield Proxy(url, key, fake, log)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def fake(proxy: Proxy) -> Iterator[FakeLLMServer]:
    """The fake behind the proxy, its queue and records cleared for each test."""
    proxy.fake.requests.clear()
    yield proxy.fake
    proxy.fake.requests.clear()


def test_a_plain_answer(proxy: Proxy, fake: FakeLLMServer, tmp_path: Path) -> None:
    fake.enqueue(Reply(text="Hello through LiteLLM.", usage=FakeUsage(input_tokens=11, output_tokens=5)))
    proc = run_ram("--output-format", "json", env=proxy.env(), cwd=tmp_path, task="Say hello")
    assert proc.returncode == 0, proc.stderr + proxy.log.read_text()[-2000:]
    result = json.loads(proc.stdout)
    assert result["result"] == "Hello through LiteLLM."
    assert result["usage"]["input_tokens"] == 11 and result["usage"]["output_tokens"] == 5
    [request] = fake.requests
    assert request.wire == "anthropic" and request.body["model"] == UPSTREAM_MODEL and request.body["stream"] is True
    assert "Say hello" in json.dumps(request.body["messages"][-1])


def test_a_tool_call_round_trip(proxy: Proxy, fake: FakeLLMServer, tmp_path: Path) -> None:
    """The fake calls ram's Echo tool on Anthropic's wire; LiteLLM turns it into OpenAI tool-call chunks; ram runs
    it and sends the result, which LiteLLM turns into a `tool_result` block for the same `tool_use` id."""
    fake.enqueue(
        Reply(text="Let me echo it.", tool_calls=[ToolCall("Echo", {"message": "hi there"}, id="toolu_litellm_1")]),
        Reply(text="It said: hi there."),
    )
    proc = run_ram(*ECHO, env=proxy.env(), cwd=tmp_path, task="Echo hi there")
    assert proc.returncode == 0, proc.stderr + proxy.log.read_text()[-2000:]
    assert proc.stdout.splitlines()[-1] == "It said: hi there."
    assert "[tool] Echo: hi there" in proc.stderr.splitlines()
    first, second = fake.requests
    assert [t["name"] for t in first.body["tools"]].count("Echo") == 1
    blocks = [b for m in second.body["messages"] for b in m["content"] if isinstance(m["content"], list)]
    [use] = [b for b in blocks if b["type"] == "tool_use"]
    [result] = [b for b in blocks if b["type"] == "tool_result"]
    assert use["name"] == "Echo" and use["input"] == {"message": "hi there"}
    assert result["tool_use_id"] == use["id"]
    content = result["content"]
    text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    assert text == "hi there"


def test_streaming_with_usage(proxy: Proxy, fake: FakeLLMServer, tmp_path: Path) -> None:
    """A long answer streamed in small pieces arrives piece by piece, whole, with the upstream's usage."""
    text = "Streaming through a real proxy works: " + " ".join(f"word{i}" for i in range(60)) + "."
    fake.enqueue(Reply(text=text, chunk_size=5, usage=FakeUsage(input_tokens=1234, output_tokens=56)))
    args = ("--output-format", "stream-json", "--include-partial-messages")
    proc = run_ram(*args, env=proxy.env(), cwd=tmp_path, task="Stream something")
    assert proc.returncode == 0, proc.stderr + proxy.log.read_text()[-2000:]
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    deltas = [
        e["event"]["delta"]["text"]
        for e in events
        if e["type"] == "stream_event" and e["event"].get("delta", {}).get("type") == "text_delta"
    ]
    assert len(deltas) > 5 and "".join(deltas) == text
    [result] = [e for e in events if e["type"] == "result"]
    assert result["result"] == text
    assert result["usage"]["input_tokens"] == 1234 and result["usage"]["output_tokens"] == 56


def test_an_upstream_error_is_passed_through(proxy: Proxy, fake: FakeLLMServer, tmp_path: Path) -> None:
    fake.enqueue(HttpError(400, "prompt is too long: 210000 tokens > 200000 maximum"))
    proc = run_ram(env=proxy.env(AUTOCOMPACT="0"), cwd=tmp_path, task="Too long")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = error_lines(proc.stderr)
    assert "prompt is too long" in line
    assert len(fake.requests) >= 1 and proc.stdout == ""
