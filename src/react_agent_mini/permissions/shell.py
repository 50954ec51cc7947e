"""Decide whether a Bash command line is read-only, using a real shell parser rather than regexes.

`analyze` parses the command with tree-sitter-bash (`shell_syntax.py`, which also explains how the tree is checked
against bash's own rules) and walks the whole tree: every simple command across `;`, `&&`, `||`, `|`, `&`,
subshells, `{ }` groups, `$(...)`, backticks, process substitution, compound commands (`if`, `for`, `select`,
`while`, `until`, `case`, function bodies) and `[ ]` / `[[ ]]` tests is collected in source order and judged on its
own, and every redirection is checked for writes. The line is read-only only when it parsed, nothing writes through a
redirection, and every simple command is read-only. Anything the parser cannot handle, or that could hide a command
from us, makes the analysis `parsed=False`, which callers must treat as "ask":

* syntax errors, and anything where tree-sitter's reading may differ from bash's: a skipped `\\ `, a word split in
  two, a command read across a newline, a here-document whose lines bash would end elsewhere, `<>`, `{fd}>`, `$"..."`
  and several here-documents on one line;
* arithmetic (`$(( ))`, `$[ ]`, `(( ))`, C-style `for`) on anything but literal numbers and `$#` `$?` `$$` `$!`
  `${#name}`: a variable's value is evaluated as an expression, and an array subscript in it (`a[$(rm x)]`, e.g. from
  a file name a loop picked up) runs commands (for the same reason `let` and `[[ $x -eq 1 ]]` are not read-only);
* parameter expansions other than plain `$name` / `${name}` / `${#name}` / `${name<op>literal}` (`${x:=v}` assigns,
  `${a[i]}` and `${x:i}` are arithmetic, `${x@P}` and `${!x}` can run code, and we do not follow `${x:-$(cmd)}`);
* arrays (`a=(...)`, `a[i]=v`), `$(`/backticks/`${`/`$[` in the body of a here-document with an unquoted delimiter
  (a quoted delimiter, `<<'EOF'`, makes the body literal), backslashes inside backticks, regular expressions of
  `[[ =~ ]]` that expand, and `for` / `select` loops whose variable could be an environment variable
  (`for PATH in ...`).

`time`, `coproc` and other words tree-sitter does not know as keywords are read as command names, which are not
read-only.

Read-only commands (the command word must be a bare literal name: not `$CMD`, not a path such as `./ls` or `/bin/ls`):

* any arguments: `ls cat head tail wc grep egrep fgrep pwd echo true false which type stat du df cut tr diff cmp
  basename dirname realpath readlink whoami id uname printenv seq nl jq cd`. `cd` changes what later relative paths
  mean, but not which programs later commands run, since commands given by path are never assumed read-only (it
  does change which repository, and so which `.git/config`, a later `git` reads; see below).
* `find` without `-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls`.
* `rg` without `--pre` / `--hostname-bin` (both run a program).
* `sort` without `-o` / `--output` / `--compress-program`; `tree` without `-o` / `-R` (which writes `00Tree.html`
  files); `file` without `-C` (compiles a magic file) / `-p`.
* `printf` unless its first argument is `-v` (which assigns a shell variable, e.g. `PATH`).
* `uniq` with at most one file operand (the second operand is an output file).
* `date` without `-s` / `--set` and with only `+FORMAT` operands (other operands set the clock).
* `env` only to print the environment: options `-0 -i -u NAME` and `NAME=value` words, no command.
* `test` / `[` without `-v` / `-R` (bash evaluates array subscripts there, which can run `$(...)`), and with
  non-literal words only where test's argument-count rules make them operands (`[ -f "$f" ]`, `[ "$a" = "$b" ]`).
  Inside `[ ]`, `( ) < > && || =~` are refused: to bash they are operators of the command line, not of the test
  (`[ a > b ]` writes the file `b`, `[ -f x && rm y ]` runs `rm`).
* `[[ ]]` without `-v` / `-R`, and with `-eq -ne -lt -le -gt -ge` only between literal numbers (see arithmetic
  above). Its words are neither split nor globbed, so an expansion cannot turn into an operator.
* `sed` without `-i` / `--in-place` / `-f` (script from a file), with a literal script that has no `w`, `W` or `e`
  command, no `w` / `e` flag on `s`, and no `r` / `R` (which read a file named inside the script, where the
  workspace and Read-rule checks on arguments cannot see it).
* `git` with no global options except `--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs
  --noglob-pathspecs --icase-pathspecs --no-replace-objects --no-advice` (so no `-c`, `-C`, `--git-dir`,
  `--work-tree`, `--exec-path`, `--config-env`, `-p`), and a subcommand from: `status diff log show blame shortlog
  rev-parse ls-files ls-tree describe cat-file grep` (without `--output`, `--ext-diff`, and for grep `-O` /
  `--open-files-in-pager`), `branch` and `tag` listing only (whitelisted options; a name argument needs
  `-l`/`--list`), `remote` (`-v`, `show`, `get-url`), `config` reading only (`--get*`, `--list`/`-l`, `get`, `list`),
  `reflog` (no subcommand, `show`, `exists`) and `stash list` / `stash show`; or just `git --version`. The
  repository's own git configuration is trusted: a hostile `.git/config` can run programs from almost any git command
  (`core.fsmonitor`, `diff.external`...).

Compound commands add nothing of their own: `if`, `while`, `until`, `case` (patterns are words like any other),
`for` / `select` over words, `(( ))` and C-style `for` on literal numbers are read-only when everything inside is.

Always not read-only: every other command, including `eval exec source . xargs sudo command builtin nohup time
timeout nice let bash sh python awk less tee cp mv export declare local readonly unset`; any leading `NAME=value`
assignment (`PAGER=...`, `LD_PRELOAD=...`) and bare assignments; function definitions. `let` is refused (a deliberate
difference from "arithmetic is harmless"): arithmetic evaluation expands array subscripts recursively, so `let` over a
variable holding a file name such as `a[$(rm x)]` runs commands.

For commands whose options matter (everything above except the "any arguments" group), an argument that is not a
literal and could expand to an option — `$x`, `"$x"`, `$(...)`, a leading glob like `*` that could match a file named
`-i` — is refused, because a hostile repository can plant such file names or contents.

Redirections `>`, `>>`, `>|`, `&>`, `&>>`, `n>` and `>&file` write unless the target is literally `/dev/null`,
`/dev/stdout` or `/dev/stderr`; fd duplications (`2>&1`, `>&2`) and closes are fine, as are `<`, `<&`, here-documents
and here-strings (but not reads from `/dev/tcp/...` or `/dev/udp/...`, which open network connections). A redirection
target that is itself a substitution counts as a write (and the substitution is analysed).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

import msgspec

from .shell_syntax import Entry, Refused, read
from .shell_syntax import Word as _Word

__all__ = ["MAX_COMMAND_CHARS", "ShellAnalysis", "SimpleCommand", "analyze", "is_read_only_command", "rule_prefix"]


class SimpleCommand(msgspec.Struct, frozen=True):
    """One simple command of a command line."""

    argv: tuple[str, ...]
    """Words with quotes removed and no expansion performed; leading assignments excluded."""
    text: str
    """The source text of this simple command (for rule matching and display)."""
    assignments: tuple[str, ...] = ()
    """Leading NAME=value words."""


class ShellAnalysis(msgspec.Struct, frozen=True):
    """The verdict on a whole command line.

    When `parsed` is False, `commands` may be incomplete and must not be used to allow anything.
    """

    parsed: bool
    commands: tuple[SimpleCommand, ...]
    writes: bool
    read_only: bool
    reason: str


# Bigger inputs are refused rather than analysed: a read-only command is never that long, and the limit bounds the
# work (parsing is fast, ~0.1 ms per kilobyte; our walk over the tree is the slower part).
MAX_COMMAND_CHARS = 10_000


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _problem(entry: Entry) -> str | None:
    """Why this simple command is not read-only, or None when it is."""
    if entry.refusal:
        return entry.refusal
    judged = entry.problem if entry.conditional else _judge(entry.words, entry.assignments)
    return judged or (entry.redirect_problems[0] if entry.redirect_problems else None)


def _simple(entry: Entry) -> SimpleCommand:
    return SimpleCommand(
        argv=tuple(w.value for w in entry.words),
        text=entry.text,
        assignments=tuple(a.value for a in entry.assignments),
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
    commands = tuple(_simple(e) for e in entries)
    if syntax.refusals:
        _, reason = min(syntax.refusals)
        return ShellAnalysis(parsed=False, commands=commands, writes=syntax.writes, read_only=False, reason=reason)
    problems = list(syntax.problems)
    for entry in entries:
        problem = _problem(entry)
        if problem:
            problems.append((entry.start, f"`{_one_line(entry.text)}`: {problem}"))
    if problems:
        _, reason = min(problems)
        return ShellAnalysis(parsed=True, commands=commands, writes=syntax.writes, read_only=False, reason=reason)
    return ShellAnalysis(parsed=True, commands=commands, writes=syntax.writes, read_only=True, reason="")


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
    simple = _simple(entry)
    if simple.argv != cmd.argv or simple.assignments != cmd.assignments:
        return False
    return _problem(entry) is None


# --------------------------------------------------------------------------------------------------------------------
# Judging one simple command


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _seq(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_ANY_ARGUMENTS = _names(
    "ls cat head tail wc grep egrep fgrep pwd echo true false which type stat du df cut tr diff cmp basename dirname "
    "realpath readlink whoami id uname printenv seq nl jq cd"
)


def _judge(words: Sequence[_Word], assignments: Sequence[_Word]) -> str | None:
    """Why this simple command is not read-only, or None when it is."""
    if assignments:
        names = ", ".join(a.value.split("=", 1)[0] for a in assignments)
        if not words:
            return f"assigns {names} in the shell (variables such as PATH change what later commands run)"
        return f"sets {names} for the command (environment variables can change what a command runs)"
    if not words:
        return None  # only redirections, judged separately
    head = words[0]
    if not head.static:
        return "the command name is not a literal"
    name = head.value
    if "/" in name:
        return f"{name} is given by path, so it is not a known read-only command"
    if name in _ANY_ARGUMENTS:
        return None
    checker = _CHECKERS.get(name)
    if checker is None:
        return f"{name} is not a known read-only command"
    return checker(list(words[1:]))


def _scan_options(args: Sequence[_Word], name: str, short: str = "", long: Sequence[str] = ()) -> str | None:
    """Look for dangerous options anywhere before `--`, deliberately without skipping option arguments: seeing an
    option where the tool sees an argument only over-refuses, while the reverse would miss one."""
    for w in args:
        if not w.static:
            if not w.operand:
                return f"{name}: {w.value!r} is not a literal and could expand to an option"
            continue
        value = w.value
        if value == "--":
            return None
        if value.startswith("--"):
            option = value[2:].split("=", 1)[0]
            # GNU getopt and git accept unambiguous abbreviations (`--out` for `--output`).
            hit = next((d for d in long if option and d.startswith(option)), None)
            if hit:
                return f"{name} --{hit} is not read-only"
        elif value.startswith("-") and len(value) > 1:
            hit = next((ch for ch in value[1:] if ch in short), None)
            if hit:
                return f"{name} -{hit} is not read-only"
    return None


class _Getopt(msgspec.Struct, frozen=True):
    """An exact GNU getopt_long description, for tools where we must know which words are operands."""

    short_flags: str = ""
    short_required: str = ""
    short_optional: str = ""
    long_flags: tuple[str, ...] = ()
    long_required: tuple[str, ...] = ()
    long_optional: tuple[str, ...] = ()


_Option = tuple[str, str | _Word | None]


def _getopt(args: Sequence[_Word], spec: _Getopt, name: str) -> tuple[list[_Option], list[_Word]] | str:
    """Split `args` into options and operands the way GNU getopt_long does (permuting); unknown, ambiguous or
    non-literal options are an error string."""
    options: list[_Option] = []
    operands: list[_Word] = []
    longs = spec.long_flags + spec.long_required + spec.long_optional
    i = 0
    while i < len(args):
        w = args[i]
        i += 1
        if not w.static:
            if not w.operand:
                return f"{name}: {w.value!r} is not a literal and could expand to an option"
            operands.append(w)
            continue
        value = w.value
        if value == "--":
            operands.extend(args[i:])
            break
        if not value.startswith("-") or value == "-":
            operands.append(w)
            continue
        if value.startswith("--"):
            option, eq, attached = value[2:].partition("=")
            matches = [option] if option in longs else [o for o in longs if o.startswith(option)]
            if len(matches) != 1:
                return f"{name}: unrecognised option --{option}"
            full = matches[0]
            if full in spec.long_flags:
                if eq:
                    return f"{name}: --{full} takes no argument"
                options.append((f"--{full}", None))
            elif full in spec.long_optional:
                options.append((f"--{full}", attached if eq else None))
            elif eq:
                options.append((f"--{full}", attached))
            elif i < len(args):
                options.append((f"--{full}", args[i]))
                i += 1
            else:
                return f"{name}: --{full} needs an argument"
            continue
        j = 1
        while j < len(value):
            ch = value[j]
            rest = value[j + 1 :]
            if ch in spec.short_flags:
                options.append((f"-{ch}", None))
                j += 1
                continue
            if ch in spec.short_optional:
                options.append((f"-{ch}", rest or None))
            elif ch in spec.short_required:
                if rest:
                    options.append((f"-{ch}", rest))
                elif i < len(args):
                    options.append((f"-{ch}", args[i]))
                    i += 1
                else:
                    return f"{name}: -{ch} needs an argument"
            else:
                return f"{name}: unrecognised option -{ch}"
            break
    return options, operands


def _check_find(args: list[_Word]) -> str | None:
    dangerous = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
    for w in args:
        if w.static and w.value in dangerous:
            return f"find {w.value} is not read-only"
        if not w.static and not w.operand:
            return f"find: {w.value!r} is not a literal and could expand to an action such as -delete"
    return None


def _check_printf(args: list[_Word]) -> str | None:
    if args and not args[0].static and not args[0].operand:
        return f"printf: {args[0].value!r} is not a literal and could expand to -v"
    if args and args[0].static and args[0].value.startswith("-v"):
        return "printf -v assigns a shell variable"
    return None


def _check_sort(args: list[_Word]) -> str | None:
    return _scan_options(args, "sort", short="o", long=("output", "compress-program"))


def _check_tree(args: list[_Word]) -> str | None:
    return _scan_options(args, "tree", short="oR", long=("output",))


def _check_file(args: list[_Word]) -> str | None:
    return _scan_options(args, "file", short="Cp", long=("compile", "preserve-date"))


def _check_rg(args: list[_Word]) -> str | None:
    return _scan_options(args, "rg", long=("pre", "hostname-bin"))


_UNIQ = _Getopt(
    short_flags="cdDiuz",
    short_required="fsw",
    long_flags=("count", "repeated", "ignore-case", "unique", "zero-terminated", "help", "version"),
    long_required=("skip-fields", "skip-chars", "check-chars"),
    long_optional=("all-repeated", "group"),
)


def _check_uniq(args: list[_Word]) -> str | None:
    parsed = _getopt(args, _UNIQ, "uniq")
    if isinstance(parsed, str):
        return parsed
    _, operands = parsed
    if any(not w.single for w in operands):
        return "uniq: an operand could expand to several words, and the second one is an output file"
    if len(operands) > 1:
        return f"uniq writes its second operand ({operands[1].value})"
    return None


_DATE = _Getopt(
    short_flags="uR",
    short_required="dfrs",
    short_optional="I",
    long_flags=("universal", "utc", "rfc-email", "rfc-2822", "debug", "resolution", "help", "version"),
    long_required=("date", "file", "reference", "set", "rfc-3339"),
    long_optional=("iso-8601",),
)


def _check_date(args: list[_Word]) -> str | None:
    parsed = _getopt(args, _DATE, "date")
    if isinstance(parsed, str):
        return parsed
    options, operands = parsed
    if any(option in ("-s", "--set") for option, _ in options):
        return "date --set changes the system clock"
    for w in operands:
        if not w.static or not w.value.startswith("+"):
            return "date with an operand other than +FORMAT sets the system clock"
    return None


def _check_env(args: list[_Word]) -> str | None:
    i = 0
    while i < len(args):
        w = args[i]
        if not w.static:
            return f"env: {w.value!r} is not a literal and could be a command"
        value = w.value
        if value in ("-0", "--null", "-i", "--ignore-environment", "-"):
            i += 1
        elif value in ("-u", "--unset"):
            if i + 1 < len(args) and not args[i + 1].static:
                return f"env: {args[i + 1].value!r} is not a literal"
            i += 2
        elif value.startswith(("-u", "--unset=")) or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", value, re.DOTALL):
            i += 1
        else:
            return f"env runs the command {value}"
    return None


def _check_test(args: list[_Word]) -> str | None:
    operands = list(args)
    if operands and operands[-1].static and operands[-1].value == "]":
        operands = operands[:-1]
    for w in operands:
        if w.static and w.value in ("-v", "-R"):
            return f"test {w.value} evaluates array subscripts, which can run commands"
        if not w.single:
            return f"test: {w.value!r} could expand to several words"
    # A non-literal word could be `-v`; it is only harmless where test's argument-count rules make it an operand.
    dynamic = [k for k, w in enumerate(operands) if not w.static]
    binary = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"}
    count = len(operands)
    allowed: set[int] = set()
    if count == 1:
        allowed = {0}
    elif count == 2:
        allowed = {1}
    elif count == 3 and operands[1].static and operands[1].value in binary:
        allowed = {0, 2}
    if any(k not in allowed for k in dynamic):
        return "test: a non-literal word could expand to an operator such as -v"
    return None


_SED = _Getopt(
    short_flags="nrEsuz",
    short_required="efl",
    short_optional="i",
    long_flags=_seq(
        "quiet silent regexp-extended separate unbuffered null-data zero-terminated posix debug sandbox "
        "follow-symlinks help version"
    ),
    long_required=("expression", "file", "line-length"),
    long_optional=("in-place",),
)


def _check_sed(args: list[_Word]) -> str | None:
    parsed = _getopt(args, _SED, "sed")
    if isinstance(parsed, str):
        return parsed
    options, operands = parsed
    scripts: list[str | _Word | None] = []
    for option, value in options:
        if option in ("-i", "--in-place"):
            return "sed -i edits files in place"
        if option in ("-f", "--file"):
            return "sed -f reads its script from a file we cannot check"
        if option in ("-e", "--expression"):
            scripts.append(value)
    if not scripts:
        if not operands:
            return None  # no script: sed prints usage and fails
        scripts.append(operands[0])
    texts: list[str] = []
    for script in scripts:
        if isinstance(script, _Word):
            if not script.static:
                return f"sed: the script {script.value!r} is not a literal"
            texts.append(script.value)
        else:
            texts.append(script or "")
    return sed_script_problem("\n".join(texts))


def sed_script_problem(script: str) -> str | None:
    """Find `w`/`W`/`e` commands and `w`/`e` flags of `s` in a sed script, following GNU sed's grammar closely enough
    that anything we do not understand is reported rather than skipped."""
    n = len(script)
    i = 0

    def skip_blanks(k: int) -> int:
        while k < n and script[k] in " \t":
            k += 1
        return k

    def delimited(k: int, delimiter: str) -> int:
        """Index just past the next unescaped `delimiter` from k, or -1."""
        while k < n:
            if script[k] == "\\":
                k += 2
                continue
            if script[k] == "\n":
                return -1
            if script[k] == delimiter:
                return k + 1
            k += 1
        return -1

    def address(k: int) -> int:
        if k < n and script[k].isdigit():
            while k < n and script[k].isdigit():
                k += 1
            if k < n and script[k] == "~":
                k += 1
                while k < n and script[k].isdigit():
                    k += 1
            return k
        if k < n and script[k] == "$":
            return k + 1
        if k < n and script[k] in "/\\":
            if script[k] == "\\":
                if k + 1 >= n:
                    return -1
                delimiter, k = script[k + 1], k + 2
            else:
                delimiter, k = "/", k + 1
            k = delimited(k, delimiter)
            while k >= 0 and k < n and script[k] in "IM":
                k += 1
            return k
        return k

    def end_of_command(k: int) -> int:
        k = skip_blanks(k)
        if k < n and script[k] not in ";\n}#":
            return -1
        return k

    unknown = "sed: a script we cannot analyse"
    while True:
        while i < n and script[i] in " \t\n;":
            i += 1
        if i >= n:
            return None
        if script[i] == "#":
            newline = script.find("\n", i)
            i = n if newline < 0 else newline
            continue
        i = address(i)
        if i < 0:
            return unknown
        i = skip_blanks(i)
        if i < n and script[i] == ",":
            i = skip_blanks(i + 1)
            if i < n and script[i] in "+~":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
            else:
                i = address(i)
                if i < 0:
                    return unknown
            i = skip_blanks(i)
        while i < n and script[i] == "!":
            i = skip_blanks(i + 1)
        if i >= n:
            return unknown
        command = script[i]
        i += 1
        if command in "wW":
            return f"sed {command} writes a file"
        if command == "e":
            return "sed e runs a command"
        if command in "rR":
            return f"sed {command} reads a file its script names (the path checks cannot see it)"
        if command in "{}":
            continue
        if command in "=dDgGhHnNpPxzFlLqQv":
            # l, L, q, Q take an optional number and v an optional version.
            if command in "lLqQv":
                i = skip_blanks(i)
                while i < n and (script[i].isdigit() or (command == "v" and script[i] == ".")):
                    i += 1
            i = end_of_command(i)
        elif command in "aic":
            # Text or a file name up to the end of the line; a backslash continues the text onto the next line.
            while i < n and script[i] != "\n":
                i += 2 if script[i] == "\\" else 1
        elif command in ":btT":
            i = skip_blanks(i)
            while i < n and script[i] not in " \t\n;":
                i += 1
        elif command in "sy":
            if i >= n or script[i] in "\\\n":
                return unknown
            delimiter = script[i]
            i = delimited(i + 1, delimiter)
            if i >= 0:
                i = delimited(i, delimiter)
            if i < 0:
                return unknown
            if command == "s":
                while i < n and script[i] not in " \t\n;}#":
                    flag = script[i]
                    if flag == "w":
                        return "sed s///w writes a file"
                    if flag == "e":
                        return "sed s///e runs a command"
                    if flag not in "gpiImM0123456789":
                        return unknown
                    i += 1
            i = end_of_command(i)
        else:
            return unknown
        if i < 0:
            return unknown


# -- git --------------------------------------------------------------------------------------------------------------

_GIT_SAFE_GLOBALS = _names(
    "--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs "
    "--no-replace-objects --no-advice"
)
_DIFF_DANGEROUS = ("output", "ext-diff")


class _GitOptions(msgspec.Struct, frozen=True):
    """A whitelist of git options (git's parse-options: clusters, `--long[=v]`, unambiguous abbreviations)."""

    short: str = ""
    long_flags: tuple[str, ...] = ()
    long_required: tuple[str, ...] = ()
    """Take the next word when not given with `=` (including git's LASTARG_DEFAULT options such as --contains)."""
    long_optional: tuple[str, ...] = ()
    """Take a value only with `=`."""
    short_required: str = ""
    short_numeric: str = ""
    """Take an attached number (`git tag -n5`)."""


def _git_whitelist(args: Sequence[_Word], spec: _GitOptions, name: str) -> tuple[set[str], list[_Word]] | str:
    seen: set[str] = set()
    operands: list[_Word] = []
    longs = spec.long_flags + spec.long_required + spec.long_optional
    i = 0
    while i < len(args):
        w = args[i]
        i += 1
        if not w.static:
            if not w.operand:
                return f"{name}: {w.value!r} is not a literal and could expand to an option"
            operands.append(w)
            continue
        value = w.value
        if value == "--":
            operands.extend(args[i:])
            break
        if not value.startswith("-") or value == "-":
            operands.append(w)
            continue
        if value.startswith("--"):
            option, eq, _ = value[2:].partition("=")
            matches = [option] if option in longs else [o for o in longs if o.startswith(option)]
            if len(matches) != 1:
                return f"{name} --{option} is not a listing option"
            full = matches[0]
            if full in spec.long_flags and eq:
                return f"{name} --{full} takes no argument"
            if full in spec.long_required and not eq and i < len(args):
                i += 1
            seen.add(f"--{full}")
            continue
        for k, ch in enumerate(value[1:], start=1):
            if ch in spec.short_required:
                seen.add(f"-{ch}")
                if k == len(value) - 1 and i < len(args):
                    i += 1
                break
            if ch in spec.short_numeric:
                seen.add(f"-{ch}")
                if not value[k + 1 :].isdigit() and value[k + 1 :]:
                    return f"{name} -{ch} takes a number"
                break
            if ch not in spec.short:
                return f"{name} -{ch} is not a listing option"
            seen.add(f"-{ch}")
    return seen, operands


_REF_FILTERS = ("contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format")

_GIT_BRANCH = _GitOptions(
    short="arlvqi",
    long_flags=_seq("all remotes list verbose quiet show-current ignore-case omit-empty no-color no-column no-abbrev"),
    long_required=_REF_FILTERS,
    long_optional=("color", "column", "abbrev"),
)

_GIT_TAG = _GitOptions(
    short="li",
    short_numeric="n",
    long_flags=("list", "ignore-case", "omit-empty", "no-color", "no-column"),
    long_required=_REF_FILTERS,
    long_optional=("color", "column"),
)

_GIT_CONFIG = _GitOptions(
    short="lz",
    short_required="f",
    long_flags=_seq(
        "get get-all get-regexp get-urlmatch get-color get-colorbool list global system local worktree "
        "show-origin show-scope name-only null includes no-includes bool int bool-or-int path expiry-date "
        "all regexp fixed-value"
    ),
    long_required=("file", "blob", "type", "default", "value", "url"),
)
_CONFIG_READ_MODES = {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool"}


def _git_listing(spec: _GitOptions, what: str) -> Callable[[list[_Word]], str | None]:
    def check(args: list[_Word]) -> str | None:
        parsed = _git_whitelist(args, spec, f"git {what}")
        if isinstance(parsed, str):
            return parsed
        seen, operands = parsed
        if operands and not ({"-l", "--list"} & seen):
            return f"git {what} with a name creates a {what} (use --list to filter)"
        return None

    return check


def _git_config(args: list[_Word]) -> str | None:
    parsed = _git_whitelist(args, _GIT_CONFIG, "git config")
    if isinstance(parsed, str):
        return parsed
    seen, operands = parsed
    if seen & (_CONFIG_READ_MODES | {"--list", "-l"}):
        return None
    if operands and operands[0].static and operands[0].value in ("get", "list"):
        return None
    return "git config without --get/--list can change configuration"


def _git_remote(args: list[_Word]) -> str | None:
    rest = list(args)
    while rest and rest[0].static and rest[0].value in ("-v", "--verbose"):
        rest.pop(0)
    if not rest:
        return None
    sub = rest[0]
    allowed = {"show": {"-n"}, "get-url": {"--push", "--all"}}.get(sub.value) if sub.static else None
    if allowed is None:
        return f"git remote {sub.value} is not read-only"
    for w in rest[1:]:
        if w.static and w.value.startswith("-") and w.value not in allowed:
            return f"git remote {sub.value} {w.value} is not a known read-only option"
        if not w.static and not w.operand:
            return f"git remote: {w.value!r} is not a literal and could expand to an option"
    return None


def _git_reflog(args: list[_Word]) -> str | None:
    if not args or not args[0].operand:
        # Options first: `git reflog` shows. Operands then could be read as a subcommand, so refuse them.
        if any(w.operand for w in args):
            return "git reflog: use `git reflog show` to name a ref"
        return _scan_options(args, "git reflog", long=_DIFF_DANGEROUS)
    sub = args[0]
    if not (sub.static and sub.value in ("show", "exists")):
        return f"git reflog {sub.value} is not read-only"
    return _scan_options(args[1:], f"git reflog {sub.value}", long=_DIFF_DANGEROUS)


def _git_stash(args: list[_Word]) -> str | None:
    if not args or not (args[0].static and args[0].value in ("list", "show")):
        shown = args[0].value if args else "(push)"
        return f"git stash {shown} is not read-only"
    return _scan_options(args[1:], f"git stash {args[0].value}", long=_DIFF_DANGEROUS)


def _git_scan(what: str, short: str = "", long: Sequence[str] = ()) -> Callable[[list[_Word]], str | None]:
    def check(args: list[_Word]) -> str | None:
        return _scan_options(args, f"git {what}", short=short, long=long)

    return check


_GIT_SUBCOMMANDS: dict[str, Callable[[list[_Word]], str | None]] = {
    **{sub: _git_scan(sub) for sub in ("status", "rev-parse", "ls-files", "ls-tree", "describe", "cat-file")},
    **{sub: _git_scan(sub, long=_DIFF_DANGEROUS) for sub in ("diff", "log", "show", "shortlog", "blame")},
    "grep": _git_scan("grep", short="O", long=("open-files-in-pager", *_DIFF_DANGEROUS)),
    "branch": _git_listing(_GIT_BRANCH, "branch"),
    "tag": _git_listing(_GIT_TAG, "tag"),
    "config": _git_config,
    "remote": _git_remote,
    "reflog": _git_reflog,
    "stash": _git_stash,
}


def _check_git(args: list[_Word]) -> str | None:
    i = 0
    while i < len(args) and not args[i].operand:
        w = args[i]
        if not w.static:
            return f"git: {w.value!r} is not a literal and could expand to an option"
        if w.value == "--version" and i == len(args) - 1:
            return None
        if w.value not in _GIT_SAFE_GLOBALS:
            # -c, -C, --git-dir, --work-tree, --exec-path, --config-env...: other configuration, other programs.
            return f"git {w.value} is not allowed (it can change configuration or run programs)"
        i += 1
    if i == len(args):
        return "git without a subcommand"
    sub = args[i]
    if not sub.static:
        return "the git subcommand is not a literal"
    checker = _GIT_SUBCOMMANDS.get(sub.value)
    if checker is None:
        return f"git {sub.value} is not a read-only git command"
    return checker(list(args[i + 1 :]))


_CHECKERS: dict[str, Callable[[list[_Word]], str | None]] = {
    "find": _check_find,
    "printf": _check_printf,
    "sort": _check_sort,
    "tree": _check_tree,
    "file": _check_file,
    "rg": _check_rg,
    "uniq": _check_uniq,
    "date": _check_date,
    "env": _check_env,
    "test": _check_test,
    "[": _check_test,
    "sed": _check_sed,
    "git": _check_git,
}


# --------------------------------------------------------------------------------------------------------------------
# Rule prefixes
#
# `rule_prefix` returns the leading words of argv that an "always allow" answer should cover:
# * the first word for ordinary commands (`pytest -q tests` -> `pytest`, `make build` -> `make`: make's targets are
#   arbitrary, and allowing make means trusting the Makefile anyway);
# * the first two for tools with subcommands (`git diff --stat` -> `git diff`, `cargo test`, `go test`, `pip install`);
# * three for the subcommands that group further ones (`npm run test`, `gh pr list`, `docker compose up`,
#   `git stash list`, `go mod tidy`, `uv pip install`);
# * for command runners (`npx`, `uv run`, `poetry run`, `pnpm exec`...) the runner plus the prefix of the command run
#   (`uv run pytest -q` -> `uv run pytest`), and `python -m mod` for modules;
# * the whole command text when no prefix is safe: wrappers that run an arbitrary command (`sudo`, `env`, `xargs`,
#   `timeout`...), inline code (`python -c`, `bash -c`, `node -e`), options before a subcommand (`git -C x status`),
#   non-literal command names, and commands without argv.

_SUBCOMMAND_TOOLS = _names(
    "git npm pnpm yarn bun cargo go docker podman kubectl pip pip3 uv poetry gh pdm hatch conda brew helm "
    "terraform rustup dotnet deno"
)
_GROUPS: dict[str, frozenset[str]] = {
    "git": _names("stash remote worktree submodule notes bisect sparse-checkout reflog lfs maintenance"),
    "npm": frozenset({"run", "run-script"}),
    "pnpm": frozenset({"run"}),
    "yarn": frozenset({"run", "workspace"}),
    "bun": frozenset({"run"}),
    "go": frozenset({"mod", "work", "tool"}),
    "docker": _names(
        "compose container image volume network system buildx builder context plugin manifest trust swarm node "
        "service stack secret config"
    ),
    "podman": _names("compose container image volume network system pod machine"),
    "kubectl": frozenset({"config", "rollout", "auth", "certificate"}),
    "uv": frozenset({"pip", "tool", "python", "cache", "self"}),
    "poetry": frozenset({"env", "self", "cache", "source"}),
    "gh": _names(
        "pr issue repo release run workflow gist label secret variable ssh-key gpg-key auth config extension "
        "codespace project cache ruleset org attestation alias search"
    ),
    "conda": frozenset({"env"}),
}
_RUNNERS: dict[str, frozenset[str]] = {
    "uv": frozenset({"run"}),
    "poetry": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "npm": frozenset({"exec"}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"dlx", "exec"}),
    "bun": frozenset({"x"}),
}
_BARE_RUNNERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx"})
_WRAPPERS = _names(
    "sudo doas su env xargs nice ionice nohup timeout time command builtin exec eval source . watch strace ltrace "
    "chroot parallel ssh setsid stdbuf unbuffer flock chrt taskset"
)
_INTERPRETERS = _names("python python3 python2 pypy pypy3 node nodejs ruby perl php bash sh zsh dash ksh fish lua")
_SUBCOMMAND_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+@-]*")
_COMMAND_WORD = re.compile(r"[A-Za-z0-9._/][A-Za-z0-9._:+@/-]*")


def _prefix_words(argv: Sequence[str]) -> list[str] | None:
    """The leading words to allow, or None when only the exact command is safe to record."""
    if not argv or not _COMMAND_WORD.fullmatch(argv[0]):
        return None
    head = argv[0]
    name = head.rsplit("/", 1)[-1]
    if name in _WRAPPERS:
        return None
    if name in _BARE_RUNNERS:
        inner = _prefix_words(argv[1:]) if len(argv) > 1 else []
        return None if inner is None else [head, *inner]
    if name in _INTERPRETERS:
        if len(argv) == 1:
            return [head]
        if argv[1] == "-m" and len(argv) > 2 and _SUBCOMMAND_WORD.fullmatch(argv[2]):
            module = _prefix_words(argv[2:])
            return [head, "-m", argv[2]] if module is None else [head, "-m", *module]
        if argv[1].startswith("-"):
            return None  # -c / -e code, or options we do not interpret
        return [head, argv[1]]
    if name not in _SUBCOMMAND_TOOLS or len(argv) == 1:
        return [head]
    sub = argv[1]
    if not _SUBCOMMAND_WORD.fullmatch(sub):
        return None  # options (or a toolchain like `cargo +nightly`) before the subcommand
    if sub in _RUNNERS.get(name, ()):
        if len(argv) == 2:
            return [head, sub]
        inner = _prefix_words(argv[2:])
        return None if inner is None else [head, sub, *inner]
    if sub in _GROUPS.get(name, ()) and len(argv) > 2:
        return [head, sub, argv[2]] if _SUBCOMMAND_WORD.fullmatch(argv[2]) else None
    return [head, sub]


def rule_prefix(cmd: SimpleCommand) -> str:
    """The prefix an "always allow" answer should record for this simple command, Claude Code style: `git diff` for
    `git diff --stat HEAD`, `npm run test` for `npm run test -- -x`, `pytest` for `pytest -q tests`, `make` for
    `make build`; the caller records `Bash(<prefix>:*)`. The prefix is built from `argv`, so leading assignments are
    not part of it. See the comment above for the full policy."""
    words = _prefix_words(cmd.argv)
    if words is None:
        return cmd.text
    return " ".join(shlex.quote(w) for w in words)
