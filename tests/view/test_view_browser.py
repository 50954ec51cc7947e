"""`ram view` as a person looks at it: a real headless Chromium (Debian's, /usr/bin/chromium) opens the page the
command wrote, with every host name resolving to nothing, and the test reads the page's DOM over the DevTools
protocol (browser.py): every model call is there, the events sit where the transcript and the compaction stages'
own trace say they happened, the numbers are `ram usage --json`'s, markup from a tool result is text, no request
left the page, nothing went wrong in its console, and a screenshot is taken (`RAM_VIEW_SCREENSHOTS=DIR` keeps
them)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..fakes.fake_llm import FakeLLMServer
from ..test_cli import assert_no_traceback, env_for, ram
from ..usage.sessions import SCRIPT_TAG, compacting_session, compacting_workspace, expected_calls, transcripts
from .browser import CHROMIUM, Browser, open_browser

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM} (scripts/setup --dev installs it)"
)


@pytest.fixture
def browser() -> Iterator[Browser]:
    yield from open_browser()


def keep(shot: Path) -> None:
    """Copy a screenshot to `RAM_VIEW_SCREENSHOTS`, when set, to look at it."""
    folder = os.environ.get("RAM_VIEW_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)


def assert_png(shot: Path) -> None:
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(data[16:20], "big") >= 1200  # the viewport is 1280
    assert len(data) > 20_000  # a page, not a blank


def camel(name: str) -> str:
    """A `data-` attribute's name as `dataset` spells it (`cache_read_input_tokens` → `cacheReadInputTokens`)."""
    first, *rest = name.split("_")
    return first + "".join(word.title() for word in rest)


def record_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


ROWS = """[...document.querySelectorAll('table.calls')[0].tBodies[0].rows].map(r => ({
  call: +r.dataset.call, kind: r.dataset.kind, model: r.dataset.model, events: r.dataset.events,
  input: +r.dataset.inputTokens, output: +r.dataset.outputTokens, read: +r.dataset.cacheReadInputTokens,
  write: +r.dataset.cacheCreationInputTokens, dropped: +r.dataset.dropped, cleared: +r.dataset.cleared}))"""


def test_a_session_page_in_a_real_browser(fake_llm: FakeLLMServer, tmp_path: Path, browser: Browser) -> None:
    (tmp_path / "work").mkdir()
    work = compacting_workspace(tmp_path / "work")
    trace = compacting_session(fake_llm, work)
    (saved,) = transcripts(Path(os.environ["XDG_DATA_HOME"]))
    page = tmp_path / "session.html"
    made = ram("view", str(saved), "-o", str(page), env=env_for(None, None), cwd=work)
    assert_no_traceback(made)
    assert made.returncode == 0 and made.stdout.startswith(f"wrote {page}"), made.stderr

    browser.load(page.as_uri())
    assert browser.requests() == [page.as_uri()]  # the page itself, and nothing else
    assert browser.problems() == []

    # every call recorded in the transcript has its row, with the transcript's numbers
    records = [r for r in record_lines(saved) if r["type"] == "call"]
    rows = browser.evaluate(ROWS)
    assert [row["call"] for row in rows] == list(range(1, len(records) + 1))
    for row, record in zip(rows, records, strict=True):
        usage = record["usage"]
        assert (row["kind"], row["model"]) == (record["kind"], record["model"])
        assert (row["input"], row["output"]) == (usage["input_tokens"], usage["output_tokens"])
        assert (row["read"], row["write"]) == (usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"])

    # the events where the compaction stages' own trace says they happened
    expected = expected_calls(trace)
    assert [row["kind"] for row in rows] == [call.kind for call in expected]
    turns = [(row, call) for row, call in zip(rows, expected, strict=True) if call.kind == "turn"]
    assert [(row["cleared"], row["dropped"]) for row, _ in turns] == [(c.cleared, c.dropped) for _, c in turns]
    assert [row["events"].split() for row in rows] == [call.events for call in expected]
    marked = {kind: sum(kind in call.events for call in expected) for kind in ("micro", "retain")}
    assert marked["micro"] >= 1 and marked["retain"] >= 1  # the session did compact: the check has teeth
    chart = browser.evaluate(
        "[...document.querySelectorAll('svg.chart')[0].querySelectorAll('g.ev')].map(g => g.dataset.event)"
    )
    assert sorted(chart) == sorted(["summary"] + [e for call in expected for e in call.events])
    summary_at = [i for i, call in enumerate(expected) if call.kind == "summary"]
    assert browser.evaluate(
        "[...document.querySelectorAll('[data-summary-after]')].map(e => +e.dataset.summaryAfter)"
    ) == [summary_at[0] + 1]

    # the totals are `ram usage`'s for this session
    usage = ram("usage", "--by", "session", "--json", env=env_for(None, None), cwd=work)
    assert usage.returncode == 0, usage.stderr
    (row,) = json.loads(usage.stdout)["rows"]
    totals = browser.evaluate("({...document.getElementById('totals').dataset})")
    assert int(totals["calls"]) == row["calls"] == len(records)
    for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        assert int(totals[camel(name)]) == row[name], name
    assert float(totals["costUsd"]) == row["cost_usd"] > 0

    # markup a command printed is shown as text, and ran nowhere
    assert browser.evaluate("document.scripts.length") == 0
    assert browser.evaluate("window.pwned === undefined") is True
    bash = browser.evaluate(
        "[...document.querySelectorAll('details.tool[data-tool=Bash]')].map(d => d.textContent).join('\\n')"
    )
    assert SCRIPT_TAG in bash and "<img src=x onerror=window.pwned=2>" in bash
    # an Edit is shown as a diff
    diff = browser.evaluate("document.querySelector('details.tool[data-tool=Edit] .diff').textContent")
    assert "-return a - b" in diff and "+return a + b" in diff

    browser.send("Runtime.evaluate", {"expression": "document.querySelectorAll('details').forEach(d => d.open = true)"})
    shot = browser.screenshot(tmp_path / "ram-view-session.png")
    assert_png(shot)
    keep(shot)
    assert browser.problems() == []


class Listener:
    """A loopback TCP port that counts the connections made to it (a page must make none)."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


PROBE = """new Promise(done => {
  const seen = [];
  document.addEventListener('securitypolicyviolation', e => seen.push(e.violatedDirective));
  const base = 'http://127.0.0.1:%d/';
  fetch(base + 'fetch').catch(() => seen.push('fetch failed'));
  const img = new Image(); img.src = base + 'img.png'; document.body.append(img);
  const script = document.createElement('script'); script.src = base + 'x.js'; document.head.append(script);
  const css = document.createElement('link'); css.rel = 'stylesheet'; css.href = base + 'x.css';
  document.head.append(css);
  const frame = document.createElement('iframe'); frame.src = base + 'frame'; document.body.append(frame);
  const inline = document.createElement('script'); inline.textContent = 'window.ran = 1'; document.head.append(inline);
  setTimeout(() => done({seen, ran: window.ran === 1}), 1500);
})"""


def test_the_page_can_reach_no_one(fake_llm: FakeLLMServer, tmp_path: Path, browser: Browser) -> None:
    """The policy itself, tried: from inside the page, a fetch, an image, a script, a stylesheet, a frame and an
    inline script aimed at a real loopback port are all refused, and the port sees no connection."""
    from ..usage.sessions import Script, run

    run(fake_llm, Script(), tmp_path, "hello", [])
    page = tmp_path / "hello.html"
    assert ram("view", "-o", str(page), env=env_for(None, None), cwd=tmp_path).returncode == 0
    listener = Listener()
    try:
        browser.load(page.as_uri())
        assert browser.problems() == []
        outcome = browser.evaluate(PROBE % listener.port)
    finally:
        listener.close()
    assert listener.connections == 0
    assert outcome["ran"] is False
    refused = set(outcome["seen"])
    assert {"connect-src", "img-src", "script-src-elem", "style-src-elem", "frame-src"} <= refused, refused
    assert browser.requests()[0] == page.as_uri()
    # the requests the probe asked for never went out: the browser refused each for the policy, before any lookup
    asked = {
        e["params"]["requestId"]: e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent" and e["params"]["request"]["url"].startswith("http")
    }
    refused_for = {
        e["params"]["requestId"]: e["params"].get("blockedReason")
        for e in browser.events
        if e.get("method") == "Network.loadingFailed"
    }
    assert asked and {refused_for.get(request) for request in asked} == {"csp"}, (asked, refused_for)


def test_a_batch_page_links_each_task_and_adds_them_up(tmp_path: Path, browser: Browser) -> None:
    from ..batch.batch_support import fixing_model, latest, make_tasks, run_batch

    tasks, _bases = make_tasks(tmp_path, ["fix-1", "bad-2", "fix-3"])
    out = tmp_path / "out"
    with FakeLLMServer(api_key="test-key") as server:
        server.set_responder(fixing_model())
        done = run_batch(tasks, out, server.openai_base_url, "--workers", "2")
    assert done.returncode in (0, 1), done.stderr  # 1: a task failed its test, as bad-2 must
    results = latest(out)
    index = tmp_path / "report" / "index.html"
    made = ram("view", str(out), "-o", str(index), env=env_for(None, None), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "and 3 task page(s) beside it" in made.stdout

    browser.load(index.as_uri())
    assert browser.requests() == [index.as_uri()]
    assert browser.problems() == []
    rows = browser.evaluate(
        "[...document.querySelectorAll('tr.task')].map(r => ({...r.dataset, href: r.querySelector('a').href}))"
    )
    assert sorted(r["task"] for r in rows) == sorted(results)
    for row in rows:
        result = results[row["task"]]
        assert row["status"] == result["status"] and int(row["turns"]) == result["num_turns"]
        assert float(row["costUsd"]) == result["cost_usd"]
        assert int(row["patchBytes"]) == len((out / result["patch"]).read_bytes())
    assert {r["status"] for r in rows} == {"completed", "failed"}
    totals = browser.evaluate("({...document.getElementById('totals').dataset})")
    assert int(totals["tasks"]) == 3 and int(totals["completed"]) == 2
    assert float(totals["costUsd"]) == pytest.approx(sum(r["cost_usd"] for r in results.values()))
    shot = browser.screenshot(tmp_path / "ram-view-batch.png")
    keep(shot)

    for row in rows:  # each link opens its task's page, offline too
        browser.load(row["href"])
        assert browser.requests()[-1] == row["href"]
        assert browser.problems() == []
        task = browser.evaluate(
            "({...document.getElementById('totals').dataset, status: document.getElementById('task').dataset.status})"
        )
        assert int(task["calls"]) == results[row["task"]]["num_turns"]
        assert task["status"] == results[row["task"]]["status"]
        patch = browser.evaluate("document.getElementById('patch-diff').textContent")
        assert "+    return a + b" in patch or "+    return a * b" in patch
        back = browser.evaluate("document.querySelector('a[href$=\"index.html\"]').href")
        assert back == index.as_uri()
    shot = browser.screenshot(tmp_path / "ram-view-batch-task.png")
    keep(shot)
    assert all(url.startswith("file://") for url in browser.requests())
