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
import signal
import socket
import subprocess
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from ..fakes.fake_llm import FakeLLMServer, HttpError, Reply, Script, ToolCall
from ..fakes.fake_llm import Usage as FakeUsage
from ..test_cli import ECHO
from .replay import error_lines, ram_env, run_ram

ROOT = Path(__file__).parents[2]
LITELLM = ROOT / ".litellm" / "bin" / "litellm"
MODEL = "claude-via-litellm"
UPSTREAM_MODEL = "claude-sonnet-4-5"


class Proxy:
    """The proxy process in front of `fake`, started (and, should it die, started again) by `start`."""

    def __init__(self, home: Path, config: Path, key: str, fake: FakeLLMServer) -> None:
        self.home, self.config, self.key, self.fake = home, config, key, fake
        self.url, self.log, self.deaths = "", home / "proxy.log", list[str]()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        port = free_port()
        closed = "http://127.0.0.1:9"  # the discard port: refused at once
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LITELLM_"))},
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HTTP_PROXY": closed,
            "HTTPS_PROXY": closed,
            "ALL_PROXY": closed,
            "NO_PROXY": "127.0.0.1,localhost",
            "HOME": str(self.home),
            "PYTHONFAULTHANDLER": "1",  # a crash in its native code leaves a stack in the log
        }
        with self.log.open("ab") as out:
            self.process = process = subprocess.Popen(
                [str(LITELLM), "--config", str(self.config), "--host", "127.0.0.1", "--port", str(port)],
                cwd=self.home,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a server we manage, not a member of pytest's process group
            )
        self.url = f"http://127.0.0.1:{port}"
        # No time limit: it starts in ~8 s on an idle machine, longer under load; it either answers or exits.
        while process.poll() is None:
            try:
                if httpx.get(self.url + "/health/liveliness", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        pytest.fail(self.gone())

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def gone(self) -> str:
        """'' while the proxy runs; else how it ended (its exit code or signal) and the end of its log."""
        code = None if self.process is None else self.process.poll()
        if code is None:
            return ""
        how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
        return f"the LiteLLM proxy {how}:\n{self.log.read_text(errors='replace')[-3000:]}"

    def env(self, **extra: str) -> dict[str, str]:
        """ram pointed at the proxy, with its master key; no retries (the proxy's answer is what is checked)."""
        return ram_env("openai", self.url + "/v1", MODEL, OPENAI_API_KEY=self.key, RAM_MAX_RETRIES="0", **extra)

    def run(
        self, replies: Sequence[Script], *args: str, task: str, cwd: Path, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """ram -p ARGS through the proxy, the fake answering with `replies`. The proxy is a third party's server:
        should it die under ram's run (seen once in CI: gone silently mid-test, not reproduced since), how it died
        is recorded (and reported at the module's end), it is started again and the run repeated once, so what is
        checked is ram's side. A second death fails the test."""
        for attempt in range(2):
            if gone := self.gone():
                if attempt or len(self.deaths) >= 2:
                    pytest.fail(gone)
                self.deaths.append(gone)
                self.start()
            self.fake.requests.clear()
            self.fake.drop_queue()  # what a dead proxy's run left unasked
            self.fake.enqueue(*replies)
            proc = run_ram(*args, env=self.env(**env), cwd=cwd, task=task)
            if not self.gone():
                return proc
        pytest.fail(self.gone())


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
        running = Proxy(home, config, key, fake)
        running.start()
        try:
            yield running
        finally:
            running.stop()
            for death in running.deaths:
                warnings.warn(f"started the proxy again after it died: {death}", stacklevel=1)


@pytest.fixture
def fake(proxy: Proxy) -> Iterator[FakeLLMServer]:
    """The fake behind the proxy, its records cleared after each test."""
    yield proxy.fake
    proxy.fake.requests.clear()


def test_a_plain_answer(proxy: Proxy, fake: FakeLLMServer, tmp_path: Path) -> None:
    reply = Reply(text="Hello through LiteLLM.", usage=FakeUsage(input_tokens=11, output_tokens=5))
    proc = proxy.run([reply], "--output-format", "json", cwd=tmp_path, task="Say hello")
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
    replies = [
        Reply(text="Let me echo it.", tool_calls=[ToolCall("Echo", {"message": "hi there"}, id="toolu_litellm_1")]),
        Reply(text="It said: hi there."),
    ]
    proc = proxy.run(replies, *ECHO, cwd=tmp_path, task="Echo hi there")
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
    reply = Reply(text=text, chunk_size=5, usage=FakeUsage(input_tokens=1234, output_tokens=56))
    args = ("--output-format", "stream-json", "--include-partial-messages")
    proc = proxy.run([reply], *args, cwd=tmp_path, task="Stream something")
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
    error = HttpError(400, "prompt is too long: 210000 tokens > 200000 maximum")
    proc = proxy.run([error], cwd=tmp_path, task="Too long", AUTOCOMPACT="0")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = error_lines(proc.stderr)
    assert "prompt is too long" in line
    assert len(fake.requests) >= 1 and proc.stdout == ""
