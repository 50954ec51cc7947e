"""The early first request (`early/`): a headless run with nothing configured puts its first request on the wire
before the heavy modules load, and the session reads the answer to it as if it had sent it; anything that can
change the first request keeps it from going early. Real runs of `ram` against the loopback fake model, a real
socket pair for the comparison, and a raw HTTP server for answers the fake model does not give (gzip, a sized
body). The suite runs with `REACT_AGENT_MINI_EARLY_CHECK=1` (conftest): an early request that differs from the
session's own is an error, so every headless run of every test checks the lane's request byte for byte."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from react_agent_mini.early import adopt, lane
from react_agent_mini.early.schemas import declared, prebuilt
from react_agent_mini.early.wire import Sent
from react_agent_mini.providers import first_call

from .fakes.fake_llm import DropAfter, FakeLLMServer, HttpError, Reply, ToolCall
from .test_cli import env_for


def run(
    *args: str,
    cwd: Path,
    wire: str | None = None,
    server: FakeLLMServer | None = None,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """`ram ARGS` with `TRACE=1`, against `server` in `wire`'s format (or where `env` points it)."""
    return subprocess.run(
        [sys.executable, "-m", "react_agent_mini", *args],
        env=env_for(wire, server, TRACE="1", **env),
        cwd=cwd,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=120,
    )


def read_request(conn: socket.socket) -> bytes:
    """One whole HTTP request off `conn` (closing with unread bytes would reset the answer)."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    header, _, body = data.partition(b"\r\n\r\n")
    sizes = [x for x in header.split(b"\r\n") if x.lower().startswith(b"content-length")]
    while sizes and len(body) < int(sizes[0].split(b":")[1]) and (chunk := conn.recv(65536)):
        body += chunk
    return header + b"\r\n\r\n" + body


def serve(handle: Callable[[socket.socket], None], context: ssl.SSLContext | None = None) -> socket.socket:
    """A listener on 127.0.0.1 (TLS with `context`) whose connections `handle` serves, each in a thread (close it
    to stop)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                conn = context.wrap_socket(conn, server_side=True) if context is not None else conn
            except OSError:
                conn.close()
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def early_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("[trace] early.")]


def test_the_prebuilt_schemas_are_what_the_tools_declare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    live = declared(work)
    built = [{"name": s.name, "description": s.description, "input_schema": s.input_schema} for s in prebuilt()]
    assert [t["name"] for t in live] == [t["name"] for t in built]
    # key order matters too: the body's bytes are compared
    assert json.dumps(built) == json.dumps(live), "run `python -m react_agent_mini.early.schemas` to rewrite tools.json"


def _git_repo_with_instructions(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "AGENTS.md").write_text("# Rules\nRun `make test` before you finish.\n@docs/style.md\n")
    (root / "docs").mkdir()
    (root / "docs" / "style.md").write_text("Four spaces, no tabs.\n")
    (root / "CLAUDE.md").write_text("Prefer small functions.\n")
    (root / ".agents" / "memory").mkdir(parents=True)
    (root / ".agents" / "memory" / "MEMORY.md").write_text("- The tests need Python 3.11.\n")
    nested = root / "src" / "pkg"
    nested.mkdir(parents=True)
    (nested / "AGENTS.md").write_text("This package holds the parser.\n")
    return nested


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize("where", ["empty", "repository"])
def test_a_run_with_nothing_configured_sends_its_first_request_early_and_reads_the_answer(
    wire: str, where: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    cwd = tmp_path if where == "empty" else _git_repo_with_instructions(tmp_path / "repo")
    fake_llm.enqueue(Reply(text="Early and right."))
    proc = run("say hello", wire=wire, server=fake_llm, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Early and right."
    lines = early_lines(proc.stderr)
    assert [line.split()[1] for line in lines] == ["early.sent", "early.taken"], proc.stderr
    assert len(fake_llm.requests) == 1  # one request: the early one, answered once
    body = fake_llm.requests[0].body
    system = body["messages"][0]["content"] if wire == "openai" else body["system"][0]["text"]
    if where == "repository":  # the project's instructions, imports and memory are in it (the session's own code)
        assert "Four spaces, no tabs." in system and "This package holds the parser." in system
        assert "The tests need Python 3.11." in system


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_task_with_piped_input_and_json_output_goes_early_too(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Reviewed."))
    proc = run("review this", "--output-format", "json", wire=wire, server=fake_llm, cwd=tmp_path, stdin="+ a line\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == "Reviewed."
    assert "[trace] early.taken" in proc.stderr
    last = fake_llm.requests[0].body["messages"][-1]["content"]
    text = last if isinstance(last, str) else last[0]["text"]
    assert text == "review this\n\n+ a line"


@pytest.mark.parametrize(
    "flags",
    [
        ("--sandbox", "off"),
        ("--permission-mode", "acceptEdits"),
        ("--allowed-tools", "Bash(git:*),Read", "--disallowed-tools", "Bash(rm:*),WebFetch"),
    ],
)
def test_flags_that_do_not_change_the_first_request_let_it_go_early(
    flags: tuple[str, ...], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Early."))
    proc = run(*flags, "say hello", wire="openai", server=fake_llm, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Early."
    assert [line.split()[1] for line in early_lines(proc.stderr)] == ["early.sent", "early.taken"], proc.stderr


def _configure(kind: str, cwd: Path) -> None:
    if kind == "settings":
        (cwd / ".claude").mkdir()
        (cwd / ".claude" / "settings.json").write_text('{"hooks": {"SessionStart": []}}')
    elif kind == "settings-mode":
        (cwd / ".claude").mkdir()
        (cwd / ".claude" / "settings.json").write_text('{"permissions": {"allow": [], "defaultMode": "plan"}}')
    elif kind == "mcp":
        (cwd / ".mcp.json").write_text('{"mcpServers": {}}')
    elif kind == "skill":
        (cwd / ".agents" / "skills" / "review").mkdir(parents=True)
        (cwd / ".agents" / "skills" / "review" / "SKILL.md").write_text("---\ndescription: Review a diff\n---\nLook.\n")
    elif kind == "agent":
        (cwd / ".claude" / "agents").mkdir(parents=True)
        (cwd / ".claude" / "agents" / "tester.md").write_text("---\ndescription: Runs tests\n---\nRun them.\n")


CASES = {
    "settings": (("hello",), {}),
    "settings-mode": (("hello",), {}),
    "mcp": (("hello",), {}),
    "skill": (("hello",), {}),
    "agent": (("hello",), {}),
    "flag": (("--append-system-prompt", "Be brief.", "hello"), {}),
    "sandbox": (("--sandbox", "read-only", "hello"), {}),  # probed first: a sandbox that cannot run is an error
    "mention": (("explain @notes.txt",), {}),
    "image": (("what is in shot.png",), {}),
    "limit": (("hello",), {"RAM_MAX_OUTPUT_TOKENS": "100"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_can_change_the_first_request_keeps_it_from_going_early(
    case: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    _configure(case, tmp_path)
    (tmp_path / "notes.txt").write_text("a note\n")
    args, env = CASES[case]
    fake_llm.enqueue(Reply(text="Done."))
    proc = run(*args, wire="openai", server=fake_llm, cwd=tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    lines = early_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("[trace] early.skipped reason="), proc.stderr
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_error_or_a_drop_in_the_early_answer_is_retried_as_any_other(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(HttpError(529 if wire == "anthropic" else 503, "busy", retry_after="0"))
    fake_llm.enqueue(DropAfter(Reply(text="lost"), events=1))
    fake_llm.enqueue(Reply(text="Third time."))
    proc = run("hello", wire=wire, server=fake_llm, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Third time."
    assert "[trace] early.taken" in proc.stderr
    assert len(fake_llm.requests) == 3


def _pair() -> tuple[Sent, socket.socket]:
    ours, theirs = socket.socketpair()
    return Sent(ours, "http://h/v1/chat/completions", "/v1/chat/completions", "h", {"a": "1"}, b"{}"), theirs


def test_a_call_that_differs_closes_the_early_request_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(adopt.CHECK_VARIABLE)
    sent, theirs = _pair()
    monkeypatch.setattr(first_call, "pending", sent)
    assert first_call.take(sent.url, {"A": "1"}, b"{ }") is None
    assert theirs.recv(10) == b""  # closed: the server's answer is never read
    assert first_call.pending is None
    sent, theirs = _pair()
    monkeypatch.setattr(first_call, "pending", sent)
    assert first_call.take(sent.url, {"A": "1"}, b"{}") is sent  # the same call (header names in any case)
    assert first_call.take(sent.url, {"A": "1"}, b"{}") is None  # taken once


def test_under_the_check_a_call_that_differs_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(adopt.CHECK_VARIABLE, "1")
    sent, _ = _pair()
    monkeypatch.setattr(first_call, "pending", sent)
    with pytest.raises(adopt.EarlyRequestDiffers, match="headers"):
        first_call.take(sent.url, {"a": "2"}, b"{}")


OPENAI_SSE = (
    b'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Zipped "}}]}\n\n'
    b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"answer."},"finish_reason":"stop"}]}\n\n'
    b'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}\n\n'
    b"data: [DONE]\n\n"
)


@pytest.fixture
def gzip_server() -> Iterator[tuple[str, list[bytes]]]:
    """An HTTP server that answers every request with the same gzip-encoded, sized SSE body; the heads it got."""
    seen: list[bytes] = []
    zipped = gzip.compress(OPENAI_SSE)
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
        f"Content-Length: {len(zipped)}\r\n\r\n"
    ).encode()

    def answer(conn: socket.socket) -> None:
        with conn:
            seen.append(read_request(conn).partition(b"\r\n\r\n")[0])
            conn.sendall(head + zipped)

    listener = serve(answer)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", seen
    listener.close()


def test_a_gzip_encoded_sized_answer_is_read_as_httpx_reads_it(
    gzip_server: tuple[str, list[bytes]], tmp_path: Path
) -> None:
    url, seen = gzip_server
    proc = run("hello", cwd=tmp_path, OPENAI_API_KEY="k", OPENAI_BASE_URL=url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Zipped answer."
    assert "[trace] early.taken" in proc.stderr
    assert len(seen) == 1
    assert b"User-Agent: react-agent-mini/" in seen[0] and b"Accept-Encoding: gzip, deflate" in seen[0]


@pytest.mark.parametrize("flags", [("-p",), ()])
def test_a_task_read_from_stdin_goes_early(flags: tuple[str, ...], fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="From stdin."))
    proc = run(*flags, wire="anthropic", server=fake_llm, cwd=tmp_path, stdin="what is 2+2?\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "From stdin."
    assert "[trace] early.taken" in proc.stderr
    assert fake_llm.requests[0].body["messages"][0]["content"][0]["text"] == "what is 2+2?"


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate made for localhost (the CA file to trust) and a server context that presents it."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert)),
            *("-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context


@pytest.fixture
def tls_front(
    fake_llm: FakeLLMServer, certificate: tuple[Path, ssl.SSLContext]
) -> Iterator[tuple[str, Path, list[bytes]]]:
    """`https://localhost:PORT` in front of the fake model: its URL, the CA file to trust, and the request lines it
    redirected (a request under `/v0/` is sent to the same path under `/v1/`)."""
    cert, context = certificate
    backend = ("127.0.0.1", int(fake_llm.url.rsplit(":", 1)[1]))

    def pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def forward(secure: socket.socket) -> None:
        request = read_request(secure)
        if request.startswith(b"POST /v0/"):  # moved: the same path under /v1, on this server
            redirected.append(request.split(b"\r\n", 1)[0])
            moved = "Location: /v1/chat/completions\r\nContent-Length: 0\r\nConnection: close"
            secure.sendall(f"HTTP/1.1 307 Temporary Redirect\r\n{moved}\r\n\r\n".encode())
            secure.close()
            return
        plain = socket.create_connection(backend)
        plain.sendall(request)
        threading.Thread(target=pump, args=(plain, secure), daemon=True).start()
        pump(secure, plain)

    redirected: list[bytes] = []
    listener = serve(forward, context)
    yield f"https://localhost:{listener.getsockname()[1]}", cert, redirected
    listener.close()


def _https_run(task: str, base_url: str, ca_file: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(task, cwd=cwd, OPENAI_API_KEY="test-key", OPENAI_BASE_URL=base_url, SSL_CERT_FILE=str(ca_file))


def test_over_tls_the_early_request_is_verified_as_httpx_verifies_and_the_next_call_uses_httpx(
    tls_front: tuple[str, Path, list[bytes]], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    url, ca_file, _ = tls_front
    (tmp_path / "notes.txt").write_text("secret plan\n")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]), Reply(text="It says: plan."))
    proc = _https_run("read notes.txt", f"{url}/v1", ca_file, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "It says: plan."
    assert "[trace] early.taken" in proc.stderr
    assert len(fake_llm.requests) == 2
    assert "secret plan" in json.dumps(fake_llm.requests[1].body)


def test_a_server_whose_certificate_is_not_trusted_gets_nothing_early(
    tls_front: tuple[str, Path, list[bytes]], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    url, _, _ = tls_front
    proc = run(
        "hello",
        cwd=tmp_path,
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=f"{url}/v1",
        RAM_MAX_RETRIES="0",
        SSL_CERT_FILE="",  # the system's CAs only
        SSL_CERT_DIR="",
    )
    assert proc.returncode == 1
    assert "CERTIFICATE_VERIFY_FAILED" in proc.stderr or "certificate" in proc.stderr.lower(), proc.stderr
    assert "[trace] early.sent" not in proc.stderr
    assert fake_llm.requests == []


def test_a_redirect_answering_the_early_request_is_followed_as_httpx_follows_it(
    tls_front: tuple[str, Path, list[bytes]], fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    url, ca_file, redirected = tls_front
    fake_llm.enqueue(Reply(text="Found it."))
    proc = _https_run("hello", f"{url}/v0", ca_file, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Found it."
    assert "[trace] early.taken" in proc.stderr
    # the early request and httpx's own were both redirected; httpx followed, and the model answered once
    assert redirected == [b"POST /v0/chat/completions HTTP/1.1"] * 2, proc.stderr
    assert len(fake_llm.requests) == 1


def test_a_hostile_repository_s_links_and_imports_reach_nothing_outside_it_early(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("TOP SECRET\n")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "AGENTS.md").symlink_to(tmp_path / "secret.txt")  # a context file that is a link out of the repository
    (repo / "CLAUDE.md").write_text("Be careful.\n@../secret.txt\n")  # an import out of it
    fake_llm.enqueue(Reply(text="Careful."))
    proc = run("hello", wire="openai", server=fake_llm, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "[trace] early.taken" in proc.stderr  # the early lane read the context files (as the session does)
    sent = json.dumps(fake_llm.requests[0].body)
    assert "Be careful." in sent and "TOP SECRET" not in sent


@pytest.mark.parametrize("kind", ["link to nowhere", "broken"])
def test_a_settings_file_that_is_a_dangling_link_or_broken_sends_nothing_early(
    kind: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    if kind == "broken":
        settings.write_text('{"permissions": {')  # the run fails closed: the model must hear nothing at all
    else:
        settings.symlink_to(tmp_path / "nowhere.json")
    fake_llm.enqueue(Reply(text="Done."))
    proc = run("hello", wire="openai", server=fake_llm, cwd=tmp_path)
    assert "[trace] early.sent" not in proc.stderr
    if kind == "broken":
        assert proc.returncode == 2 and "settings.json" in proc.stderr
        assert fake_llm.requests == []
    else:  # a link to nothing is no settings file, but the lane leaves it to the session, whose request goes out
        assert f"[trace] early.skipped reason={settings}_exists" in proc.stderr, proc.stderr
        assert proc.returncode == 0 and proc.stdout.strip() == "Done."
        assert len(fake_llm.requests) == 1


SCHEMA = "https://json.schemastore.org/claude-code-settings.json"
RULES = json.dumps({"$schema": SCHEMA, "permissions": {"allow": ["Bash(git:*)", "Read"], "deny": [], "ask": []}})


@pytest.mark.parametrize("where", ["project", "local", "user"])
def test_a_settings_file_of_allow_rules_only_lets_the_first_request_go_early(
    where: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    file = {
        "project": tmp_path / ".claude" / "settings.json",
        "local": tmp_path / ".claude" / "settings.local.json",
        "user": config / "react-agent-mini" / "settings.json",
    }[where]
    file.parent.mkdir(parents=True)
    file.write_text(RULES)
    fake_llm.enqueue(Reply(text="Early with rules."))
    proc = run("say hello", wire="openai", server=fake_llm, cwd=tmp_path, XDG_CONFIG_HOME=str(config))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Early with rules."
    assert [line.split()[1] for line in early_lines(proc.stderr)] == ["early.sent", "early.taken"], proc.stderr


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        '{"permissions": {}}',
        '{"permissions": {"allow": ["Read"], "deny": [], "ask": []}}',
    ],
)
def test_allow_rules_only_settings_are_told_apart_from_anything_else(text: str, tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text(text)
    assert lane.allow_rules_only(file)
    for other in (
        '{"permissions": {"deny": ["Bash(rm:*)"]}}',  # deny and ask rules must be understood before any request
        '{"permissions": {"allow": ["Read"], "ask": ["WebFetch"]}}',
        '{"permissions": {"allow": "Read"}}',
        '{"permissions": {"allow": [1]}}',
        '{"permissions": {"additionalDirectories": ["/"]}}',
        '{"env": {"HTTPS_PROXY": "http://127.0.0.1:9"}}',
        '{"model": "other"}',
        "[]",
        "{",
        "",
    ):
        file.write_text(other)
        assert not lane.allow_rules_only(file), other
    file.write_text('{"permissions": {"allow": ["' + "x" * lane.SETTINGS_LIMIT + '"]}}')
    assert not lane.allow_rules_only(file)  # too big to read early


def test_a_settings_file_that_is_a_link_a_fifo_or_a_folder_is_not_read_early(tmp_path: Path) -> None:
    (tmp_path / "rules.json").write_text('{"permissions": {}}')
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "rules.json")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opening it blocks a reader that waits for a writer: the lane must not
    folder = tmp_path / "folder.json"
    folder.mkdir()
    assert [lane.allow_rules_only(path) for path in (link, fifo, folder, tmp_path / "missing.json")] == [False] * 4
