"""Glob and Grep on real files, through the real ripgrep: confinement, ignore rules, ordering, output formats,
paging, errors, the Rust regex dialect, and what the tools say when rg is missing or cannot start."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from react_agent_mini.search_result import SearchResult
from react_agent_mini.tools.base import ToolContext, ToolInputError, ToolOutput
from react_agent_mini.tools.builtin import ripgrep
from react_agent_mini.tools.builtin.glob import GlobTool
from react_agent_mini.tools.builtin.glob_pattern import translate_glob
from react_agent_mini.tools.builtin.grep import GrepTool
from react_agent_mini.tools.builtin.grep_search import SearchSpec, parse_rg_output

RG = ripgrep.find_rg()

# Files in creation order; each gets a distinct mtime, later = newer, so "newest first" is this list reversed.
FILES: dict[str, str | bytes] = {
    ".gitignore": "*.log\nbuild/\n!keep.log\n/generated.py\n",
    "README.md": "# Project\nneedle in readme\n",
    "app.py": "import os\ndef needle_one():\n    return 1\n\ndef other():\n    pass\n# needle again\nx = 1\ny = 2\n"
    "z = 3\nneedle_last = True\n",
    "generated.py": "needle generated\n",
    "excluded.txt": "needle excluded\n",
    "debug.log": "needle log\n",
    "keep.log": "needle keep\n",
    "build/out.py": "needle build\n",
    ".env": "NEEDLE=1\nneedle hidden\n",
    ".config/settings.json": '{"needle": true}\n',
    "src/.gitignore": "secret.py\n*.tmp\n",
    "src/main.py": "from util import helpers\n\ndef main():\n    helpers.needle()\n",
    "src/secret.py": "needle secret\n",
    "src/cache.tmp": "needle tmp\n",
    "src/util/helpers.py": "def needle():\n    return 'Needle'\n",
    "src/util/strings.ts": "export const needle = 'x';\ninterface{}\n",
    "src/web/app.tsx": "const Needle = () => null;\n",
    "src/web/index.js": "// no match here\n",
    "docs/guide.md": "Guide\n\nneedle: see app.py\n",
    "data/blob.bin": b"needle\0binary\n",
    "data/crlf.txt": b"needle crlf\r\nsecond\r\n",
    "data/bom.txt": "\ufeffneedle bom\n".encode(),
    "data/long.txt": "needle " + "x" * 800 + "\n",
    "sub/nested/deep/file.py": "a\nb needle\nc\nd\ne\nf needle\ng\n",
}


def write_tree(root: Path, files: dict[str, str | bytes], start: int = 1_700_000_000) -> None:
    for i, (name, content) in enumerate(files.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        os.utime(path, (start + i * 10, start + i * 10))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a git dir, nested ignore files, hidden, binary and odd files, and links out of it."""
    root = tmp_path / "ws"
    root.mkdir()
    write_tree(root, FILES)
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main needle\n")
    (root / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "needle.py").write_text("needle outside\n")
    (root / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "src" / "link_file.py").symlink_to(outside / "needle.py")
    return root


async def grep(root: Path, **raw: Any) -> ToolOutput:
    tool = GrepTool()
    return await tool.call(tool.validate(raw), ToolContext(cwd=root))


async def glob(root: Path, **raw: Any) -> ToolOutput:
    tool = GlobTool()
    return await tool.call(tool.validate(raw), ToolContext(cwd=root))


def lines(output: ToolOutput) -> list[str]:
    assert not output.is_error, output.content
    return output.content.splitlines()


# --- Glob -------------------------------------------------------------------------------------------------


async def test_glob_depth_ignore_rules_and_newest_first(ws: Path) -> None:
    found = lines(await glob(ws, pattern="**/*.py"))
    # Not: generated.py (/generated.py), build/ (dir rule), src/secret.py (nested .gitignore), symlinks.
    assert found == ["sub/nested/deep/file.py", "src/util/helpers.py", "src/main.py", "app.py"]
    assert lines(await glob(ws, pattern="*.py")) == ["app.py"]


async def test_glob_hidden_included_git_and_excluded_not(ws: Path) -> None:
    found = lines(await glob(ws, pattern="**/*"))
    assert ".env" in found and ".config/settings.json" in found and "keep.log" in found
    assert not [f for f in found if f.startswith(".git/") or f in ("excluded.txt", "debug.log", "src/cache.tmp")]
    assert not [f for f in found if "link" in f or "outside" in f]
    assert found[0] == "sub/nested/deep/file.py" and found[-1] == ".gitignore"


async def test_glob_path_braces_classes(ws: Path) -> None:
    assert lines(await glob(ws, pattern="*.py", path="src")) == ["src/main.py"]
    assert lines(await glob(ws, pattern="**/*.{ts,tsx}", path="src")) == [
        "src/web/app.tsx",
        "src/util/strings.ts",
    ]
    assert lines(await glob(ws, pattern="src/*/[hs]*.?s")) == ["src/util/strings.ts"]
    assert lines(await glob(ws, pattern=str(ws / "src" / "**" / "*.js"))) == ["src/web/index.js"]


@pytest.mark.parametrize(
    ("pattern", "path", "named"),
    [
        ("../*", None, "../*"),
        ("/etc/*", None, "/etc/*"),
        ("..\\..", None, "..\\.."),
        ("../outside/*.py", None, "../outside/*.py"),
        ("link_out/*.py", None, "link_out/*.py"),
        ("*.py", "link_out", "link_out"),
        ("*", "..", ".."),
    ],
)
async def test_glob_outside_the_workspace_finds_nothing(ws: Path, pattern: str, path: str | None, named: str) -> None:
    raw = {"pattern": pattern} | ({"path": path} if path else {})
    output = await glob(ws, **raw)
    assert output == ToolOutput(f"{named} resolves outside the workspace; Glob only searches inside {ws}.")


async def test_glob_back_inside_through_dotdot_is_fine(ws: Path) -> None:
    assert lines(await glob(ws, pattern="../ws/src/*.py")) == ["src/main.py"]


async def test_glob_cap_and_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"many/f{i:03}.txt": "" for i in range(130)})
    found = lines(await glob(tmp_path, pattern="many/*.txt"))
    assert found[:2] == ["many/f129.txt", "many/f128.txt"] and len(found) == 101
    assert found[-1] == "(Showing 100 of 130 matches, newest first. Narrow the pattern or the path to see the rest.)"


async def test_glob_ties_by_path_and_no_match(tmp_path: Path) -> None:
    for name in ("b.txt", "a.txt", "c.txt"):
        (tmp_path / name).write_text("")
        os.utime(tmp_path / name, (1_000_000, 1_000_000))
    assert lines(await glob(tmp_path, pattern="*.txt")) == ["a.txt", "b.txt", "c.txt"]
    assert await glob(tmp_path, pattern="*.rs") == ToolOutput("No files match *.rs.")


async def test_glob_bad_input(ws: Path) -> None:
    assert (await glob(ws, pattern="*.{py")).is_error
    assert await glob(ws, pattern="*", path="nope") == ToolOutput("Path does not exist: nope", is_error=True)
    assert (await glob(ws, pattern="*", path="app.py")).is_error


# --- Grep -------------------------------------------------------------------------------------------------


async def test_grep_files_newest_first_respecting_ignores(ws: Path) -> None:
    found = lines(await grep(ws, pattern="needle"))
    assert found == [
        "sub/nested/deep/file.py",
        "data/long.txt",
        "data/bom.txt",
        "data/crlf.txt",
        "docs/guide.md",
        "src/util/strings.ts",
        "src/util/helpers.py",
        "src/main.py",
        ".config/settings.json",
        ".env",
        "keep.log",
        "app.py",
        "README.md",
    ]


async def test_grep_content_line_numbers_and_context(ws: Path) -> None:
    assert lines(await grep(ws, pattern="needle", path="app.py", output_mode="content")) == [
        "app.py:2:def needle_one():",
        "app.py:7:# needle again",
        "app.py:11:needle_last = True",
    ]
    assert lines(await grep(ws, pattern="needle", path="app.py", output_mode="content", **{"-n": False})) == [
        "app.py:def needle_one():",
        "app.py:# needle again",
        "app.py:needle_last = True",
    ]
    with_context = await grep(ws, pattern="needle", path="app.py", output_mode="content", **{"-C": 1})
    assert lines(with_context) == [
        "app.py-1-import os",
        "app.py:2:def needle_one():",
        "app.py-3-    return 1",
        "--",
        "app.py-6-    pass",
        "app.py:7:# needle again",
        "app.py-8-x = 1",
        "--",
        "app.py-10-z = 3",
        "app.py:11:needle_last = True",
    ]
    after_only = await grep(ws, pattern="needle", path="sub", output_mode="content", **{"-A": 1, "-C": 5})
    assert lines(after_only) == [
        "sub/nested/deep/file.py-1-a",
        "sub/nested/deep/file.py:2:b needle",
        "sub/nested/deep/file.py-3-c",
        "sub/nested/deep/file.py-4-d",
        "sub/nested/deep/file.py-5-e",
        "sub/nested/deep/file.py:6:f needle",
        "sub/nested/deep/file.py-7-g",
    ]


async def test_grep_content_across_files_sorted_by_path(ws: Path) -> None:
    found = lines(await grep(ws, pattern="needle\\(", output_mode="content", **{"-B": 1}))
    assert found == [
        "src/main.py-3-def main():",
        "src/main.py:4:    helpers.needle()",
        "--",
        "src/util/helpers.py:1:def needle():",
    ]


async def test_grep_count_case_glob_type(ws: Path) -> None:
    assert lines(await grep(ws, pattern="needle", output_mode="count", path="app.py")) == ["app.py:3"]
    assert await grep(ws, pattern="NEEDLE", glob="*.py", output_mode="count") == ToolOutput(
        "No matches for NEEDLE.", details=SearchResult(0, 0, mode="count")
    )
    # As with rg, a glob reaches files an ignore rule names (not ones inside ignored directories).
    assert lines(await grep(ws, pattern="NEEDLE", glob="*.py", output_mode="count", **{"-i": True})) == [
        "app.py:3",
        "generated.py:1",
        "src/main.py:1",
        "src/secret.py:1",
        "src/util/helpers.py:2",
        "sub/nested/deep/file.py:2",
    ]
    assert lines(await grep(ws, pattern="needle", glob="*.{ts,tsx}, *.md", output_mode="count", **{"-i": True})) == [
        "README.md:1",
        "docs/guide.md:1",
        "src/util/strings.ts:1",
        "src/web/app.tsx:1",
    ]
    assert lines(await grep(ws, pattern="needle", type="ts")) == ["src/util/strings.ts"]
    assert lines(await grep(ws, pattern="needle", glob="!*.py", path="src")) == ["src/util/strings.ts"]


async def test_grep_odd_files(ws: Path) -> None:
    data = lines(await grep(ws, pattern="needle", path="data", output_mode="content"))
    cut = "x" * (500 - len("needle "))
    assert data == [
        "data/bom.txt:1:needle bom",
        "data/crlf.txt:1:needle crlf",
        f"data/long.txt:1:needle {cut} [... 307 more characters]",
    ]
    binary = await grep(ws, pattern="needle", path="data/blob.bin")
    assert binary == ToolOutput("No matches for needle: data/blob.bin is a binary file.")


async def test_grep_multiline(ws: Path) -> None:
    spanning = await grep(ws, pattern="return 1\\n\\ndef", multiline=True, output_mode="content")
    assert lines(spanning) == ["app.py:3:    return 1", "app.py:4:", "app.py:5:def other():"]
    assert lines(await grep(ws, pattern="b needle\\nc|g", multiline=True, output_mode="count", path="sub")) == [
        "sub/nested/deep/file.py:2"
    ]


async def test_grep_paging(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.txt": "hit\n" * 5, "b.txt": "hit\n" * 5})
    first = lines(await grep(tmp_path, pattern="hit", output_mode="content", head_limit=3))
    assert first == [
        "a.txt:1:hit",
        "a.txt:2:hit",
        "a.txt:3:hit",
        "[Showing results 1..3 of 10. Use offset=3 to see more.]",
    ]
    middle = lines(await grep(tmp_path, pattern="hit", output_mode="content", head_limit=3, offset=4))
    assert middle == [
        "a.txt:5:hit",
        "b.txt:1:hit",
        "b.txt:2:hit",
        "[Showing results 5..7 of 10. Use offset=7 to see more.]",
    ]
    last = lines(await grep(tmp_path, pattern="hit", output_mode="content", head_limit=0, offset=8))
    assert last == ["b.txt:4:hit", "b.txt:5:hit", "[Showing results 9..10 of 10.]"]
    assert len(lines(await grep(tmp_path, pattern="hit", output_mode="content", head_limit=0))) == 10
    assert lines(await grep(tmp_path, pattern="hit", head_limit=1)) == [
        "b.txt",
        "[Showing results 1..1 of 2. Use offset=1 to see more.]",
    ]
    assert lines(await grep(tmp_path, pattern="hit", output_mode="count", offset=5)) == [
        "[No results past offset 5: the search found 2.]"
    ]


async def test_grep_errors_and_no_match(ws: Path) -> None:
    assert await grep(ws, pattern="zzz") == ToolOutput("No matches for zzz.", details=SearchResult(0, 0))
    assert await grep(ws, pattern="x", path="missing/dir") == ToolOutput(
        "Path does not exist: missing/dir", is_error=True
    )
    cases = {
        "(": "unclosed group",
        "interface{}": "repetition quantifier expects a valid decimal",
        "a{2": "unclosed counted repetition",
        "*x": "repetition operator missing expression",
        "(?=x)": "look-around, including look-ahead and look-behind, is not supported",
        "(a)\\1": "backreferences are not supported",
        "[a": "unclosed character class",
    }
    for pattern, reason in cases.items():
        assert await grep(ws, pattern=pattern) == ToolOutput(f"Invalid regex {pattern}: {reason}", is_error=True)
    newline = await grep(ws, pattern="a\\nb")
    assert newline.is_error and newline.content.startswith('Invalid regex a\\nb: the literal "\\n" is not allowed')
    unknown = await grep(ws, pattern="x", type="nosuchtype")
    assert unknown.is_error and unknown.content.startswith('Unknown file type "nosuchtype".')
    assert lines(await grep(ws, pattern="interface\\{\\}")) == ["src/util/strings.ts"]


async def test_nul_characters_are_errors_not_exceptions(ws: Path) -> None:
    grep_tool, glob_tool = GrepTool(), GlobTool()
    cases: list[tuple[Any, dict[str, str]]] = [
        (grep_tool, {"pattern": "a\0b"}),
        (grep_tool, {"pattern": "a", "path": "x\0y"}),
        (glob_tool, {"pattern": "*\0.py"}),
        (glob_tool, {"pattern": "*.py", "path": "x\0y"}),
    ]
    for tool, raw in cases:
        with pytest.raises(ToolInputError, match="contains a NUL character"):  # refused before anything runs
            tool.validate(raw)
        # and the tools themselves never raise on one either (a caller that skips validation)
        output = await tool.call(msgspec.convert(raw, tool.args_model), ToolContext(cwd=ws))
        assert output.is_error, output
        assert "NUL" in output.content or "null byte" in output.content, output


# --- the Rust regex dialect and rg's ignore rules, as the tools show them -----------------------------------

DIALECT_CASES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "output_mode": "content"},
    {"pattern": "needle", "output_mode": "count"},
    {"pattern": "e", "output_mode": "content", "-C": 2, "head_limit": 0},
    {"pattern": "^def|^\\s+return", "output_mode": "content", "-B": 2, "-A": 1, "-n": False},
    {"pattern": "NEEDLE", "-i": True, "output_mode": "content"},
    {"pattern": "\\w+\\(\\)", "glob": "src/**/*.py", "output_mode": "content"},
    {"pattern": "needle", "type": "py,md", "output_mode": "count"},
    {"pattern": "needle", "glob": "*.log"},  # a glob keeps the files it names, even gitignored ones (as rg)
    {"pattern": "[[:digit:]]+|\\x{41}|(?<word>true)\\z", "output_mode": "content"},
    {"pattern": "\\)\\n\\s*\\n", "multiline": True, "output_mode": "count"},
    {"pattern": "(?s)needle.", "multiline": True, "output_mode": "content"},
    {"pattern": "", "output_mode": "count", "path": "src"},
    {"pattern": "^$|^x = 1$", "path": "app.py"},  # the empty "line" after a final newline is no line
    {"pattern": "^$"},
    {"pattern": "e", "output_mode": "content", "offset": 7, "head_limit": 9, "-A": 1},
]


@pytest.mark.parametrize("case", DIALECT_CASES, ids=[str(i) for i in range(len(DIALECT_CASES))])
async def test_grep_finds_something_for_every_kind_of_search(ws: Path, case: dict[str, Any]) -> None:
    found = await grep(ws, **case)
    assert not found.is_error and found.content != "No matches for needle."


async def test_glob_lists_what_rg_files_lists(ws: Path) -> None:
    """Glob against `rg --files` run directly, on a tree with every kind of ignore rule."""
    write_tree(
        ws,
        {
            "deep/.ignore": "*.md\n!keep.md\n",
            "deep/a.md": "",
            "deep/keep.md": "",
            "deep/.rgignore": "keep.md\n",
            "deep/x/.gitignore": "/only_here.txt\n**/tmp/**\n",
            "deep/x/only_here.txt": "",
            "deep/x/y/only_here.txt": "",
            "deep/x/tmp/a/b.txt": "",
            "deep/x/[br]ace{s}.txt": "",
        },
    )
    listed = subprocess.run(
        [str(RG), *ripgrep.COMMON_ARGS, "--files", ripgrep.SKIP_GIT], cwd=ws, capture_output=True, check=True
    ).stdout
    expected = sorted(p.decode() for p in listed.split(b"\0") if p)
    globbed = sorted(lines(await glob(ws, pattern="**/*")))
    assert globbed == expected
    assert "deep/x/y/only_here.txt" in globbed and "deep/a.md" not in globbed and "deep/keep.md" not in globbed


# --- engine plumbing ---------------------------------------------------------------------------------------


async def test_without_a_runnable_rg_the_tools_say_so(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "rg"
    broken.write_text("not an executable")  # exec fails with OSError
    ctx = ToolContext(cwd=ws)
    grep_tool, glob_tool = GrepTool(rg_path=str(broken)), GlobTool(rg_path=str(broken))
    found = await grep_tool.call(grep_tool.validate({"pattern": "needle", "path": "src"}), ctx)
    assert found == ToolOutput(f"Grep could not start ripgrep ({broken}): Permission denied", is_error=True)
    listed = await glob_tool.call(glob_tool.validate({"pattern": "*.py"}), ctx)
    assert listed == ToolOutput(f"Glob could not start ripgrep ({broken}): Permission denied", is_error=True)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", "")
    ripgrep.find_rg.cache_clear()
    try:
        for name, output in (("Grep", await grep(ws, pattern="needle")), ("Glob", await glob(ws, pattern="*.py"))):
            assert output.is_error and output.content.startswith(f"{name} needs ripgrep (rg), which was found")
            assert "ripgrep==14.1.0" in output.content
    finally:
        ripgrep.find_rg.cache_clear()


@pytest.mark.parametrize("mode", ["files_with_matches", "count", "content"])
async def test_runaway_output_is_cut(ws: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    whole = set(lines(await grep(ws, pattern="needle", output_mode=mode)))
    monkeypatch.setattr(ripgrep, "MAX_OUTPUT_BYTES", 40)
    found = lines(await grep(ws, pattern="needle", output_mode=mode))
    assert found[-1].startswith("[The search produced too much output and was stopped early")
    assert found[:-1] and set(found[:-1]) <= whole  # whole records only: nothing half-cut


def test_cut_output_keeps_whole_records(tmp_path: Path) -> None:
    def spec(mode: str) -> SearchSpec:
        return SearchSpec(tmp_path, tmp_path, "x", mode, False, False, 0, 0, [], [])  # type: ignore[arg-type]

    assert parse_rg_output(spec("files_with_matches"), b"a.py\0b/c.py\0d/e", True).files == [b"a.py", b"b/c.py"]
    counts = parse_rg_output(spec("count"), b"a.py\x002\nb.py\x003\nc.p", True).counts
    assert counts == [(b"a.py", 2), (b"b.py", 3)]
    content = parse_rg_output(spec("content"), b"a.py\x001:x\n2:x\n\nb.py\x004:x\n5:", True)
    assert [(p, buf[start:end]) for p, buf, start, end in content.blocks] == [(b"a.py", b"1:x\n2:x")]
    assert content.entries == 2 and content.truncated


async def test_cancelling_kills_rg(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    fake = tmp_path / "fake-rg"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 30\n")
    fake.chmod(0o755)
    task = asyncio.create_task(ripgrep.run_rg(str(fake), [], [], tmp_path))
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped, not left running


def test_find_rg_prefers_the_interpreters_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "rg"
    local.write_text("#!/bin/sh\n")
    local.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", "")
    ripgrep.find_rg.cache_clear()
    try:
        assert ripgrep.find_rg() == str(local)
        local.unlink()
        ripgrep.find_rg.cache_clear()
        assert ripgrep.find_rg() is None
    finally:
        ripgrep.find_rg.cache_clear()


def test_tool_metadata() -> None:
    grep_tool, glob_tool = GrepTool(), GlobTool()
    assert (grep_tool.name, glob_tool.name) == ("Grep", "Glob")
    for tool in (grep_tool, glob_tool):
        assert tool.read_only and tool.concurrency_safe
        assert tool.describe_call({"pattern": "x.*y"}) == "x.*y"
    assert set(grep_tool.input_schema()["properties"]) == {
        "pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "multiline", "head_limit",
        "offset",
    }  # fmt: skip
    assert glob_tool.input_schema()["required"] == ["pattern"]
    assert grep_tool.validate({"pattern": "x", "-C": "2", "-i": True}).context == 2


# --- pieces ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*.py", ["a.py", ".x.py"], ["d/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "d/e/a.py"], ["a.pyi"]),
        ("src/**", ["src/a", "src/b/c"], ["src", "lib/a"]),
        ("a/**/b", ["a/b", "a/x/y/b"], ["a/xb"]),
        ("?.[!a-c]", ["x.d"], ["x.a", "xy.d", "x./"]),
        ("*.{ts,tsx}", ["a.ts", "a.tsx"], ["a.t"]),
        ("\\*.txt", ["*.txt"], ["a.txt"]),
    ],
)
def test_translate_glob(pattern: str, yes: list[str], no: list[str]) -> None:
    regex = re.compile(translate_glob(pattern), re.DOTALL)
    assert [p for p in yes if regex.fullmatch(p)] == yes
    assert [p for p in no if regex.fullmatch(p)] == []


async def test_gitignore_rules(tmp_path: Path) -> None:
    rules = "# comment\n\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.md\n\\#hash\ntrailing \n"
    names = ["a/b.log", "keep.log", "x/build/f.txt", "y/build", "top.txt", "x/top.txt", "docs/a.md", "x/docs/a.md"]
    write_tree(tmp_path, {".gitignore": rules, **dict.fromkeys([*names, "#hash", "trailing"], "")})
    # Ignored: *.log but keep.log, the directory build/ (not a file so named), /top.txt and docs/*.md only beside
    # the .gitignore, an escaped `#`, a name with its trailing space dropped.
    assert sorted(lines(await glob(tmp_path, pattern="**/*"))) == [
        ".gitignore",
        "keep.log",
        "x/docs/a.md",
        "x/top.txt",
        "y/build",
    ]


async def test_rust_regex_syntax(tmp_path: Path) -> None:
    """What the Rust dialect has and Python's `re` spells otherwise, or lacks: named groups `(?<n>…)`, `\\z`,
    POSIX classes, `\\x{…}`, spaces in a counted repetition, `[^\\n]` without multiline, Unicode classes."""
    write_tree(tmp_path, {"t.txt": "ab\nx9\nA\naa\nλ\n"})
    cases = {
        "(?<n>ab)\\z": ["t.txt:1:ab"],
        "[[:digit:]x]9": ["t.txt:2:x9"],
        "\\x{41}": ["t.txt:3:A"],
        "^a{ 2 , 3 }$": ["t.txt:4:aa"],
        "^[^\\n]b": ["t.txt:1:ab"],
        "^\\p{Greek}$": ["t.txt:5:λ"],
    }
    for pattern, expected in cases.items():
        assert lines(await grep(tmp_path, pattern=pattern, output_mode="content")) == expected, pattern


async def test_ignore_files_above_the_workspace_count(tmp_path: Path) -> None:
    """Ignore files above the search path count, and (rg with --no-require-git) a .gitignore above the repository's
    root still does: every pattern agrees, however deep (the removed Python walker, which Glob used for shallow
    patterns, stopped at the root, so `*` listed a.txt where `**/*` did not)."""
    write_tree(tmp_path, {".gitignore": "a.txt\n", ".ignore": "b.txt\n", "repo/sub/a.txt": "", "repo/sub/b.txt": ""})
    sub = tmp_path / "repo" / "sub"
    for pattern in ("*", "**/*"):
        assert await glob(sub, pattern=pattern) == ToolOutput(f"No files match {pattern}.")  # no .git: both apply
    (tmp_path / "repo" / ".git").mkdir()
    for pattern in ("*", "**/*"):
        assert await glob(sub, pattern=pattern) == ToolOutput(f"No files match {pattern}.")
    (sub / "c.txt").write_text("")
    assert lines(await glob(sub, pattern="*")) == lines(await glob(sub, pattern="**/*")) == ["c.txt"]
