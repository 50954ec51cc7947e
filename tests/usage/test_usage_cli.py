"""`ram usage` end to end: real sessions made by `ram` against the loopback fake model (whose token counts the tests
choose), read back by `ram usage` in a subprocess, as a table and as `--json`."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from react_agent_mini.messages import Usage as Tokens
from react_agent_mini.pricing import cost_usd

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall, Usage
from ..test_cli import assert_no_traceback, env_for, ram
from .sessions import Script, run, transcripts


def usage(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = ram("usage", *args, env=env_for(None, None), cwd=cwd)
    assert_no_traceback(proc)
    return proc


def usage_json(cwd: Path, *args: str) -> dict[str, Any]:
    proc = usage(cwd, "--json", *args)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def data_home() -> Path:
    return Path(os.environ["XDG_DATA_HOME"])


def sums(*calls: Usage) -> dict[str, int]:
    return {
        "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls),
        "cache_read_input_tokens": sum(c.cache_read_tokens for c in calls),
        "cache_creation_input_tokens": sum(c.cache_write_tokens for c in calls),
    }


def price(model: str, counted: dict[str, int]) -> float:
    tokens = Tokens(
        counted["input_tokens"],
        counted["output_tokens"],
        counted["cache_read_input_tokens"],
        counted["cache_creation_input_tokens"],
    )
    dollars = cost_usd(model, tokens)
    assert dollars is not None, model
    return dollars


def numbers(row: dict[str, Any]) -> dict[str, int]:
    return {
        k: row[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    }


def test_every_call_is_counted_by_session_project_model_and_day(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Two projects, three sessions, two providers; one session's subagent counts into it."""
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    (alpha / "a.txt").write_text("alpha\n")
    script = Script()
    first = [Usage(1000, 50, 200), Usage(1100, 60, 300), Usage(900, 10, 0)]
    run(
        fake_llm,
        script,
        alpha,
        "read a.txt twice",
        [
            Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})], usage=first[0]),
            Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})], usage=first[1]),
            Reply(text="Read it twice.", usage=first[2]),
        ],
        OPENAI_MODEL="gpt-4.1-mini",
    )
    main = [Usage(500, 40, 100), Usage(700, 20, 400)]
    agent = [Usage(300, 30, 0), Usage(350, 35, 50)]
    script.agent[:] = [
        Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})], usage=agent[0]),
        Reply(text="It says alpha.", usage=agent[1]),
    ]
    ask = ToolCall("Agent", {"description": "look", "prompt": "Look at a.txt and say what it holds."})
    run(
        fake_llm,
        script,
        alpha,
        "have an agent look",
        [Reply(tool_calls=[ask], usage=main[0]), Reply(text="The agent says alpha.", usage=main[1])],
        OPENAI_MODEL="gpt-4.1-mini",
    )
    other = [Usage(2000, 100, 0, 1500), Usage(400, 80, 1500, 0)]
    run(
        fake_llm,
        script,
        beta,
        "hello",
        [Reply(tool_calls=[ToolCall("Echo", {"message": "hi"})], usage=other[0]), Reply(text="Hi.", usage=other[1])],
        wire="anthropic",
    )
    saved = transcripts(data_home())
    assert len(saved) == 3
    assert len(list(data_home().rglob("subagents/*.jsonl"))) == 1

    by_session = {row["session"]: row for row in usage_json(tmp_path, "--by", "session")["rows"]}
    expected = {
        "read a.txt twice": (first, 3),
        "have an agent look": ([*main, *agent], 4),
        "hello": (other, 2),
    }
    for path in saved:
        prompt = next(
            json.loads(line)["message"]["content"][0]["text"]
            for line in path.read_text().splitlines()
            if '"type": "message"' in line
        )
        calls, count = expected[prompt]
        row = by_session[path.stem]
        assert row["calls"] == count and numbers(row) == sums(*calls), prompt
    assert len(by_session) == 3

    projects = {row["path"]: row for row in usage_json(tmp_path, "--by", "project")["rows"]}
    assert set(projects) == {str(alpha.resolve()), str(beta.resolve())}
    alpha_calls = [*first, *main, *agent]
    assert numbers(projects[str(alpha.resolve())]) == sums(*alpha_calls)
    assert projects[str(alpha.resolve())]["sessions"] == 2

    models = {row["model"]: row for row in usage_json(tmp_path, "--by", "model")["rows"]}
    assert set(models) == {"gpt-4.1-mini", "claude-sonnet-4-5"}
    for model, calls in (("gpt-4.1-mini", alpha_calls), ("claude-sonnet-4-5", other)):
        assert numbers(models[model]) == sums(*calls)
        assert models[model]["cost_usd"] == price(model, sums(*calls))
    assert models["claude-sonnet-4-5"]["cache_share"] == 1500 / (2000 + 1500 + 400 + 1500)

    report = usage_json(tmp_path)
    today = time.strftime("%Y-%m-%d")
    assert [row["day"] for row in report["rows"]] == [today]
    totals = report["totals"]
    assert totals["calls"] == 9 and totals["sessions"] == 3 and totals["unpriced_calls"] == 0
    assert totals["cost_usd"] == price("gpt-4.1-mini", sums(*alpha_calls)) + price("claude-sonnet-4-5", sums(*other))
    assert report["warnings"] == [] and report["sessions_without_usage"] == 0

    table = usage(tmp_path, "--by", "project")
    assert table.returncode == 0 and table.stderr == ""
    lines = table.stdout.splitlines()
    assert lines[0] == "ram usage by project: 3 sessions, 9 model calls"
    assert any(str(alpha.resolve())[-40:] in line and "gpt-4.1-mini" in line for line in lines)  # long: by its end
    assert lines[-1].startswith("Total") and f" {sum(sums(*alpha_calls, *other).values()):,} " in lines[-1]


def shifted(path: Path, target: Path, days: int) -> None:
    """A copy of a real transcript, as if written `days` days earlier (every record's time moved back)."""
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        for key in ("ts", "started"):
            if key in record:
                record[key] -= days * 86400
        lines.append(json.dumps(record, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n")


def test_since_and_until_pick_local_days(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    run(fake_llm, Script(), tmp_path, "hello", [Reply(text="Hi.", usage=Usage(100, 10))])
    (saved,) = transcripts(data_home())
    shifted(saved, saved.with_name("00000000-0000-4000-8000-000000000000.jsonl"), days=3)
    old = time.localtime(time.time() - 3 * 86400)
    then, today = time.strftime("%Y-%m-%d", old), time.strftime("%Y-%m-%d")
    everything = usage_json(tmp_path)
    assert [(row["day"], row["calls"]) for row in everything["rows"]] == [(then, 1), (today, 1)]
    assert [row["day"] for row in usage_json(tmp_path, "--since", today)["rows"]] == [today]
    assert [row["day"] for row in usage_json(tmp_path, "--until", then)["rows"]] == [then]
    compact = then.replace("-", "")  # ccusage's spelling works too
    assert [row["day"] for row in usage_json(tmp_path, "--since", compact, "--until", compact)["rows"]] == [then]
    none = usage(tmp_path, "--since", "2001-01-01", "--until", "2001-01-02")
    assert none.returncode == 0 and "No model calls on those days." in none.stdout


def test_a_broken_line_or_file_costs_one_warning(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    run(fake_llm, Script(), tmp_path, "hello", [Reply(text="Hi.", usage=Usage(100, 10))])
    (saved,) = transcripts(data_home())
    good = usage_json(tmp_path)["totals"]
    with saved.open("a") as handle:
        handle.write('{"type": "call", "kind": "turn", "model": "deepseek-chat", "usage": {"input_tokens": -5}}\n')
        handle.write("not json at all\n")
        handle.write('{"type": "call", "kind": "turn", "model": "deepseek-chat", "usage": {"input_tok')
    garbage = saved.with_name("11111111-1111-4111-8111-111111111111.jsonl")
    garbage.write_bytes(os.urandom(3000).replace(b"\n", b"") + b"\n\x00\xff{\n")
    proc = usage(tmp_path)
    assert proc.returncode == 0
    assert sorted(proc.stderr.splitlines()) == sorted(
        [f"warning: {saved}: 3 unreadable line(s) skipped", f"warning: {garbage}: 2 unreadable line(s) skipped"]
    )
    report = usage_json(tmp_path)
    assert report["totals"] == good  # what could be read, and nothing else
    assert len(report["warnings"]) == 2


def test_a_session_saved_before_calls_were_recorded_is_counted_apart(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    run(fake_llm, Script(), tmp_path, "hello", [Reply(text="Hi.", usage=Usage(100, 10))])
    (saved,) = transcripts(data_home())
    older = saved.with_name("22222222-2222-4222-8222-222222222222.jsonl")
    older.write_text("".join(line for line in saved.open() if '"type": "call"' not in line))
    report = usage_json(tmp_path)
    assert report["sessions_without_usage"] == 1 and report["totals"]["calls"] == 1
    table = usage(tmp_path).stdout
    assert "1 session saved before ram recorded its model calls: not counted" in table


def test_a_model_without_a_price_counts_its_tokens_only(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    run(fake_llm, Script(), tmp_path, "hello", [Reply(text="Hi.", usage=Usage(100, 10))], OPENAI_MODEL="my-local-llm")
    totals = usage_json(tmp_path)["totals"]
    assert totals["cost_usd"] is None and totals["unpriced_calls"] == 1 and totals["input_tokens"] == 100
    table = usage(tmp_path, "--by", "model").stdout
    row = next(line for line in table.splitlines() if line.startswith("my-local-llm"))
    assert row.split()[-1] == "—"
    assert "* leaves out 1 call of models without a known price (my-local-llm)" in table


def test_nothing_saved_yet(tmp_path: Path) -> None:
    proc = usage(tmp_path)
    assert proc.returncode == 0 and "No saved sessions yet." in proc.stdout and proc.stderr == ""
    assert usage_json(tmp_path)["rows"] == []


def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    for args, says in (
        (["--since", "2025-13-01"], "not a day: '2025-13-01'"),
        (["--until", "yesterday"], "not a day: 'yesterday'"),
        (["--by", "week"], "invalid choice: 'week'"),
        (["--since", "2025-02-01", "--until", "2025-01-01"], "--since 2025-02-01 is after --until 2025-01-01"),
        (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    ):
        proc = usage(tmp_path, *args)
        assert proc.returncode == 2, args
        assert proc.stdout == "" and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr
