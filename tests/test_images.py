"""Images reach the model on both wires, through the CLI against the loopback fake model: a path typed in the task,
`@image`, and Read on an image file; a model without vision gets none and a clear line; over 5 MB is refused; a
saved session resumes with its images."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from .fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from .test_cli import env_for, ram

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))
JPEG = b"\xff\xd8\xff\xe0" + b"JFIF" + bytes(range(64))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def images_in(message: dict[str, Any]) -> list[str]:
    """The base64 data of every image a wire message carries (either wire's form)."""
    found: list[str] = []
    content = message.get("content")
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "image":
            found.append(part["source"]["data"])
        elif part.get("type") == "image_url":
            url = part["image_url"]["url"]
            assert url.startswith(("data:image/png;base64,", "data:image/jpeg;base64,"))
            found.append(url.split(",", 1)[1])
        elif part.get("type") == "tool_result":
            found += images_in(part)
    return found


@pytest.mark.parametrize(("wire", "model"), [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4o")])
def test_a_typed_path_and_an_at_image_reach_the_model_and_resume(
    fake_llm: FakeLLMServer, tmp_path: Path, wire: str, model: str
) -> None:
    (tmp_path / "shot one.png").write_bytes(PNG)
    (tmp_path / "pic.jpg").write_bytes(JPEG)
    env = env_for(wire, fake_llm, **{f"{wire.upper()}_MODEL": model})
    fake_llm.enqueue(Reply(text="a chart and a photo"), Reply(text="still there"))
    proc = ram("compare 'shot one.png' with @pic.jpg", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "attached shot one.png" in proc.stderr and "attached pic.jpg" in proc.stderr
    sent = [m for m in fake_llm.requests[0].body["messages"] if m["role"] == "user"]
    assert sorted(image for m in sent for image in images_in(m)) == sorted([b64(PNG), b64(JPEG)])
    if wire == "anthropic":
        parts = [p for m in sent for p in m["content"] if p["type"] == "image"]
        assert {p["source"]["media_type"] for p in parts} == {"image/png", "image/jpeg"}
        assert all(p["source"]["type"] == "base64" for p in parts)
    proc = ram("--continue", "and now?", env=env, cwd=tmp_path)  # the transcript kept them
    assert proc.returncode == 0, proc.stderr
    again = [m for m in fake_llm.requests[1].body["messages"] if m["role"] == "user"]
    assert sorted(image for m in again for image in images_in(m)) == sorted([b64(PNG), b64(JPEG)])


@pytest.mark.parametrize(("wire", "model"), [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4.1")])
def test_read_on_an_image_gives_the_model_the_image(
    fake_llm: FakeLLMServer, tmp_path: Path, wire: str, model: str
) -> None:
    (tmp_path / "diagram.png").write_bytes(PNG)
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "diagram.png"})]), Reply(text="a diagram"))
    env = env_for(wire, fake_llm, **{f"{wire.upper()}_MODEL": model})
    proc = ram("look at the diagram", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = fake_llm.requests[-1].body["messages"]
    if wire == "anthropic":
        result = messages[-1]["content"][0]
        assert result["type"] == "tool_result" and "[image: diagram.png · image/png" in result["content"][0]["text"]
        assert images_in(messages[-1]) == [b64(PNG)]
    else:  # the tool message takes text; the image follows in a user message
        tool = next(i for i, m in enumerate(messages) if m["role"] == "tool")
        assert "[image: diagram.png · image/png" in messages[tool]["content"]
        assert messages[tool + 1]["role"] == "user" and images_in(messages[tool + 1]) == [b64(PNG)]


def test_a_model_without_vision_gets_no_image_and_the_user_a_clear_line(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    fake_llm.enqueue(
        Reply(text="no eyes"), Reply(tool_calls=[ToolCall("Read", {"file_path": "shot.png"})]), Reply(text="ok")
    )
    env = env_for("openai", fake_llm)  # deepseek-chat: no vision in the table
    proc = ram("what is in @shot.png", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "deepseek-chat does not take images" in proc.stderr and "shot.png is left out" in proc.stderr
    assert "iVBOR" not in json.dumps(fake_llm.requests[0].body)
    proc = ram("read shot.png", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tool = next(m for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool")
    assert "1 image(s) not sent: this model does not take images" in tool["content"]
    assert "iVBOR" not in json.dumps(fake_llm.requests[-1].body)
    fake_llm.enqueue(Reply(text="seen"))
    proc = ram("what is in @shot.png", env={**env, "RAM_VISION": "1"}, cwd=tmp_path)  # said to see: sent
    assert proc.returncode == 0, proc.stderr
    assert b64(PNG) in json.dumps(fake_llm.requests[-1].body)


def test_an_image_over_5_mb_is_refused_with_one_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "huge.png").write_bytes(PNG + bytes(5 * 1024 * 1024))
    (tmp_path / "fake.png").write_bytes(b"not an image at all")
    fake_llm.enqueue(Reply(text="too big"))
    env = env_for("anthropic", fake_llm, ANTHROPIC_MODEL="claude-sonnet-4-5")
    proc = ram("see @huge.png and @fake.png", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "huge.png as an image: it is 5.0 MB, over the 5 MB a model takes per image" in proc.stderr
    assert "fake.png as an image: its bytes are not a PNG, JPEG, GIF or WebP image" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not any(images_in(m) for m in fake_llm.requests[0].body["messages"])
