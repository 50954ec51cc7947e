"""Decide whether a Bash command line is read-only, using a real shell parser rather than regexes.

`analyze` parses the command with tree-sitter-bash (`syntax.py`; `tree.py` explains how the tree is checked against
bash's own rules) and walks the whole tree: every simple command across `;`, `&&`, `||`, `|`, `&`, subshells, `{ }`
groups, `$(...)`, backticks, process substitution, compound commands (`if`, `for`, `select`, `while`, `until`,
`case`, function bodies) and `[ ]` / `[[ ]]` tests is collected in source order and judged on its own, and every
redirection is checked for writes. The line is read-only only when it parsed, nothing writes through a redirection,
and every simple command is read-only. Anything the parser cannot handle, or that could hide a command from us,
makes the analysis `parsed=False`, which callers must treat as "ask" (the list is in `tree.py`).

A simple command is read-only when its program is in the program table (`programs/`) as one that can be, and the
table's spec for it accepts its words (`options.py`): only options on its allowlist, operands where its slots say,
and nothing the spec's check (`checks.py`) objects to. The command word must be a bare literal name (not `$CMD`,
not a path such as `./ls` or `/bin/ls`), and there must be no leading `NAME=value` assignment (`PAGER=...`,
`LD_PRELOAD=...`). A word only known when the command runs (`$x`, `"$(...)"`, a glob such as `*` that could match
a file named `-i`) where an option could be is refused, unless every option the program has is read-only.
`time`, `coproc` and other words tree-sitter does not know as keywords are read as command names, which are not
read-only; `let`, `declare`, `read` and the other builtins that assign variables are not read-only either (a
deliberate difference from "arithmetic is harmless": arithmetic evaluation expands array subscripts recursively, so
`let` over a variable holding a file name such as `a[$(rm x)]` runs commands). Which of their words bash evaluates
as code is in the table (`programs/builtins.py`, `evaluated.py`); for `[[ ]]`, whose `-v` and `-eq` operands are
such words, the walker says (`Entry.evaluated`), and the command gets a `Usage` saying so.

Redirections `>`, `>>`, `>|`, `&>`, `&>>`, `n>` and `>&file` write unless the target is literally `/dev/null`,
`/dev/stdout` or `/dev/stderr`; fd duplications (`2>&1`, `>&2`) and closes are fine, as are `<`, `<&`, here-documents
and here-strings (but not reads from `/dev/tcp/...` or `/dev/udp/...`, which open network connections). A redirection
target that is itself a substitution counts as a write (and the substitution is analysed).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from . import programs
from .options import Usage, parse
from .syntax import Entry, Refused, read
from .words import Word

__all__ = ["MAX_COMMAND_CHARS", "ShellAnalysis", "SimpleCommand", "analyze", "is_read_only_command"]


class SimpleCommand(msgspec.Struct, frozen=True):
    """One simple command of a command line."""

    argv: tuple[str, ...]
    """Words with quotes removed and no expansion performed; leading assignments excluded."""
    text: str
    """The source text of this simple command (for rule matching and display)."""
    assignments: tuple[str, ...] = ()
    """Leading NAME=value words."""
    words: tuple[Word, ...] = ()
    """`argv` as the parser read it (what bash will still expand in each word); empty when built by hand."""
    targets: tuple[Word, ...] = ()
    """The files its redirections read or write."""
    usage: Usage | None = None
    """What the program table says about it; None when the table does not know the program (or there is none)."""


class ShellAnalysis(msgspec.Struct, frozen=True):
    """The verdict on a whole command line.

    When `parsed` is False, `commands` may be incomplete and must not be used to allow anything.
    """

    parsed: bool
    commands: tuple[SimpleCommand, ...]
    writes: bool
    read_only: bool
    reason: str
    targets: tuple[Word, ...] = ()
    """Files read or written by redirections of compound commands and functions (`while ...; done < f`)."""


# Bigger inputs are refused rather than analysed: a read-only command is never that long, and the limit bounds the
# work (parsing is fast, ~0.1 ms per kilobyte; our walk over the tree is the slower part).
MAX_COMMAND_CHARS = 10_000


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _judged(entry: Entry) -> tuple[str | None, Usage | None]:
    """Why this simple command is not read-only (None when it is), and what the table says about it."""
    if entry.refusal:
        return entry.refusal, None
    if entry.conditional:
        problem, usage = entry.problem, None
        if entry.evaluated:
            # what the table would say of a program whose words bash runs: code only known when it runs
            effects = frozenset({"hidden"})
            usage = Usage(name="[[", problem=problem, effects=effects, evaluated=tuple(entry.evaluated))
    else:
        problem, usage = _judge(entry.words, entry.assignments)
    return problem or (entry.redirect_problems[0] if entry.redirect_problems else None), usage


def _judge(words: Sequence[Word], assignments: Sequence[Word]) -> tuple[str | None, Usage | None]:
    usage = usage_of(words)
    if assignments:
        names = ", ".join(a.value.split("=", 1)[0] for a in assignments)
        if not words:
            return f"assigns {names} in the shell (variables such as PATH change what later commands run)", usage
        return f"sets {names} for the command (environment variables can change what a command runs)", usage
    if not words:
        return None, None  # only redirections, judged separately
    head = words[0]
    if not head.static:
        return "the command name is not a literal", None
    if "/" in head.value:
        return f"{head.value} is given by path, so it is not a known read-only command", usage
    if usage is None:
        return f"{head.value} is not a known read-only command", None
    return usage.problem, usage


def usage_of(words: Sequence[Word]) -> Usage | None:
    """What the table says about the command `words` (a program given by path is looked up by its name)."""
    if not words or not words[0].static:
        return None
    program = programs.lookup(words[0].value.rsplit("/", 1)[-1])
    return parse(program, words[1:]) if program is not None else None


def _simple(entry: Entry, usage: Usage | None) -> SimpleCommand:
    return SimpleCommand(
        argv=tuple(w.value for w in entry.words),
        text=entry.text,
        assignments=tuple(a.value for a in entry.assignments),
        words=tuple(entry.words),
        targets=tuple(entry.targets),
        usage=usage,
    )


def _refused(reason: str) -> ShellAnalysis:
    return ShellAnalysis(parsed=False, commands=(), writes=False, read_only=False, reason=reason)


def analyze(command: str) -> ShellAnalysis:
    """Parse `command` and decide whether it may run without asking."""
    if len(command) > MAX_COMMAND_CHARS:
        return _refused(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    if not command.strip() or all(not line.strip() or line.lstrip().startswith("#") for line in command.split("\n")):
        return _refused("the command is empty")
    try:
        syntax = read(command)
    except Refused as refused:
        return _refused(str(refused))
    entries = sorted(syntax.entries, key=lambda e: e.start)
    judged = [_judged(e) for e in entries]
    commands = tuple(_simple(e, usage) for e, (_, usage) in zip(entries, judged, strict=True))
    if syntax.refusals:
        _, reason = min(syntax.refusals)
        return ShellAnalysis(False, commands, syntax.writes, False, reason, tuple(syntax.targets))
    problems = list(syntax.problems)
    for entry, (problem, _) in zip(entries, judged, strict=True):
        if problem:
            problems.append((entry.start, f"`{_one_line(entry.text)}`: {problem}"))
    if problems:
        _, reason = min(problems)
        return ShellAnalysis(True, commands, syntax.writes, False, reason, tuple(syntax.targets))
    return ShellAnalysis(True, commands, syntax.writes, True, "", tuple(syntax.targets))


def is_read_only_command(cmd: SimpleCommand) -> bool:
    """Whether this one simple command (including its own redirections, excluding commands nested in its
    substitutions, which are separate entries of `ShellAnalysis.commands`) is read-only.

    The judgement is made on `cmd.text`, which is what runs; a command whose `argv`/`assignments` disagree with its
    text is not read-only. The text of a command with a here-document has no body (`cat <<EOF`).
    """
    if len(cmd.text) > MAX_COMMAND_CHARS or not cmd.text.strip():
        return False
    try:
        syntax = read(cmd.text, stub_heredocs=True)
    except Refused:
        return False
    if len(syntax.top) != 1 or not isinstance(entry := syntax.top[0], Entry) or syntax.refusals:
        return False  # the text is not one simple command
    if tuple(w.value for w in entry.words) != cmd.argv or tuple(a.value for a in entry.assignments) != cmd.assignments:
        return False
    return _judged(entry)[0] is None
