"""The edges of a model call a user meets before any answer: a server that never sends its headers (or sends them
and then nothing), a model or an endpoint the server does not have, and a local server without a key.

End to end: `ram` as a subprocess against the loopback fake LLM server, which answers in each provider's shape.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Hang, HttpError, Reply, Stall
from ..test_cli import WIRES, assert_no_traceback, env_for, ram

GENEROUS = 300
"""Seconds a run may take before the test gives up: a hang guard only (each run here takes 1–35 s)."""


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    (line,) = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    return line


# ---- a first byte that never comes ----


@pytest.mark.parametrize("silence", ["no headers", "headers, then nothing"])
@pytest.mark.parametrize("wire", WIRES)
def test_a_server_silent_before_the_first_byte_is_given_up_and_retried(
    wire: str, silence: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    first = Hang() if silence == "no headers" else Stall(Reply(text="never sent"), events=0)
    fake_llm.enqueue(first, Reply(text="Answer."))
    env = env_for(wire, fake_llm, RAM_FIRST_BYTE_TIMEOUT="2")
    proc = ram("hi", env=env, cwd=tmp_path)  # the old limit was 300 s: the helper's 60 s guard ran out first
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Answer.\n"
    (retry,) = [line for line in proc.stderr.splitlines() if line.startswith("[retry]")]
    what = "no response headers" if silence == "no headers" else "headers but no answer"
    assert f"{wire} API sent {what} within 2s (RAM_FIRST_BYTE_TIMEOUT)" in retry, retry
    assert "attempt 2/5" in retry
    assert len(fake_llm.requests) == 2 and fake_llm.requests[1].body == fake_llm.requests[0].body


def test_the_last_attempt_without_a_first_byte_is_one_clear_error(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Hang(), Hang())
    env = env_for("openai", fake_llm, RAM_FIRST_BYTE_TIMEOUT="1", RAM_MAX_RETRIES="1")
    proc = ram("hi", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert error_line(proc).startswith("error: openai API sent no response headers within 1s (RAM_FIRST_BYTE_TIMEOUT)")


def test_headless_says_once_on_stderr_that_it_waits_for_a_silent_server(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """stderr a pipe (a log, a CI job): one `[waiting]` line after 15 s without a byte, before the limit (here 30 s)
    gives the attempt up; nothing was said before, for 300 s."""
    fake_llm.enqueue(Hang(), Reply(text="Answer."))
    env = env_for("openai", fake_llm, RAM_FIRST_BYTE_TIMEOUT="30")
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent_mini", "hi"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GENEROUS,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Answer.\n"
    lines = proc.stderr.splitlines()
    waiting = [i for i, line in enumerate(lines) if line.startswith("[waiting]")]
    retry = [i for i, line in enumerate(lines) if line.startswith("[retry]")]
    assert len(waiting) == 1 and len(retry) == 1 and waiting[0] < retry[0], proc.stderr
    assert "waiting for the model" in lines[waiting[0]]


def test_a_bad_first_byte_timeout_is_one_clear_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    proc = ram("hi", env=env_for("openai", fake_llm, RAM_FIRST_BYTE_TIMEOUT="0"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: RAM_FIRST_BYTE_TIMEOUT must be a number of seconds above 0, got '0'"
    ]
    assert fake_llm.requests == []


# ---- a model, or an endpoint, the server does not have: exit 2, as for other setup errors ----

NAMED_404 = {  # what each kind of server says for a model it does not have
    "openai": "The model `no-such-model` does not exist or you do not have access to it.",  # OpenAI
    "anthropic": "model: no-such-model",  # Anthropic (not_found_error)
    "ollama": 'model "no-such-model" not found, try pulling it first',  # Ollama's OpenAI-compatible endpoint
}


@pytest.mark.parametrize("shape", NAMED_404)
def test_a_model_the_server_does_not_have_exits_2_naming_model_and_endpoint(
    shape: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    wire = "anthropic" if shape == "anthropic" else "openai"
    fake_llm.enqueue(HttpError(404, NAMED_404[shape]))
    env = env_for(wire, fake_llm)
    base = env["ANTHROPIC_BASE_URL" if wire == "anthropic" else "OPENAI_BASE_URL"]
    proc = ram("--model", "no-such-model", "hi", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    line = error_line(proc)
    assert NAMED_404[shape] in line  # the server's own words stay
    variable = "ANTHROPIC_MODEL" if wire == "anthropic" else "OPENAI_MODEL"
    assert f'model "no-such-model" was not found at {base}: choose another with --model or {variable}' in line
    assert len(fake_llm.requests) == 1  # not retried


UNNAMED_404 = {
    "openai": ("Invalid URL (POST /v1/chat/completions)", "an OpenAI-compatible endpoint", "/chat/completions"),
    "anthropic": ("Not Found", "an Anthropic Messages endpoint", "/v1/messages"),
}


@pytest.mark.parametrize("wire", WIRES)
def test_a_404_that_does_not_name_the_model_names_both_causes_and_exits_2(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    detail, kind, path = UNNAMED_404[wire]
    fake_llm.enqueue(HttpError(404, detail))
    env = env_for(wire, fake_llm)
    base = env["ANTHROPIC_BASE_URL" if wire == "anthropic" else "OPENAI_BASE_URL"]
    proc = ram("--model", "my-model", "hi", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    line = error_line(proc)
    assert f"{wire} API error 404: {detail}" in line
    assert f'model "my-model" not found at {base}, or {base} is not {kind}: requests go to {base}{path}' in line
    variables = (
        ("ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL") if wire == "anthropic" else ("OPENAI_MODEL", "OPENAI_BASE_URL")
    )
    assert f"check --model or {variables[0]}, and {variables[1]}" in line
    assert len(fake_llm.requests) == 1


# ---- a loopback server needs no key, on both providers ----


@pytest.mark.parametrize("wire", WIRES)
def test_a_keyless_loopback_server_is_used_on_either_provider(wire: str, tmp_path: Path) -> None:
    with FakeLLMServer(api_key="local") as server:  # it checks the key ram sends in place of none
        server.enqueue(Reply(text="From the local server."))
        env = env_for(None, None)
        if wire == "openai":
            env["OPENAI_BASE_URL"] = server.openai_base_url
        else:
            env["ANTHROPIC_BASE_URL"] = server.anthropic_base_url
        proc = ram("hi", env=env, cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "From the local server.\n"
        assert [request.wire for request in server.requests] == [wire]
