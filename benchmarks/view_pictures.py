"""`ram view` as pictures: the long-session benchmark's transcript and a 20-task batch, each written as one HTML file
and opened in a real headless Chromium with the network off (`tests/view/browser.py`); prints what the page holds,
the requests it made and any console problem, and keeps a screenshot of each.

Run: `.venv/bin/python -m benchmarks.view_pictures [--out DIR] [--calls N]` (needs /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.batch.batch_support import fixing_model, latest, make_tasks, run_batch
from tests.fakes.fake_llm import FakeLLMServer
from tests.view.browser import open_browser


def view(source: Path, page: Path) -> float:
    """`ram view SOURCE -o PAGE`; its wall time."""
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "react_agent_mini", "view", str(source), "-o", str(page)], check=True)
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="an empty or new folder for the pages and screenshots (a new one)")
    parser.add_argument("--calls", type=int, default=300, help="model calls of the long session (300)")
    args = parser.parse_args()
    out: Path = args.out or Path(tempfile.mkdtemp(prefix="ram-view-pictures-"))
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        parser.error(f"{out} is not empty")

    transcript = out / "long-session.jsonl"
    command = [sys.executable, "-m", "benchmarks.long_session", "--calls", str(args.calls)]
    subprocess.run([*command, "--save-transcript", str(transcript)], check=True, stdout=subprocess.DEVNULL)
    pages = {"long session": (out / "long-session.html", view(transcript, out / "long-session.html"))}

    ids = [f"bad-{i}" if i % 5 == 0 else f"fix-{i}" for i in range(20)]
    tasks, _ = make_tasks(out / "batch-work", ids)
    batch_out = out / "batch-work" / "out"
    with FakeLLMServer(api_key="test-key") as server:
        server.set_responder(fixing_model())
        run_batch(tasks, batch_out, server.openai_base_url, "--workers", "4")
    statuses = [row["status"] for row in latest(batch_out).values()]
    print(f"batch: {len(statuses)} tasks, {statuses.count('completed')} completed, {statuses.count('failed')} failed")
    index = out / "batch" / "index.html"
    pages["20-task batch"] = (index, view(batch_out, index))

    with contextlib.contextmanager(open_browser)() as browser:  # the browser lives inside the block
        for name, (page, seconds) in pages.items():
            browser.load(page.as_uri())
            shot = browser.screenshot(out / f"{page.stem if page.stem != 'index' else 'batch'}.png", full=False)
            calls = browser.evaluate("document.querySelectorAll('[data-call]').length")
            rows = browser.evaluate("document.querySelectorAll('tr.task').length")
            print(
                f"{name}: {page.stat().st_size / 1024:.0f} KB written in {seconds:.2f} s; {calls} calls, "
                f"{rows} task rows; requests {browser.requests()[-1:]}; console problems {browser.problems()}; "
                f"screenshot {shot}"
            )


if __name__ == "__main__":
    main()
