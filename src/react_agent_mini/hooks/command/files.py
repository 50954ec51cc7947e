"""The workspace files a hook command runs, so that the sandbox can keep them read-only to Bash commands.

A hook runs on this machine, outside the sandbox, at its event: `sh scripts/fmt.sh` after every Bash call,
`make -s lint` at Stop, `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.py`. Whatever a sandboxed command writes into
those files would run there too. From the command's text alone, cheaply:
- the command is split into words as the shell would quote them (`shlex`), and into simple commands at `;`, `&&`,
  `||`, `|`, `&` and parentheses; `$CLAUDE_PROJECT_DIR` and `${CLAUDE_PROJECT_DIR}` become the workspace, a
  leading `~` the home directory, and a word with `*`, `?` or `[` is globbed; `sh -c '…'` and `bash -c '…'` are
  read as command lines themselves;
- `named_paths`: every word that names an existing file or folder inside the workspace (relative words from the
  workspace, where hooks run): the script an interpreter is given (`sh x.sh`, `python tools/x.py`, `node x.js`),
  a program named by path (`./check`, `.venv/bin/ruff`), a folder a test runner is pointed at; a program word
  without a slash that `PATH` finds inside the workspace (an activated `.venv/bin`); and what `run_paths` names
  that exists;
- `run_paths`: what the command would run, there or not yet — the script word of an interpreter (`sh`, `bash`,
  `python`, `node`, ...), a program word with a slash, `python -m pkg`'s `pkg/` and `pkg.py`, `package.json`
  for `npm`/`pnpm`/`yarn`/`bun`, and for `make` every makefile it would look for (`-f`'s, else `GNUmakefile`,
  `makefile` and `Makefile` in `-C`'s folder: a `GNUmakefile` put beside your `Makefile` is read first) and the
  files they `include` by plain names. The sandbox keeps the ones that exist read-only and moves aside one a
  command creates.
The workspace itself is never counted (`ruff format .` would make everything read-only). This does not follow what
a script itself runs or imports, nor a name a hook builds at run time.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .config import CommandHook

PROJECT_DIR_WORDS = ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
INTERPRETERS = SHELLS | {"node", "deno", "bun", "perl", "ruby", "php", "lua", "Rscript", "tsx", "ts-node"}
PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
INLINE = frozenset({"-c", "-e", "-m", "--eval", "-p", "--print"})
"""Options after which an interpreter runs no script file."""
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
PACKAGE_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
GLOB_LIMIT = 100
"""Paths one globbed word may add."""
_PUNCTUATION = ";&|()"
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIXES = frozenset({"env", "exec", "command", "nice", "nohup", "time"})
_INCLUDE = re.compile(r"^\s*-?s?include\s+(.+?)\s*$", re.MULTILINE)


def hook_files(hooks: Iterable[CommandHook], workspace: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """What the sandbox keeps from commands for `hooks`: the paths their commands name that exist, and those they
    would run that do not exist yet; each once, sorted."""
    found: set[Path] = set()
    for hook in hooks:
        found.update(named_paths(hook.command, workspace, env))
        found.update(run_paths(hook.command, workspace, env))
    return sorted(found)


def named_paths(command: str, workspace: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The existing files and folders inside `workspace` (real paths, the workspace itself left out) that the
    shell command `command` names as words, runs as programs or scripts, or reads as makefiles."""
    root = Path(os.path.realpath(workspace))
    environ = os.environ if env is None else env
    found: dict[Path, None] = {}
    for words in _simple_commands(command, root, environ):
        for word in words:
            found.update(dict.fromkeys(_existing(word, root)))
        program, _ = _program(words)
        if program and "/" not in program:
            found.update(dict.fromkeys(_on_path(program, root, environ)))
        found.update(dict.fromkeys(path for path in _runs(words, root) if path.is_file() or path.is_dir()))
    return sorted(found)


def run_paths(command: str, workspace: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The paths inside `workspace` that `command` would run or read as code, whether they exist or not (real
    paths as far as they exist)."""
    root = Path(os.path.realpath(workspace))
    environ = os.environ if env is None else env
    found: dict[Path, None] = {}
    for words in _simple_commands(command, root, environ):
        found.update(dict.fromkeys(_runs(words, root)))
    return sorted(found)


def _simple_commands(command: str, root: Path, env: Mapping[str, str], depth: int = 0) -> list[list[str]]:
    """`command` as lists of words, one per simple command, with the workspace and home put in."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: take the words as they stand
        tokens = command.split()
    out: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= set(_PUNCTUATION):
            out.append([])
        else:
            out[-1].append(_expanded(token, root, env))
    commands = [words for words in out if words]
    if depth < 2:  # `sh -c '…'`: the script is a command line of its own
        for words in list(commands):
            program, rest = _program(words)
            if os.path.basename(program) in SHELLS and "-c" in rest[:-1]:
                commands += _simple_commands(rest[rest.index("-c") + 1], root, env, depth + 1)
    return commands


def _expanded(word: str, root: Path, env: Mapping[str, str]) -> str:
    for name in PROJECT_DIR_WORDS:
        word = word.replace(name, str(root))
    if word == "~" or word.startswith("~/"):
        word = env.get("HOME", os.path.expanduser("~")) + word[1:]
    return word


def _program(words: Sequence[str]) -> tuple[str, list[str]]:
    """The program word (after `VAR=value` assignments and `env`, `exec`, `command`, ...) and its arguments."""
    index = 0
    while index < len(words) and (_ASSIGNMENT.match(words[index]) or words[index] in _PREFIXES):
        index += 1
    if index >= len(words):
        return "", []
    return words[index], list(words[index + 1 :])


def _runs(words: Sequence[str], root: Path) -> list[Path]:
    """What one simple command would run from the workspace, there or not."""
    program, rest = _program(words)
    name = os.path.basename(program)
    found: list[Path] = []
    if "/" in program:
        found += _inside(program, root)
    if name in INTERPRETERS or PYTHONS.match(name):
        script = _script_word(rest)
        if script:
            found += _inside(script, root)
    if PYTHONS.match(name) and "-m" in rest[:-1]:
        module = rest[rest.index("-m") + 1].split(".")[0]
        found += _inside(module, root) + _inside(f"{module}.py", root)
    if name in PACKAGE_RUNNERS:
        found += _inside("package.json", root)
    if name in ("make", "gmake"):
        found += _makefiles(rest, root)
    return found


def _script_word(arguments: Sequence[str]) -> str:
    """The script file an interpreter is given: its first argument that is not an option ("" when it runs code
    given inline, `-c` or `-m`)."""
    for word in arguments:
        if word in INLINE or word == "--":
            return ""
        if not word.startswith("-"):
            return word
    return ""


def _inside(word: str, root: Path, base: Path | None = None) -> list[Path]:
    """`word` (relative to `base`, default `root`) as a real path inside `root` but not `root` itself, there or
    not; globbed when it has glob characters (then only what exists)."""
    if not word or word.startswith("-") or "\x00" in word:
        return []
    candidate = Path(word) if os.path.isabs(word) else (base or root) / word
    globbed = any(char in word for char in "*?[")
    names = sorted(glob.glob(str(candidate)))[:GLOB_LIMIT] if globbed else [str(candidate)]
    out: list[Path] = []
    for name in names:
        real = Path(os.path.realpath(name))
        if real != root and root in real.parents:
            out.append(real)
    return out


def _existing(word: str, root: Path, base: Path | None = None) -> list[Path]:
    return [path for path in _inside(word, root, base) if path.is_file() or path.is_dir()]


def _on_path(program: str, root: Path, env: Mapping[str, str]) -> list[Path]:
    """`program` as `PATH` finds it, when that is inside the workspace."""
    for entry in env.get("PATH", os.defpath).split(os.pathsep):
        folder = Path(entry) if os.path.isabs(entry) else root / (entry or ".")
        candidate = folder / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return _existing(str(candidate), root)
    return []


def _makefiles(arguments: Sequence[str], root: Path) -> list[Path]:
    """The makefiles `make arguments…` would look for, and the plain-word files those that exist include."""
    folder, named = root, ""
    words = list(arguments)
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == "-C" and following:
            folder = Path(following) if os.path.isabs(following) else folder / following
        elif word.startswith("--directory="):
            folder = folder / word.split("=", 1)[1]
        elif word in ("-f", "--file", "--makefile") and following:
            named = following
        elif word.startswith(("--file=", "--makefile=")):
            named = word.split("=", 1)[1]
    found: list[Path] = []
    for candidate in [named] if named else MAKEFILES:
        found += _inside(candidate, root, folder)
    for makefile in list(found):
        if makefile.is_file():
            found += _included(makefile, root)
    return found


def _included(makefile: Path, root: Path) -> list[Path]:
    """The files `makefile` includes by plain names (no `$(…)`), relative to its folder, there or not."""
    try:
        text = makefile.read_text(encoding="utf-8", errors="replace")[: 1 << 20]
    except OSError:
        return []
    found: list[Path] = []
    for line in _INCLUDE.findall(text):
        for word in line.split():
            if "$" not in word:
                found += _inside(word, root, makefile.parent)
    return found
