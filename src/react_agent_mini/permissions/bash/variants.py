"""What a command runs besides itself, for Bash deny and ask rules (which must fail closed): every form of it a rule
may match, and whether it runs a command line we cannot read.

`variants` yields a simple command as written, by its program's base name, without wrappers (`sudo`, `env -u X`,
`xargs -a f`: every tail of their arguments is tried, since their options are too varied to parse), and the commands
inside `sh -c '...'`, `eval`, `find -exec`, `trap`, `su -c`, option values that are commands (`rg --pre CMD`,
`mapfile -C CMD`), or `HIDDEN` when it runs something we cannot read: a command name known only at run time (`$x`,
`rm{,}`), a shell fed from stdin, a device or `<(...)`, `BASH_ENV=`, `git -c`, a git alias, `sed e`, a word bash
evaluates as code (`let 'a[$(rm f)]'`, `declare -n`: `evaluated.py`). What the program table says a
program runs (`Spec.runs`, `+hidden`, `cmd`/`script` values) is what this follows. Out of reach: what programs do
once started from script files (`bash build.sh`, `make`) or code in other languages (`python -c`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

from . import programs
from .analysis import SimpleCommand, analyze
from .evaluated import LATER
from .expand import ansi_c_value
from .options import Usage, parse
from .words import Word

HIDDEN: tuple[str, ...] = ("\x00hidden",)
"""A variant standing for "this runs a command line we cannot read": every deny and ask rule on Bash applies."""
HIDING_VARIABLES = LATER
"""Variables that make a program run a command line from their value (or load code, or configuration that names
programs to run, from where they point): `evaluated.LATER`."""
EXPANSION = re.compile(r"\$[A-Za-z_{(@*#?!$-]|`")
_MAX_TAILS = 24
_MAX_DEPTH = 4
_TESTS = frozenset({"[", "[["})
"""Command names made of glob characters that are no glob: the test commands (`[ -d src ]`)."""
_SHELL_OPTIONS_WITH_ARG = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def variants(cmd: SimpleCommand, depth: int = 0) -> Iterator[tuple[str, ...]]:
    """Every way a Bash deny/ask rule may see `cmd` (see the module docstring)."""
    if any(a.split("=", 1)[0] in HIDING_VARIABLES for a in cmd.assignments):
        yield HIDDEN  # `BASH_ENV=<(echo rm f) bash -c true`
    if cmd.usage is not None and cmd.usage.evaluated:
        yield HIDDEN  # `let 'a[$(rm f)]'`, `[[ 'a[$(rm f)]' -eq 0 ]]`: bash runs what the subscript holds
    yield (*cmd.assignments, *cmd.argv)
    yield from _program(cmd.argv, cmd.usage, depth)


def _program(raw: Sequence[str], usage: Usage | None, depth: int) -> Iterator[tuple[str, ...]]:
    argv = [ansi_c_value(w) for w in raw]
    if not argv:
        return
    name = os.path.basename(argv[0])
    if EXPANSION.search(argv[0]) or (argv[0] not in _TESTS and any(c in argv[0] for c in "*?[{")):
        yield HIDDEN  # `$x f`, `${x:-rm} f`, `$(echo rm) f`, `rm{,} f`, `r? f`: the name is only known when it runs
        return
    yield tuple(argv)
    yield (name, *argv[1:])
    if depth >= _MAX_DEPTH:
        yield HIDDEN  # nested deeper than we follow
        return
    program = programs.lookup(name)
    if program is None:
        return
    if usage is None:
        usage = parse(program, [_word(w) for w in argv[1:]])
    if "hidden" in usage.effects:
        yield HIDDEN  # `git -c alias.x='!rm f' x`, a git alias, `sed 'e rm f'`
    runs = program.spec.runs
    if runs == "argv":
        for start in range(1, min(len(argv), _MAX_TAILS)):
            yield from _program(argv[start:], None, depth + 1)
    scripts, hidden = scripts_of(argv, usage)
    if hidden:
        yield HIDDEN
    for script in scripts:
        yield from script_variants(script, depth + 1)
    for inner in usage.nested:
        yield from _program(list(inner), None, depth + 1)


def script_variants(script: str, depth: int) -> Iterator[tuple[str, ...]]:
    """The variants of every simple command of a command line run by another command."""
    analysis = analyze(script)
    if not analysis.parsed:
        yield HIDDEN
        return
    for cmd in analysis.commands:
        yield from variants(cmd, depth)


def scripts_of(argv: Sequence[str], usage: Usage | None) -> tuple[list[str], bool]:
    """The command lines `argv` runs that its words spell out, and whether it also runs one we cannot read (from
    stdin, a device, a process substitution, an expansion)."""
    if not argv:
        return [], False
    name = os.path.basename(argv[0])
    program = programs.lookup(name)
    runs = program.spec.runs if program is not None else ""
    args = list(argv[1:])
    scripts = list(usage.scripts) if usage is not None else []
    hidden = usage is not None and "hidden" in usage.effects
    if runs in ("argv", "script"):
        scripts += [w for w in args if any(c.isspace() for c in w)]  # `su -c 'rm f'`, `watch 'rm f'`
        if runs == "script" and args and not any(c.isspace() for c in args[0]):
            scripts.append(args[0])  # `trap rm EXIT`
    elif runs == "shell":
        options = [w for w in args if w.startswith("-") and not w.startswith("--")]
        if any("c" in w[1:] for w in options):
            # `bash -c -e 'rm f'`, `bash -c -- 'rm f'`: we do not model where the script is; every operand may be
            scripts += [w for w in args if not w.startswith(("-", "+"))]
        hidden = hidden or _shell_reads_stdin(args) or _from_device(args)
    elif runs == "eval":
        scripts.append(" ".join(args))
        hidden = hidden or any(EXPANSION.search(w) for w in args)
    elif runs == "source":
        hidden = hidden or not args or args[0].startswith(("/dev/", "/proc/", "<(", ">("))
    return scripts, hidden


def _from_device(args: Sequence[str]) -> bool:
    operand = next((w for w in args if not w.startswith(("-", "+"))), "")
    return operand.startswith(("/dev/", "/proc/", "<(", ">("))  # `bash /dev/stdin`, `bash <(echo rm f)`


def _shell_reads_stdin(args: Sequence[str]) -> bool:
    """A shell with these arguments reads its commands from stdin (no `-c`, no script operand, or `-s`)."""
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in _SHELL_OPTIONS_WITH_ARG:
            skip = True
            continue
        if word == "--":
            continue
        if word.startswith(("-", "+")):
            if not word.startswith("--") and "s" in word[1:]:
                return True
            if not word.startswith("--") and "c" in word[1:]:
                return False  # `-c script`: its operands are analysed
            continue
        return False  # a script file
    return True


def _word(value: str) -> Word:
    """A word of a command that is itself an argument of another (already unquoted; bash will not expand it)."""
    return Word(value=value, static=True, operand=not value.startswith("-"), single=True)
