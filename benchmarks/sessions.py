"""Deterministic synthetic long agent sessions for the context-economy benchmark.

A session is a finished conversation: user turns in English and Chinese, the model's scripted answers, and the
tool calls it made with their results, as the agent's own `Message` objects. Replaying it means making one model
call at every assistant message, with the history before that message as the request.

Tool output is built from real text: Read returns real files (this repository's tracked files as of `HEAD`,
and modules of the installed Python standard library) numbered as our Read tool numbers them; Grep runs the
regex over real files and prints rg's `path:line:text`; Bash prints pytest / git / ruff / ls output made from
real test names, real source lines and real diffs; Glob lists real paths; Edit and Write carry real code in their
inputs; Skill results carry a long instruction body after the tool_result, as our Skill tool does; Echo is short.

Everything is drawn from `random.Random(seed)`: the session's shape (language of each turn, tool rounds, which
tools) from one stream that nothing else touches, so it is the same on any checkout; the content from a stream
reseeded from the first before each piece. The files are read from git's `HEAD` (falling back to the working
tree outside a checkout) and from the standard library of the running interpreter, so the same seed on the same
commit and Python gives the same session byte for byte (`Session.digest`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
import subprocess
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from react_agent_mini.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    assistant_text,
    message_to_dict,
    user_text,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_FILE_BYTES = 256 * 1024
"""Our Read refuses whole files above this; the generator never picks them."""
READ_DEFAULT_LIMIT = 2000
READ_OUTPUT_CHARS = 100_000
GREP_HEAD_LIMIT = 250
GLOB_LIMIT = 100
BASH_OUTPUT_LIMIT = 30_000
LINE_CUT = 2000

_STDLIB_SKIP = {"site-packages", "test", "tests", "idlelib", "lib2to3", "__pycache__", "ensurepip", "turtledemo"}


# ---------------------------------------------------------------------------------------------------------------
# The corpus: real files the session's tools "see"
# ---------------------------------------------------------------------------------------------------------------


def is_test_file(path: str) -> bool:
    """A pytest file of this repository's test tree (`tests/**/test_*.py`)."""
    return path.startswith("tests/") and path.rsplit("/", 1)[-1].startswith("test_") and path.endswith(".py")


@dataclass
class SourceFile:
    """A file of the synthetic workspace: its displayed path and (lazily read) text."""

    path: str
    """Path as the model sees it (relative to the workspace root)."""
    _loader: Path | None = None
    _text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            assert self._loader is not None
            self._text = self._loader.read_text(encoding="utf-8", errors="replace")
        return self._text

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@dataclass
class Corpus:
    """Repository files (from git HEAD) and standard-library modules, in a fixed order."""

    repo: list[SourceFile]
    stdlib: list[SourceFile]
    stdlib_packages: dict[str, list[SourceFile]] = field(default_factory=dict)

    @property
    def repo_tests(self) -> list[SourceFile]:
        return [f for f in self.repo if is_test_file(f.path)]

    @property
    def repo_sources(self) -> list[SourceFile]:
        return [f for f in self.repo if f.path.endswith(".py")]


def _git_head_files(root: Path) -> list[SourceFile] | None:
    """Tracked text files at HEAD, read with one `git cat-file --batch`; None outside a git checkout."""
    try:
        listing = subprocess.run(
            ["git", "-C", str(root), "ls-tree", "-r", "-l", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    wanted: list[tuple[str, str]] = []
    for line in listing.splitlines():
        meta, _, path = line.partition("\t")
        _mode, kind, sha, size = meta.split()
        if kind != "blob" or not path.endswith((".py", ".md", ".toml")) or size == "-":
            continue
        if 200 <= int(size) <= MAX_FILE_BYTES:
            wanted.append((path, sha))
    wanted.sort()
    request = "".join(f"{sha}\n" for _, sha in wanted).encode()
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "cat-file", "--batch"], input=request, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    files: list[SourceFile] = []
    pos = 0
    for path, _ in wanted:
        header_end = out.index(b"\n", pos)
        length = int(out[pos:header_end].split()[2])
        body = out[header_end + 1 : header_end + 1 + length]
        pos = header_end + 1 + length + 1
        files.append(SourceFile(path, _text=body.decode("utf-8", "replace")))
    return files


def _working_tree_files(root: Path) -> list[SourceFile]:
    files = []
    for pattern in ("src/**/*.py", "tests/**/*.py", "*.md"):
        for p in sorted(root.glob(pattern)):
            if p.is_file() and 200 <= p.stat().st_size <= MAX_FILE_BYTES:
                files.append(SourceFile(p.relative_to(root).as_posix(), p))
    return files


def load_corpus(root: Path = REPO_ROOT) -> Corpus:
    """The repository's files (git HEAD, else the working tree) and the standard library's modules."""
    repo = _git_head_files(root) or _working_tree_files(root)
    stdlib_root = Path(sysconfig.get_paths()["stdlib"])
    version = f"python{stdlib_root.name.removeprefix('python')}"
    stdlib: list[SourceFile] = []
    packages: dict[str, list[SourceFile]] = {}
    for p in sorted(stdlib_root.rglob("*.py")):
        rel = p.relative_to(stdlib_root)
        if any(part in _STDLIB_SKIP for part in rel.parts):
            continue
        size = p.stat().st_size
        if not 2000 <= size <= MAX_FILE_BYTES:
            continue
        f = SourceFile(f"lib/{version}/{rel.as_posix()}", p)
        stdlib.append(f)
        if len(rel.parts) > 1:
            packages.setdefault(rel.parts[0], []).append(f)
    return Corpus(repo, stdlib, {k: v for k, v in packages.items() if len(v) >= 4})


# ---------------------------------------------------------------------------------------------------------------
# The session
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """A finished conversation; one model call per assistant message."""

    seed: int
    turns: int
    messages: tuple[Message, ...]

    @property
    def call_indices(self) -> list[int]:
        """Indices of the assistant messages: the call at index i sees `messages[:i]` and answers `messages[i]`."""
        return [i for i, m in enumerate(self.messages) if m.role == "assistant"]

    @property
    def digest(self) -> str:
        """A short fingerprint of the whole session (same seed, same checkout, same Python → same digest)."""
        h = hashlib.sha256()
        for m in self.messages:
            h.update(json.dumps(message_to_dict(m), ensure_ascii=False, sort_keys=True).encode())
        return h.hexdigest()[:12]

    @property
    def chars(self) -> int:
        total = 0
        for m in self.messages:
            for b in m.content:
                if isinstance(b, TextBlock):
                    total += len(b.text)
                elif isinstance(b, ToolResultBlock):
                    total += len(b.content)
                elif isinstance(b, ToolUseBlock):
                    total += len(b.name) + len(json.dumps(dict(b.input), ensure_ascii=False))
        return total


def is_human(message: Message) -> bool:
    """A message the user typed (text only, not injected by the agent)."""
    return message.is_user_text and not message.meta


# ---- text pools -------------------------------------------------------------------------------------------------

_ASK_EN = [
    "Read {path} and tell me what {func} does.",
    "Why does {func} in {path} do its own caching? Explain briefly, with the relevant lines.",
    "Add type hints to {func} in {path} and keep the behaviour exactly the same.",
    "The tests in {test} started failing after my last change; find out why and fix it.",
    "Rename {func} to {func}_impl everywhere it is used, and update the docstrings that mention it.",
    "Can you check whether anything still imports {module}? If nothing does, remove the dead code.",
    "Summarise the error handling in {path}: which exceptions can escape to the caller?",
    "Please don't change the public API of {path}; only refactor the internals of {func}.",
    "Run the test suite and tell me which tests are the slowest.",
    "Write a small test for {func} that covers the empty input case.",
    "Compare how {path} and {path2} handle their arguments. Which approach should we copy?",
    "OK, continue with the next step of the plan (step {n}).",
    "Good. Now make the same change in {path2}, same style.",
    "Look at the current git diff and write a commit message for it, imperative mood, under 72 chars.",
    "What's the complexity of {func}? Could we avoid the nested loop there?",
    "Remember for the rest of this session: log messages stay in English and we never print tokens or keys.",
    "Find every place that calls {func} and list them with line numbers.",
    "Is {cls} in {path} thread-safe? If not, what would it take?",
    "Explain the control flow of {func} as a numbered list; I want to port it to another language.",
    "Use the {skill} skill on {path} and apply what it suggests, but ask before deleting anything.",
    "That's not what I meant — keep the old behaviour for {func} when the argument is None.",
    "Check that ruff and mypy are clean after your edits, and fix what they report in {path}.",
    "How big is the {module} package? Give me a rough map of its modules before we change anything.",
    "Undo the last edit to {path2}; we'll take a different approach (#{n}).",
]
_ASK_ZH = [
    "读一下 {path}，告诉我 {func} 是做什么的。",
    "{path} 里的 {func} 为什么要自己做缓存？简单解释一下，并给出相关的行。",
    "给 {path} 里的 {func} 加上类型标注，行为必须完全不变。",
    "我上次改完之后 {test} 里的测试开始失败了，帮我查一下原因并修好。",
    "把 {func} 重命名为 {func}_impl，所有调用处以及提到它的文档字符串一起改。",
    "看看还有没有地方 import {module}？如果没有，就把这些死代码删掉。",
    "总结一下 {path} 的错误处理：哪些异常可能抛给调用方？",
    "注意不要改 {path} 的公开接口，只重构 {func} 的内部实现。",
    "跑一下测试，告诉我哪些测试最慢。",
    "给 {func} 写一个小测试，覆盖空输入的情况。",
    "对比一下 {path} 和 {path2} 处理参数的方式，我们应该参考哪一个？",
    "好，继续计划里的下一步（第 {n} 步）。",
    "可以。现在在 {path2} 里做同样的修改，保持同样的风格。",
    "看一下当前的 git diff，帮我写一条提交信息，用祈使句，不超过 72 个字符。",
    "{func} 的时间复杂度是多少？那个二重循环能不能去掉？",
    "这次会话里请一直记住：日志信息统一用英文，任何情况下都不要打印 token 或密钥。",
    "找出所有调用 {func} 的地方，带上行号列出来。",
    "{path} 里的 {cls} 是线程安全的吗？如果不是，需要怎么改？",
    "把 {func} 的控制流程写成一个编号列表，我要把它移植到另一种语言。",
    "用 {skill} 这个 skill 处理一下 {path}，按它的建议改，但删除任何东西之前先问我。",
    "不是这个意思——当参数是 None 的时候，{func} 要保持原来的行为。",
    "改完之后确认 ruff 和 mypy 都是干净的，{path} 里报出来的问题一并修掉。",
    "{module} 这个包有多大？改动之前先给我一个模块的大致地图。",
    "把刚才对 {path2} 的修改撤销，我们换一种做法（#{n}）。",
]
_SPEC_EN = [
    "The function must not block the event loop for more than a few milliseconds.",
    "Errors should be reported as values the model can act on, not raised.",
    "Keep the output stable: sorted, no timestamps, no absolute paths.",
    "Anything over the size limit is cut at a line boundary with a note saying how to get the rest.",
    "Configuration comes from options first, then the environment, then the defaults.",
    "Don't add new dependencies; the standard library is enough for this.",
    "The old behaviour must stay available behind a flag until the next release.",
    "Every public function needs a docstring with one example.",
]
_SPEC_ZH = [
    "这个函数不能阻塞事件循环超过几毫秒。",
    "错误要作为模型能处理的返回值报告出来，而不是直接抛异常。",
    "输出要稳定：排好序，不带时间戳，不出现绝对路径。",
    "超过大小限制的内容要在行边界截断，并附一句说明如何取到剩下的部分。",
    "配置的优先级是：先看参数，再看环境变量，最后才用默认值。",
    "不要引入新的依赖，标准库就够用了。",
    "旧的行为在下一个版本发布之前要保留在一个开关后面。",
    "每个公开函数都要有文档字符串，并带一个例子。",
]
_PREAMBLE_EN = [
    "Let me look at {path} first.",
    "I'll search for the callers of {func}.",
    "Running the tests to see the current state.",
    "I'll check the surrounding code before changing anything.",
    "Reading the rest of the file.",
    "Let me confirm that with a quick search.",
    "Applying the change now.",
]
_PREAMBLE_ZH = [
    "先看一下 {path}。",
    "我先搜一下 {func} 的调用方。",
    "先跑一下测试，看看现在的状态。",
    "改之前先看看周围的代码。",
    "把文件剩下的部分也读一下。",
    "用一次搜索确认一下。",
    "现在开始修改。",
]
_ANSWER_EN = [
    "`{func}` in `{path}` builds its result in a single pass and returns early when the input is empty.",
    "The caching is there because the same lookup happens on every call from the hot path.",
    "I changed only the internals; the signature and the return type are exactly as before.",
    "All {n} tests pass now; the failure came from a stale fixture that still used the old name.",
    "There are {n} call sites; two of them pass keyword arguments, so the rename had to touch them too.",
    "Nothing imports it any more, so I removed the module and its test.",
    "Exceptions from the parser are caught and turned into error results; OSError still escapes from open().",
    "The nested loop is quadratic in the number of entries; a dict keyed by name makes it linear.",
    "I kept the old behaviour for None, as you asked, and added a test that pins it.",
    "ruff reported two unused imports and mypy one missing return type; all three are fixed.",
    "`{cls}` is not thread-safe: two threads can both miss the cache and both write it.",
    "The slowest tests are the ones that start a subprocess; each takes about {n}00 ms.",
    "I'd copy the approach in `{path2}`: it validates once at the edge and passes typed values inward.",
    "Here is the relevant part:",
    "Next I would add a regression test for the edge case we found, then update the changelog.",
    "One open question: should an empty pattern be an error or match everything?",
]
_ANSWER_ZH = [
    "`{path}` 里的 `{func}` 一次遍历就构造出结果，输入为空时会提前返回。",
    "之所以要缓存，是因为热路径上每次调用都会做同样的查找。",
    "我只改了内部实现，函数签名和返回类型都和原来完全一样。",
    "现在 {n} 个测试全部通过了；失败的原因是一个过期的 fixture 还在用旧的名字。",
    "一共有 {n} 个调用点，其中两个用的是关键字参数，所以重命名时也一起改了。",
    "已经没有任何地方 import 它了，所以我把这个模块和它的测试一起删掉了。",
    "解析器抛出的异常会被捕获并转成错误结果；但 open() 抛出的 OSError 仍然会抛给调用方。",
    "这个二重循环对条目数是平方复杂度；改成按名字索引的字典之后就是线性的。",
    "按你的要求，参数为 None 时保持了旧的行为，并加了一个测试把它固定下来。",
    "ruff 报了两个未使用的 import，mypy 报了一个缺少返回类型，三个都已经修好。",
    "`{cls}` 不是线程安全的：两个线程可能同时未命中缓存，然后同时写入。",
    "最慢的是那些会启动子进程的测试，每个大约 {n}00 毫秒。",
    "我建议参考 `{path2}` 的做法：在边界处校验一次，往里传的都是有类型的值。",
    "相关的代码如下：",
    "下一步我会为刚才发现的边界情况加一个回归测试，然后更新 changelog。",
    "还有一个待定的问题：空的模式应该报错，还是匹配所有内容？",
]
_COMMITS = [
    "Fix off-by-one in the pager's last page",
    "Read: stream large files line by line",
    "Grep: sort files newest first",
    "Add retry with jitter for 429 and 529",
    "Bash: kill the whole process group on timeout",
    "Session: keep the transcript append-only",
    "Tests: cover empty input for the parser",
    "Docs: explain the permission modes",
    "Refactor tool runner into smaller pieces",
    "Anthropic adapter: cache the system prompt",
    "Drop the unused compatibility shim",
    "Edit: refuse when the file changed since it was read",
]
_SKILLS = ["code-review", "python-testing", "release-notes", "refactor-safely"]
_SKILL_LINES_EN = [
    "Read the whole function before judging it; look for callers with Grep before renaming anything.",
    "Prefer small, reviewable edits. Each edit should keep the tests passing.",
    "When a test fails, read the assertion message first, then the code under test, then the test itself.",
    "Never weaken an assertion to make a test pass; find out why the value changed.",
    "Group the findings by severity: correctness, then security, then performance, then style.",
    "Quote the exact lines you are talking about, with their path and line number.",
    "For every public change, add a line to CHANGELOG.md under Unreleased.",
    "Use pytest's tmp_path for files; never write into the repository from a test.",
    "Parametrise instead of copying a test; name each case after the behaviour it checks.",
    "If a refactor changes behaviour, it is not a refactor: split it into two changes.",
]
_SKILL_LINES_ZH = [
    "评审之前先完整读一遍函数；重命名之前先用 Grep 找到所有调用方。",
    "每次修改尽量小，便于评审；每次修改之后测试都要保持通过。",
    "测试失败时，先看断言信息，再看被测代码，最后看测试本身。",
    "不要为了让测试通过而放宽断言；要查清楚值为什么变了。",
    "按严重程度分组：正确性、安全性、性能，最后才是风格。",
]
_PY_ERRORS = [
    "AttributeError: 'NoneType' object has no attribute 'get'",
    "KeyError: 'file_path'",
    "TypeError: expected str, bytes or os.PathLike object, not NoneType",
    "AssertionError: assert 3 == 4",
    "ValueError: too many values to unpack (expected 2)",
]
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)", re.M)
_CLASS_RE = re.compile(r"^\s*class\s+([A-Za-z_]\w*)", re.M)
_GREP_PATTERNS = [
    r"def \w+\(self",
    r"import ",
    r"raise \w+Error",
    r"return None",
    r"class \w+",
    r"self\.\w+ = ",
    r"TODO|FIXME|XXX",
    r"async def",
    r"isinstance\(",
    r"with open\(",
    r"@property",
    r"except \w+",
]


# ---- the generator ----------------------------------------------------------------------------------------------

_TOOL_KINDS = ["Read", "Grep", "Bash", "Glob", "Edit", "Write", "Echo", "Skill"]
_TOOL_WEIGHTS = [34, 18, 20, 6, 10, 3, 5, 4]


class _Gen:
    def __init__(self, corpus: Corpus, seed: int) -> None:
        self.c = corpus
        self.shape = random.Random(seed)
        """The session's shape: languages, rounds, tool kinds. Drawn only here, so it does not depend on the files."""
        self.rng = random.Random(seed)
        """Content; reseeded from `shape` before each piece, so a changed file cannot shift what comes later."""
        self.messages: list[Message] = []
        self.seen_ids: set[str] = set()
        self.turn_files: list[SourceFile] = []

    # -- small helpers --
    def reseed(self) -> random.Random:
        self.rng = random.Random(self.shape.getrandbits(64))
        return self.rng

    def tool_id(self) -> str:
        while True:
            tid = "toolu_" + "".join(self.rng.choices(string.ascii_letters + string.digits, k=24))
            if tid not in self.seen_ids:
                self.seen_ids.add(tid)
                return tid

    def pick_file(self) -> SourceFile:
        # Half of the reads hit the project, half the (vendored) standard library; files recur, as in real work.
        if self.turn_files and self.rng.random() < 0.25:
            return self.rng.choice(self.turn_files)
        pool = self.c.repo_sources if self.rng.random() < 0.5 and self.c.repo_sources else self.c.stdlib
        return self.rng.choice(pool)

    def names(self, f: SourceFile) -> tuple[str, str]:
        funcs = _DEF_RE.findall(f.text) or ["main"]
        classes = _CLASS_RE.findall(f.text) or ["Handler"]
        return self.rng.choice(funcs), self.rng.choice(classes)

    def fill(self, template: str, f: SourceFile | None = None) -> str:
        f = f or self.pick_file()
        f2 = self.pick_file()
        func, cls = self.names(f)
        test = self.rng.choice(self.c.repo_tests).path if self.c.repo_tests else "tests/test_main.py"
        module = Path(f.path).stem if Path(f.path).stem != "__init__" else Path(f.path).parent.name
        return template.format(
            path=f.path,
            path2=f2.path,
            func=func,
            cls=cls,
            test=test,
            module=module,
            n=self.rng.randint(2, 48),
            skill=self.rng.choice(_SKILLS),
        )

    def excerpt(self, f: SourceFile, lo: int, hi: int) -> list[str]:
        lines = f.lines
        if not lines:
            return [""]
        start = self.rng.randrange(max(1, len(lines) - lo))
        return lines[start : start + self.rng.randint(lo, hi)]

    # -- tool results --
    def read(self, f: SourceFile) -> tuple[dict[str, object], str]:
        lines = f.lines
        args: dict[str, object] = {"file_path": f.path}
        if len(lines) > 300 and self.rng.random() < 0.4:
            first = self.rng.randrange(1, len(lines) - 100)
            limit = self.rng.choice([100, 150, 200, 300, 400])
            args.update(offset=first, limit=limit)
        else:
            first, limit = 1, READ_DEFAULT_LIMIT
        shown: list[str] = []
        size = 0
        last = first - 1
        for n, line in enumerate(lines[first - 1 : first - 1 + limit], first):
            row = f"{n}\t{line[:LINE_CUT]}"
            if size + len(row) + 1 > READ_OUTPUT_CHARS:
                break
            shown.append(row)
            size += len(row) + 1
            last = n
        text = "\n".join(shown) if shown else "1\t"
        if last < len(lines):
            text += (
                f"\n\n[File has {len(lines)} lines; showing lines {first}-{last}. Read more with offset={last + 1}.]"
            )
        return args, text

    def grep(self) -> tuple[dict[str, object], str]:
        pattern = self.rng.choice(_GREP_PATTERNS)
        if self.rng.random() < 0.5 or not self.c.stdlib_packages:
            root, files = "src", [f for f in self.c.repo_sources if f.path.startswith(("src/", "tests/"))]
        else:
            pkg = self.rng.choice(sorted(self.c.stdlib_packages))
            files = self.c.stdlib_packages[pkg]
            root = files[0].path.split(f"/{pkg}/")[0] + f"/{pkg}"
        mode = self.rng.choice(["content", "content", "files_with_matches", "count"])
        args: dict[str, object] = {"pattern": pattern, "path": root, "output_mode": mode}
        regex = re.compile(pattern)
        out: list[str] = []
        total = 0
        for f in files:
            hits = [(n, line) for n, line in enumerate(f.lines, 1) if regex.search(line)]
            if not hits:
                continue
            if mode == "content":
                total += len(hits)
                out.extend(f"{f.path}:{n}:{line[:300]}" for n, line in hits)
            elif mode == "count":
                total += 1
                out.append(f"{f.path}:{len(hits)}")
            else:
                total += 1
                out.append(f.path)
        if not out:
            return args, f"No matches for {pattern}."
        shown = out[:GREP_HEAD_LIMIT]
        text = "\n".join(shown)
        if total > len(shown):
            text += f"\n[Showing {len(shown)} of {total}; use offset={len(shown)} to see more.]"
        return args, text

    def glob(self) -> tuple[dict[str, object], str]:
        if self.rng.random() < 0.5 or not self.c.stdlib_packages:
            pattern, paths = "**/*.py", [f.path for f in self.c.repo_sources]
        else:
            pkg = self.rng.choice(sorted(self.c.stdlib_packages))
            pattern, paths = f"**/{pkg}/**/*.py", [f.path for f in self.c.stdlib_packages[pkg]]
        shown = paths[:GLOB_LIMIT]
        text = "\n".join(shown)
        if len(paths) > GLOB_LIMIT:
            text += f"\n[Showing {GLOB_LIMIT} of {len(paths)} matches.]"
        return {"pattern": pattern}, text

    def bash(self) -> tuple[dict[str, object], str, bool]:
        kind = self.rng.choices(["pytest", "pytest-v", "diff", "log", "ruff", "ls", "python"], [3, 2, 3, 1, 2, 1, 1])[0]
        rng = self.rng
        if kind in ("pytest", "pytest-v"):
            tests = self.c.repo_tests or [self.pick_file()]
            failing = rng.random() < 0.35
            lines: list[str] = [
                "============================= test session starts ==============================",
                "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0",
                "rootdir: /work/main",
                f"collected {rng.randint(200, 600)} items",
                "",
            ]
            for f in tests:
                names = re.findall(r"^(?:async )?def (test_\w+)", f.text, re.M)
                if kind == "pytest-v":
                    lines += [f"{f.path}::{n} PASSED{' ' * 8}[{rng.randint(1, 99):3d}%]" for n in names]
                else:
                    lines.append(f"{f.path} {'.' * len(names)}")
            if failing:
                src = self.pick_file()
                body = self.excerpt(src, 6, 14)
                lines += [
                    "",
                    "=================================== FAILURES ===================================",
                    f"_________________________ test_{self.names(src)[0]} _________________________",
                    "",
                    *(f"    {line}" for line in body),
                    f">   {body[-1] if body else ''}",
                    f"E   {rng.choice(_PY_ERRORS)}",
                    "",
                    f"{src.path}:{rng.randint(10, 400)}: {rng.choice(_PY_ERRORS).split(':')[0]}",
                    f"=========================== 1 failed, {rng.randint(200, 600)} passed in 9.41s ===========",
                ]
            else:
                lines.append(f"============================= {rng.randint(200, 600)} passed in 8.73s =================")
            return (
                {"command": ".venv/bin/pytest" + (" -v" if kind == "pytest-v" else "")},
                _cap("\n".join(lines)),
                failing,
            )
        if kind == "diff":
            chunks = []
            for _ in range(rng.randint(1, 4)):
                f = self.pick_file()
                body = self.excerpt(f, 15, 70)
                chunks.append(f"diff --git a/{f.path} b/{f.path}\n--- a/{f.path}\n+++ b/{f.path}")
                chunks.append(f"@@ -{rng.randint(1, 500)},{len(body)} +{rng.randint(1, 500)},{len(body) + 1} @@")
                for line in body:
                    r = rng.random()
                    if r < 0.08:
                        chunks.append(f"-{line}\n+{line.replace('self', 'this', 1)}  # changed")
                    elif r < 0.12:
                        chunks.append(f"+{line}")
                    else:
                        chunks.append(f" {line}")
            return {"command": "git diff"}, _cap("\n".join(chunks)), False
        if kind == "log":
            rows = [f"{rng.getrandbits(28):07x} {rng.choice(_COMMITS)}" for _ in range(rng.randint(10, 40))]
            return {"command": "git log --oneline -n 40"}, "\n".join(rows), False
        if kind == "ruff":
            rows = []
            for _ in range(rng.randint(3, 30)):
                f = self.pick_file()
                code, msg = rng.choice(
                    [
                        ("F401", "`os` imported but unused"),
                        ("E501", "Line too long (131 > 120)"),
                        ("B008", "Do not perform function call in argument defaults"),
                        ("UP006", "Use `list` instead of `List` for type annotation"),
                        ("SIM108", "Use ternary operator instead of `if`-`else`-block"),
                    ]
                )
                n = rng.randint(1, max(1, len(f.lines)))
                line = f.lines[n - 1] if f.lines else ""
                rows.append(f"{f.path}:{n}:{rng.randint(1, 40)}: {code} {msg}\n  |\n{n} | {line}\n  |")
            rows.append(f"Found {len(rows)} errors.")
            return {"command": ".venv/bin/ruff check src tests"}, _cap("\n".join(rows)), True
        if kind == "ls":
            pkg = rng.choice(sorted(self.c.stdlib_packages)) if self.c.stdlib_packages else ""
            files = self.c.stdlib_packages.get(pkg, self.c.repo_sources)
            rows = [f"total {len(files) * 8}"]
            for f in files:
                rows.append(f"-rw-r--r-- 1 root root {len(f.text):>7} Nov 30 08:48 {Path(f.path).name}")
            return {"command": f"ls -la {Path(files[0].path).parent}"}, "\n".join(rows), False
        f = self.pick_file()
        rows = [f"{n:>6} {name}" for n, name in enumerate(sorted(set(_DEF_RE.findall(f.text)))[:80], 1)]
        return {"command": f"python scripts/list_defs.py {f.path}"}, "\n".join(rows) or "(no output)", False

    def skill(self) -> tuple[dict[str, object], str, str]:
        name = self.rng.choice(_SKILLS)
        rng = random.Random(name)  # a skill's body is the same every time it is loaded
        lines = [f"# {name}", "", "Follow these rules while the skill is active.", ""]
        for i in range(rng.randint(25, 60)):
            pool = _SKILL_LINES_ZH if i % 3 == 2 else _SKILL_LINES_EN
            lines.append(f"{i + 1}. {rng.choice(pool)}")
        body = f"Base directory for this skill: .agents/skills/{name}\n\n" + "\n".join(lines)
        return {"skill": name}, f"Launching skill: {name}", body

    # -- one tool call --
    def tool_call(self, kind: str, zh: bool) -> tuple[ToolUseBlock, ToolResultBlock, list[ContentBlock]]:
        tid = self.tool_id()
        after: list[ContentBlock] = []
        is_error = False
        args: dict[str, object]
        if kind == "Read":
            f = self.pick_file()
            self.turn_files.append(f)
            if self.rng.random() < 0.03:
                args, text, is_error = {"file_path": f.path + ".bak"}, f"File not found: {f.path}.bak", True
            else:
                args, text = self.read(f)
        elif kind == "Grep":
            args, text = self.grep()
        elif kind == "Glob":
            args, text = self.glob()
        elif kind == "Bash":
            args, text, is_error = self.bash()
        elif kind in ("Edit", "Write"):
            f = self.turn_files[-1] if self.turn_files else self.pick_file()
            if kind == "Edit":
                old = "\n".join(self.excerpt(f, 3, 25))
                new = old.replace("return", "return  # checked", 1) + "\n"
                args = {"file_path": f.path, "old_string": old, "new_string": new}
                text = f"Edited {f.path} (1 replacement).\n" + "\n".join(
                    f"{n}\t{line}" for n, line in enumerate(new.splitlines()[:8], self.rng.randint(1, 300))
                )
            else:
                content = "\n".join(self.excerpt(f, 30, 150)) + "\n"
                args = {"file_path": f.path.replace(".py", "_new.py"), "content": content}
                text = f"Created {args['file_path']} ({content.count(chr(10))} lines)."
        elif kind == "Echo":
            msg = self.fill(self.rng.choice(_PREAMBLE_ZH if zh else _PREAMBLE_EN))
            args, text = {"message": msg}, msg
        else:
            args, text, body = self.skill()
            after.append(TextBlock(body))
        return ToolUseBlock(tid, kind, args), ToolResultBlock(tid, text, is_error), after

    # -- text --
    def user_message(self, zh: bool, turn: int) -> str:
        text = self.fill(self.rng.choice(_ASK_ZH if zh else _ASK_EN))
        r = self.rng.random()
        if r < 0.12:  # a pasted traceback
            frames = []
            for _ in range(self.rng.randint(2, 6)):
                g = self.pick_file()
                line = self.rng.choice(g.lines or [""]).strip()
                frames.append(f'  File "/work/main/{g.path}", line {self.rng.randint(1, 900)}, in {self.names(g)[0]}')
                frames.append(f"    {line}")
            text += "\n\n```\nTraceback (most recent call last):\n" + "\n".join(frames)
            text += f"\n{self.rng.choice(_PY_ERRORS)}\n```"
        elif r < 0.22:  # a spec with requirements
            pool = _SPEC_ZH if zh else _SPEC_EN
            text += "\n\n" + ("要求：" if zh else "Requirements:") + "\n"
            text += "\n".join(f"- {s}" for s in self.rng.sample(pool, self.rng.randint(3, len(pool))))
        elif r < 0.30:  # a snippet to look at
            f = self.pick_file()
            text += "\n\n```python\n" + "\n".join(self.excerpt(f, 5, 30)) + "\n```"
        return text

    def answer(self, zh: bool) -> str:
        pool = _ANSWER_ZH if zh else _ANSWER_EN
        f = self.turn_files[-1] if self.turn_files else None
        parts = [self.fill(t, f) for t in self.rng.sample(pool, self.rng.randint(2, 7))]
        if self.rng.random() < 0.35:
            bullets = [self.fill(t, f) for t in self.rng.sample(pool, self.rng.randint(2, 6))]
            parts.append("\n".join(f"- {b}" for b in bullets))
        if f is not None and self.rng.random() < 0.4:
            parts.append("```python\n" + "\n".join(self.excerpt(f, 4, 30)) + "\n```")
        return "\n\n".join(parts)

    # -- a turn --
    def turn(self, number: int) -> None:
        shape = self.shape
        zh = shape.random() < 0.5
        self.turn_files = []
        self.reseed()
        self.messages.append(user_text(self.user_message(zh, number)))
        rounds = shape.choices([0, 1, 2, 3, 4, 5, 6], [18, 36, 24, 11, 7, 3, 1])[0]
        for _ in range(rounds):
            uses: list[ToolUseBlock] = []
            results: list[ToolResultBlock] = []
            after: list[ContentBlock] = []
            for _ in range(shape.choices([1, 2, 3], [70, 20, 10])[0]):
                kind = shape.choices(_TOOL_KINDS, _TOOL_WEIGHTS)[0]
                self.reseed()
                use, result, extra = self.tool_call(kind, zh)
                uses.append(use)
                results.append(result)
                after.extend(extra)
            blocks: list[ContentBlock] = []
            if shape.random() < 0.5:
                rng = self.reseed()
                blocks.append(TextBlock(self.fill(rng.choice(_PREAMBLE_ZH if zh else _PREAMBLE_EN))))
            self.messages.append(Message("assistant", (*blocks, *uses)))
            self.messages.append(Message("user", (*results, *after)))
        self.reseed()
        self.messages.append(assistant_text(self.answer(zh)))


def _cap(text: str) -> str:
    """Bash's output cap: head and tail kept, the middle replaced by a count."""
    if len(text) <= BASH_OUTPUT_LIMIT:
        return text
    half = BASH_OUTPUT_LIMIT // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


def generate_session(turns: int = 150, seed: int = 0, corpus: Corpus | None = None) -> Session:
    """A session of `turns` user turns (≈ 2.7 model calls each), fully determined by `seed` and the corpus."""
    gen = _Gen(corpus or load_corpus(), seed)
    for number in range(turns):
        gen.turn(number)
    return Session(seed, turns, tuple(gen.messages))


def validate(messages: Sequence[Message], *, alternate: bool = True) -> list[str]:
    """Problems that would make `messages` an invalid history (empty when valid).

    Valid: starts with a user message, every tool_use is answered by a tool_result in the very next message (and
    only there), tool_result blocks come before any text in their message, tool_use ids are unique, and (when
    `alternate`) roles alternate."""
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("does not start with a user message")
    seen: set[str] = set()
    for i, m in enumerate(messages):
        if alternate and i and m.role == messages[i - 1].role:
            problems.append(f"message {i}: two {m.role} messages in a row")
        for u in m.tool_uses:
            if u.id in seen:
                problems.append(f"message {i}: duplicate tool_use id {u.id}")
            seen.add(u.id)
        wanted = {u.id for u in messages[i - 1].tool_uses} if i and m.role == "user" else set()
        got = [r.tool_use_id for r in m.tool_results]
        if m.role == "user" and (set(got) != wanted or len(got) != len(set(got))):
            problems.append(f"message {i}: tool_results {sorted(got)} do not answer the tool_uses {sorted(wanted)}")
        kinds = [isinstance(b, ToolResultBlock) for b in m.content]
        if kinds != sorted(kinds, reverse=True):
            problems.append(f"message {i}: text before a tool_result")
    if messages and messages[-1].tool_uses:
        problems.append("ends with unanswered tool_uses")
    return problems
