"""A real headless Chromium (Debian's, /usr/bin/chromium) driven over the DevTools protocol, from the stdlib alone.

`--remote-debugging-pipe` gives the protocol on file descriptors 3 (what the browser reads) and 4 (what it
writes), one JSON message per NUL-terminated chunk: no port, no websocket library. A thread reads the browser's
messages; `send` waits for the answer to its command, and every event is kept (`events`) for the test to read:
each request the page made (`Network.requestWillBeSent`), console calls, exceptions and log entries.

The browser starts with the flags the machine's notes give (no sandbox as root, no GPU, no background networking
or component updates, an empty profile of its own) and with every host name resolving to nothing, so even a
page that tried could reach no one; a test then checks that no request left the page at all.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
WAIT = 120.0
"""Seconds to wait for the browser to answer one command: only against a hung browser (a loaded machine is slow)."""
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
]


class BrowserError(Exception):
    pass


class Browser:
    """One Chromium process and one page in it."""

    def __init__(self, profile: Path) -> None:
        to_browser, self._to_browser = os.pipe()
        self._from_browser, from_browser = os.pipe()
        # The protocol's descriptors must be 3 and 4 in the browser: bash puts them there (from numbers above
        # 9, so no redirection can clobber another) and execs it; nothing else of ours is inherited.
        read, write = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser))
        os.close(to_browser)
        os.close(from_browser)
        to_browser_r, from_browser_w = read, write
        self.process = subprocess.Popen(
            [
                "/bin/bash",
                "-c",
                f'exec "$0" "$@" 3<&{read} 4>&{write} {read}<&- {write}>&-',
                str(CHROMIUM),
                *FLAGS,
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(read, write),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = ""

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._changed:
                    self._closed = True
                    self._changed.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._changed:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._answers[message["id"]] = message
                    else:
                        self.events.append(message)
                self._changed.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> dict[str, Any]:
        """Run one protocol command (on the page's session unless `session` says otherwise); its result."""
        self._next += 1
        number = self._next
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        target = self.session if session is None else session
        if target:
            message["sessionId"] = target
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        with self._changed:
            if not self._changed.wait_for(lambda: number in self._answers or self._closed, WAIT):
                raise BrowserError(f"no answer to {method} in {WAIT:g} s")
            if number not in self._answers:
                raise BrowserError(f"the browser exited before answering {method}")
            answer = self._answers.pop(number)
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def wait_for_event(self, method: str, after: int = 0) -> dict[str, Any]:
        """The first event named `method` from the `after`-th event on (waiting for it to come)."""

        def found() -> dict[str, Any] | None:
            return next((e for e in self.events[after:] if e.get("method") == method), None)

        with self._changed:
            if not self._changed.wait_for(lambda: found() is not None or self._closed, WAIT):
                raise BrowserError(f"no {method} in {WAIT:g} s")
            event = found()
        if event is None:
            raise BrowserError(f"the browser exited before {method}")
        return event

    def open_page(self) -> None:
        """Attach to the page the browser started with, and record its network, console and log."""
        targets = self.send("Target.getTargets", session="")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session="")[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )

    def load(self, url: str) -> None:
        mark = len(self.events)
        self.send("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired", mark)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"the expression failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, full: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full:
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def requests(self) -> list[str]:
        """The URL of every request the page made, in order."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries, one line each."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                found.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} ({params['entry'].get('url', '')})")
        return found

    def close(self) -> None:
        try:
            if not self._closed:
                self.send("Browser.close", session="")
        except (BrowserError, OSError):
            pass  # it is going anyway
        try:
            self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)


def open_browser() -> Iterator[Browser]:
    """A fresh browser with an empty profile of its own, closed (and its profile removed) after."""
    with tempfile.TemporaryDirectory(prefix="ram-view-chromium-") as profile:
        browser = Browser(Path(profile))
        try:
            browser.open_page()
            yield browser
        finally:
            browser.close()
