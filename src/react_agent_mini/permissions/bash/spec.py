"""The format of the program table (`programs/`): one `Spec` per program, written as data and compiled on first use.

A spec answers every question the permission check asks about a program: whether it can be read-only and with
which options (an allowlist: an option the spec does not know makes a command not read-only), what its operands
are (files read, files written, plain text), which options take values and what those values are, whether it runs
another program, follows links, reaches the network, and its subcommands. `Spec.options` holds one string per
option:

    option  := name+ value* effect* ["#" reason]
    name    := -x | --long | -long          (`-long`, one dash, only in the `find` style)
    value   := =KIND                         a value it needs: `--file=F`, `--file F`, `-fF`, `-f F`
             | ?KIND                         a value it takes only when attached: `--color=always`, `-U3`
             | ~KIND                         the next word when there is one (git's `--merged [<commit>]`)
             | =a|b|c+effect                 one of these words (GNU programs accept unique prefixes of them,
                                             `--directories=rec`); a choice may carry effects of its own
    effect  := +recursive | +follows | ...   see EFFECTS

    "-d --directories =read|skip|recurse+recursive"
    "-f --file =file +pattern"
    "-o --output =file +writes # writes its output to a file"

KIND is one of KINDS; `file` and `names` values are paths the command reads, `cmd` and `script` values are
commands it runs. `Spec.operands` lists the operand slots in order (`"pattern file*"`: the first operand is the
pattern, unless an option with `+pattern` supplied it, and every other operand a file it reads); see ROLES.
`Spec.examples` must be read-only and `Spec.counterexamples` must not be: `examples.check_examples()` runs them
through the whole analysis (the test suite does; compiling a spec checks only its grammar, which is cheap).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

EFFECTS = frozenset(
    {
        "recursive",  # reads (or, for a writer, changes) whatever is below its directory operands, or below `.`
        "tree",  # works on whatever is below the directory it runs in, and below directories it names (tar, patch)
        "follows",  # follows symbolic links while it walks, so it may leave the workspace through any link
        "pattern",  # supplies the pattern, so no operand is taken for it
        "names",  # reads the names of the files to work on from data: where it reads is only known when it runs
        "contents",  # git: may print any file of the repository (a patch, a blob, a grep)
        "nocontents",  # git show/diff: an output format without file contents (`--stat`)
        "list",  # git branch/tag: operands are patterns to list, not names to create
        "standalone",  # git --version: no subcommand needed
        "links",  # may make symbolic links: a path named later on the line that does not exist yet may lead anywhere
        "hidden",  # runs a command line we cannot read (`git -c alias.x=...`, `sed e`): every Bash deny rule applies
        "writes",  # changes files
        "runs",  # runs another program
        "network",  # opens network connections
        "unsafe",  # anything else that makes it not read-only (the reason says what)
    }
)
DISQUALIFYING = frozenset({"writes", "runs", "network", "unsafe", "hidden"})
"""Effects that make a command not read-only."""
KINDS = frozenset({"text", "n", "file", "names", "rev", "cmd", "script", "format", "argv", "var", "expands"})
"""What an option's value is: plain text, a number, a file read, a file of file names, a git revision (which may
name an object anywhere: `HEAD:secrets/key`), a command, a shell script, a git format string (`%G?`
and `%(signature)` verify signatures, which runs gpg: not read-only), the words up to `;` or `+` as a command
(`find -exec`), a shell variable it assigns (`printf -v NAME`: a subscript in it is evaluated, see
`evaluated.py`), or a string bash expands when it uses it (`compgen -W`: a `$` or backtick in it runs code)."""
ROLES = frozenset(
    {"file", "text", "pattern", "write", "format", "assign", "path", "probe", "arith", "var", "name", "declare"}
)
"""What an operand is: a file (or directory) it reads, plain text, the pattern (text; skipped when an option gave
one), a file it writes (so not read-only), `+FORMAT` (`date`: anything else sets the clock), `NAME=value` (`env`:
anything else is a command it runs), a git revision or path (read, and checked for `rev:path`), a word whose
file it only looks at (`test -f`: a literal path is checked, an expansion is not a file it reads), an arithmetic
expression bash evaluates (`let`), a shell variable it assigns (`read NAME`) or only names (`unset NAME`), or a
`NAME[=value]` declaration (`declare`, `export`). The last four are where bash evaluates a quoted word as code
(`evaluated.py`): such a word makes the command not read-only and counts as one only known when it runs."""
STYLES = frozenset({"gnu", "posix", "find", "text"})
"""How options are written: `gnu` getopt_long (options anywhere before `--`, clusters, `-xVALUE`, `--opt=value`),
`posix` (options only before the first operand), `find` (whole-word primaries, no clusters), `text` (no options:
every word is an operand)."""
RUNS = frozenset({"", "argv", "script", "shell", "eval", "source"})
"""How a program runs other commands: `argv` some tail of its arguments is a command (`sudo`, `env`, `xargs`),
`script` an argument may be a shell command line (`trap`, `su -c`, `watch`), `shell` a shell (`-c` scripts, or
commands from stdin), `eval`, `source`."""
PREFIXES = frozenset({"word", "subcommand", "interpreter", "runner", "exact"})
"""How wide an "always" rule for a command that is not read-only is: the program (`pytest`), program and
subcommand (`cargo test`), interpreter and script or module (`python -m pytest`), a runner and what it runs
(`npx eslint`), or only the exact command (wrappers, shells)."""


class Spec(msgspec.Struct, frozen=True, kw_only=False):
    """One program, as written in the table (see the module docstring)."""

    names: str
    """The program's name, and other names for the same spec (`grep egrep fgrep`), separated by spaces."""
    options: tuple[str, ...] = ()
    """Every option it has (the ones that make it not read-only too, marked by a disqualifying effect)."""
    operands: str = "file*"
    """Operand slots, in order: ROLE, ROLE? (optional) or ROLE* (any number)."""
    style: str = "gnu"
    abbrev: bool = False
    """GNU-style unique prefixes of long options (`--rec` for `--recursive`); the option list must be complete."""
    numeric: bool = False
    """`-5` is a count (`head -5`, `git log -5`)."""
    read_only: bool = True
    """False: never read-only, whatever its arguments (the spec still says what it touches and runs)."""
    effects: str = ""
    """Effects it always has (`rg`: recursive; `curl`: network)."""
    requires: tuple[str, ...] = ()
    """Read-only only when one of these options is given (`git remote show -n`); a bare word names a first
    operand that counts too (`git config get`)."""
    check: str = ""
    """A check from `checks.py` for what a table cannot say (sed scripts, test's argument count)."""
    runs: str = ""
    inert: bool = False
    """It runs nothing its words name: a Bash deny rule need not look for a command inside them."""
    subcommands: tuple[Spec, ...] = ()
    default: str = ""
    """The subcommand used when no operand names one (`git reflog` is `git reflog show`)."""
    aliases: bool = False
    """An unknown subcommand may be an alias that runs anything (git)."""
    shows: str = ""
    """git: what it prints the contents of. `named`: of what its operands name — the paths, or the whole tree of a
    revision when no path limits it, and an object named as a revision whole (a blob, whatever the format);
    `paths`: of the paths it names only (revisions choose a version: `git blame`); `objects`: of the objects it
    names (a commit's header is no file's contents: `git cat-file`)."""
    prefix: str = "word"
    groups: tuple[str, ...] = ()
    """Subcommands that group further ones (an "always" rule keeps one more word: `npm run test`)."""
    runners: tuple[str, ...] = ()
    """Subcommands that run another command (`uv run`): the rule keeps the runner and what it runs."""
    examples: tuple[str, ...] = ()
    """Command lines that must be read-only."""
    counterexamples: tuple[str, ...] = ()
    """Command lines that must not be read-only."""


class Option(msgspec.Struct, frozen=True):
    """One compiled option."""

    name: str
    """How it is named in reasons: its first spelling in the spec."""
    values: tuple[str, ...] = ()
    """The kinds of the values it needs, in order (`~kind`: taken only when there is a next word)."""
    optional: str = ""
    """The kind of a value it takes only when attached; empty if none."""
    choices: tuple[tuple[str, frozenset[str]], ...] = ()
    """The words its value may be, with the effects each adds."""
    effects: frozenset[str] = frozenset()
    reason: str = ""
    """Why it makes the command not read-only (after the option's name): `edits files in place`."""

    @property
    def allowed(self) -> bool:
        """True when it is on the read-only allowlist."""
        return not (self.effects & DISQUALIFYING)


class Slot(msgspec.Struct, frozen=True):
    """One operand slot."""

    role: str
    many: bool = False
    optional: bool = False


class Program(msgspec.Struct, frozen=True):
    """One compiled spec."""

    name: str
    """As shown in reasons: `grep`, `git log`."""
    options: Mapping[str, Option]
    """Every spelling (`-r`, `--recursive`) of every option."""
    longs: tuple[str, ...]
    """Every long option name, for unique-prefix lookup."""
    slots: tuple[Slot, ...]
    spec: Spec
    effects: frozenset[str]
    subcommands: Mapping[str, Spec]

    @property
    def dynamic_ok(self) -> bool:
        """True when a word only known at run time may be an option: every option it has is read-only, and an
        unknown one only makes it fail (the expansion itself is judged where it is used)."""
        return all(o.allowed for o in self.options.values()) and not self.spec.subcommands

    @property
    def reach(self) -> frozenset[str]:
        """How far an option of it can take it (`recursive`, `follows`): what a word that may expand to any option
        (`grep {-R,k} .`, `grep "$x" f`) must be assumed to do."""
        found: set[str] = set()
        for option in self.options.values():
            found |= option.effects
            for _, effects in option.choices:
                found |= effects
        return frozenset(found & {"recursive", "follows"})


class SpecError(ValueError):
    """A spec that does not follow the format."""


_COMPILED: dict[tuple[int, str], Program] = {}


def compiled(spec: Spec, name: str) -> Program:
    """`spec` compiled, once, for the program called `name` (`grep`, `egrep`, `git log`)."""
    key = (id(spec), name)  # specs are module constants: their ids are stable
    program = _COMPILED.get(key)
    if program is None:
        program = _COMPILED[key] = msgspec.structs.replace(compile_spec(spec), name=name)
    return program


def compile_spec(spec: Spec, parent: str = "") -> Program:
    """The compiled form of `spec` (`parent`: the program whose subcommand it is)."""
    if spec.style not in STYLES or spec.runs not in RUNS or spec.prefix not in PREFIXES:
        raise SpecError(f"{spec.names}: unknown style, runs or prefix")
    name = spec.names.split()[0]
    options: dict[str, Option] = {}
    for text in spec.options:
        option, spellings = _option(text, spec.style)
        for spelling in spellings:
            if spelling in options:
                raise SpecError(f"{name}: {spelling} is listed twice")
            options[spelling] = option
    effects = frozenset(spec.effects.split())
    if not effects <= EFFECTS:
        raise SpecError(f"{name}: unknown effects {sorted(effects - EFFECTS)}")
    subcommands: dict[str, Spec] = {}
    for sub in spec.subcommands:
        for sub_name in sub.names.split():
            subcommands[sub_name] = sub
    longs = tuple(sorted(s for s in options if s.startswith("--")))
    full = f"{parent} {name}" if parent else name
    return Program(full, options, longs, _slots(spec.operands, name), spec, effects, subcommands)


def _option(text: str, style: str) -> tuple[Option, list[str]]:
    body, _, reason = text.partition(" # ")
    spellings: list[str] = []
    values: list[str] = []
    optional = ""
    choices: list[tuple[str, frozenset[str]]] = []
    effects: set[str] = set()
    for token in body.split():
        if token[0] in "=?~":
            kind = token[1:]
            if token[0] == "?":
                optional = _kind(kind, text)
            elif token[0] == "~":
                values.append("~" + _kind(kind, text))
            elif kind in KINDS:
                values.append(kind)
            elif "|" in kind:
                choices.extend(_choice(part, text) for part in kind.split("|"))
                values.append("text")
            else:
                raise SpecError(f"unknown value kind {kind!r} in {text!r} (choices are written a|b)")
        elif token[0] == "+":
            effects.add(_effect(token[1:], text))
        elif token.startswith("--") or (token.startswith("-") and (len(token) == 2 or style == "find")):
            spellings.append(token)
        else:
            raise SpecError(f"cannot read {token!r} in {text!r}")
    if not spellings:
        raise SpecError(f"no option name in {text!r}")
    option = Option(spellings[0], tuple(values), optional, tuple(choices), frozenset(effects), reason.strip())
    if not option.allowed and not option.reason:
        option = msgspec.structs.replace(option, reason=_default_reason(option.effects))
    return option, spellings


def _kind(kind: str, text: str) -> str:
    if kind not in KINDS:
        raise SpecError(f"unknown value kind {kind!r} in {text!r}")
    return kind


def _effect(effect: str, text: str) -> str:
    if effect not in EFFECTS:
        raise SpecError(f"unknown effect {effect!r} in {text!r}")
    return effect


def _choice(part: str, text: str) -> tuple[str, frozenset[str]]:
    word, *effects = part.split("+")
    if not word:
        raise SpecError(f"an empty choice in {text!r}")
    return word, frozenset(_effect(e, text) for e in effects)


def _default_reason(effects: frozenset[str]) -> str:
    for effect, reason in (
        ("writes", "writes files"),
        ("runs", "runs a program"),
        ("network", "opens network connections"),
        ("hidden", "can run programs we cannot see"),
    ):
        if effect in effects:
            return reason
    return "is not read-only"


def _slots(text: str, name: str) -> tuple[Slot, ...]:
    slots: list[Slot] = []
    for token in text.split():
        role = token.rstrip("*?")
        if role not in ROLES:
            raise SpecError(f"{name}: unknown operand role {token!r}")
        slots.append(Slot(role, many=token.endswith("*"), optional=token.endswith(("*", "?"))))
    return tuple(slots)
