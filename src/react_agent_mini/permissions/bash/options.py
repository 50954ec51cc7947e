"""Read one simple command's words the way its program will, using its spec (`spec.py`): options normalised
(unique prefixes of GNU long options, `--opt=value`, `-xVALUE`, clusters of short flags, `-d rec` style values),
operands put in their slots. The result, a `Usage`, is what every later question reads: whether the command is
read-only (and if not, why), which words name files it reads, what else it does.

Anything the spec does not know makes the command not read-only: an option it does not list, an ambiguous prefix,
a value that is not one of the choices, a word only known at run time where it could be an option.

The reading's state is a `parse_state.Parse`; a program whose spec names a check (`checks.py`) has it looked at
once the words are read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from . import evaluated
from .parse_state import Parse
from .spec import Option, Program
from .words import Word

_ORDINALS = ("first", "second", "third", "fourth")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_VERIFYING = re.compile(r"%G|%\(signature")
"""Placeholders of a git format (`KINDS`: `format`) that verify signatures, which runs gpg."""


class Usage(msgspec.Struct, frozen=True):
    """What the program table says about one simple command."""

    name: str
    """The program as the table knows it (`grep`, `git log`)."""
    problem: str | None = None
    """Why it is not read-only; None when it is."""
    paths: tuple[Word, ...] = ()
    """The operands and option values that name files it reads (as bash will expand them)."""
    effects: frozenset[str] = frozenset()
    """What its options and operands do (`spec.EFFECTS`)."""
    dynamic: bool = False
    """A word only known when it runs may be an option of it."""
    scripts: tuple[str, ...] = ()
    """Commands it runs that its words spell out: values of `cmd`/`script` options, find's `-exec` bodies."""
    nested: tuple[tuple[str, ...], ...] = ()
    """Commands it runs, word by word (find's `-exec rm {} ;`)."""
    operands: tuple[Word, ...] = ()
    """Its operands (git: the revisions and paths it names)."""
    revs: tuple[Word, ...] = ()
    """git: revisions given as option values (`--blob=HEAD:x`, `--contains v1`)."""
    probes: tuple[Word, ...] = ()
    """Operands it only looks at the existence or kind of (`test -f FILE`)."""
    named: tuple[Word, ...] = ()
    """git: the operands that are revisions or paths (not the pattern of `git grep`)."""
    pathspecs: tuple[Word, ...] = ()
    """git: the operands after `--`, which are paths (or git's patterns), never revisions."""
    shows: str = ""
    """git: what it prints the contents of (`Spec.shows`)."""
    inert: bool = False
    """It runs nothing its words name (read-only commands, and writers such as `rm`)."""
    runs: str = ""
    """How it runs other commands (`spec.RUNS`)."""
    evaluated: tuple[Word, ...] = ()
    """Words bash evaluates as code when it runs (`evaluated.py`: `let 'a[$(...)]'`, `read 'a[$(...)]'`): what
    they run and read is only known then."""


def parse(program: Program, words: Sequence[Word]) -> Usage:
    """Read `words` (the arguments, without the program's name) by `program`'s spec."""
    if program.spec.subcommands:
        return _with_subcommand(program, words)
    state = Parse(program)
    rest = _options(state, list(words))
    _operands(state, rest)
    _requirements(state)
    if not state.lost and program.spec.check:
        from .checks import CHECKS

        CHECKS[program.spec.check](state)
    if not program.spec.read_only:
        state.problem = f"{program.name} is not a known read-only command"
    return _usage(state)


def _usage(state: Parse) -> Usage:
    spec = state.program.spec
    problem = state.problem
    if state.lost and state.program.name.split()[0] == "git":
        state.effects.add("contents")  # after an option we do not know, what it prints is not knowable
    if problem is None and state.effects & {"writes", "runs", "network", "unsafe", "hidden"}:
        problem = f"{state.program.name} is not read-only"
    return Usage(
        name=state.program.name,
        problem=problem,
        paths=tuple(state.paths),
        effects=frozenset(state.effects),
        dynamic=state.dynamic,
        scripts=tuple(state.scripts),
        nested=tuple(state.nested),
        operands=tuple(state.operands),
        revs=tuple(state.revs),
        probes=tuple(state.probes),
        named=tuple(state.named),
        pathspecs=tuple(state.operands[state.dashdash :]) if state.dashdash is not None else (),
        shows=spec.shows,
        inert=spec.inert or problem is None,
        runs=spec.runs,
        evaluated=tuple(state.evaluated),
    )


# -- subcommands


def _with_subcommand(program: Program, words: Sequence[Word]) -> Usage:
    """`git [global options] <sub> ...`: the global options first, then the subcommand's own spec."""
    from .spec import compiled

    state = Parse(program)
    default = program.spec.default
    first = words[0] if words else None
    leading_option = first is not None and first.static and first.value.startswith("-")
    if default and first is not None and leading_option and first.value not in program.options:
        # `git reflog -p`, `git stash -u`: options of the default subcommand
        return _sub_usage(state, _default(program), words)
    rest = _options(state, list(words), stop_at_operand=True)
    name = program.name
    if state.lost:
        # we cannot tell which subcommand runs (an alias?), nor what it prints or changes
        state.effects |= {"contents", "hidden"} if program.spec.aliases else {"contents"}
        return _usage(state)
    if not rest:
        if program.spec.default:
            return _sub_usage(state, _default(program), [])
        if "standalone" not in state.effects:
            state.fail(f"{name} without a subcommand")
        return _usage(state)
    head = rest[0]
    if not head.static:
        state.fail(f"the {name} subcommand is not a literal")
        if program.spec.aliases:
            state.effects.add("hidden")
        return _usage(state)
    sub = program.subcommands.get(head.value)
    if sub is None:
        state.fail(f"{name} {head.value} is not a read-only {name} command")
        if program.spec.aliases:
            state.effects.add("hidden")  # an alias (`git config alias.zz '!rm f'`, then `git zz`)
        return _usage(state)
    return _sub_usage(state, compiled(sub, f"{name} {head.value}"), rest[1:])


def _default(program: Program) -> Program:
    from .spec import compiled

    default = program.spec.default
    name = program.name if default.startswith("(") else f"{program.name} {default}"  # `(list)` has no name
    return compiled(program.subcommands[default], name)


def _sub_usage(state: Parse, sub: Program, words: Sequence[Word]) -> Usage:
    inner = parse(sub, words)
    problem = state.problem or inner.problem
    return msgspec.structs.replace(
        inner,
        problem=problem,
        effects=inner.effects | state.effects,
        paths=(*state.paths, *inner.paths),
        inert=inner.inert and problem is None,
    )


# -- options


def _options(state: Parse, words: list[Word], *, stop_at_operand: bool = False) -> list[Word]:
    """Consume the options; return the operands (in order)."""
    program = state.program
    style = program.spec.style
    if style == "text":
        return words
    operands: list[Word] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.static and not word.operand:
            if not program.dynamic_ok or state.lost:
                state.fail(f"{program.name}: {word.value!r} is not a literal and could expand to an option")
            state.dynamic = True
            state.effects |= program.reach  # it may be `-R`
            operands.append(word)
            continue
        value = word.value
        if style == "find" and value in ("(", ")", "!", ","):
            continue  # find's operators
        if value == "--" and style != "find":
            state.dashdash = len(operands)
            operands.extend(words[i:])
            break
        if not value.startswith("-") or value == "-":
            operands.append(word)
            if stop_at_operand or style == "posix":
                operands.extend(words[i:])
                break
            continue
        if program.spec.numeric and value[1:].isdigit():
            continue  # `head -5`, `git log -3`
        long = style == "find" or value.startswith("--")
        i = _long(state, word, words, i) if long else _short(state, word, words, i)
    return operands


def _long(state: Parse, word: Word, words: list[Word], i: int) -> int:
    program = state.program
    whole = program.spec.style == "find"
    spelling, eq, _ = word.value.partition("=") if not whole else (word.value, "", "")
    option = program.options.get(spelling)
    if option is None and not whole:
        option = _prefix(state, spelling)
        if option is None:
            return i
    elif option is None:
        state.fail(f"{program.name}: unknown {_noun(program)} {spelling}")
        state.lost = True
        return i
    _met(state, option, spelling)
    needed = list(option.values)
    if eq:
        if not needed and not option.optional:
            state.fail(f"{program.name} {option.name} takes no value")
            return i
        kind = needed.pop(0).lstrip("~") if needed else option.optional
        _value(state, option, glued(word, len(spelling) + 1), kind)
    return _next_values(state, option, needed, words, i)


def _prefix(state: Parse, spelling: str) -> Option | None:
    program = state.program
    candidates = [name for name in program.longs if name.startswith(spelling)] if len(spelling) > 2 else []
    found = {program.options[name].name for name in candidates}
    if program.spec.abbrev and len(found) == 1:
        return program.options[candidates[0]]
    hint = f" (an abbreviation of {', '.join(candidates)}?)" if candidates else ""
    if program.spec.abbrev and len(found) > 1:
        state.fail(f"{program.name}: {spelling} is ambiguous{hint}")
    else:
        state.fail(f"{program.name}: unknown option {spelling}{hint}")
    state.lost = True
    return None


def _short(state: Parse, word: Word, words: list[Word], i: int) -> int:
    program = state.program
    value = word.value
    for k in range(1, len(value)):
        spelling = "-" + value[k]
        option = program.options.get(spelling)
        if option is None:
            state.fail(f"{program.name}: unknown option {spelling}")
            state.lost = True
            continue  # the rest of the cluster is read as flags, for the effects
        _met(state, option, spelling)
        if not option.values and not option.optional:
            continue
        needed = list(option.values)
        if k + 1 < len(value):
            _value(state, option, glued(word, k + 1), needed.pop(0).lstrip("~") if needed else option.optional)
        return _next_values(state, option, needed, words, i)
    return i


def _next_values(state: Parse, option: Option, needed: list[str], words: list[Word], i: int) -> int:
    if needed == ["argv"]:  # find -exec: the words up to `;` or `+` are a command
        end = next((k for k in range(i, len(words)) if words[k].value in (";", "+")), len(words))
        state.nested.append(tuple(w.value for w in words[i:end]))
        return end + 1
    for kind in needed:
        if i >= len(words):
            if not kind.startswith("~"):
                state.fail(f"{state.program.name} {option.name} needs a value")
            return i
        _value(state, option, words[i], kind.lstrip("~"))
        i += 1
    return i


def _met(state: Parse, option: Option, spelling: str) -> None:
    state.given.add(option.name)
    state.effects |= option.effects
    if not option.allowed:
        written = f" ({spelling})" if spelling != option.name else ""
        state.fail(f"{state.program.name} {option.name} {option.reason}{written}")


def _value(state: Parse, option: Option, value: Word, kind: str) -> None:
    state.values.append((option, value))
    if option.choices:
        _choice(state, option, value)
    elif kind in ("file", "names"):
        state.paths.append(value)
        if kind == "names":
            state.effects.add("names")  # `--files0-from=F`: the files it reads are named inside F
    elif kind in ("cmd", "script"):
        state.scripts.append(value.value)
    elif kind == "var":
        _variable(state, value, assigns=True)
    elif kind == "expands" and (not value.static or "$" in value.value or "`" in value.value):
        _evaluates(state, value, "it expands it when it runs")
    elif kind == "rev":
        state.revs.append(value)
    elif kind == "format" and (not value.static or _VERIFYING.search(value.value)):
        # `%G?`, `%GS`, `%(signature)` make git verify signatures, running gpg (as `--show-signature` does)
        state.effects.add("runs")
        state.fail(f"{state.program.name} {option.name}: the format {value.value!r} may verify signatures (gpg)")
    if kind != "text" and not value.static and not value.single:
        state.fail(f"{state.program.name} {option.name}: {value.value!r} could expand to several words")


def _choice(state: Parse, option: Option, value: Word) -> None:
    program = state.program
    if not value.static:
        state.fail(f"{program.name} {option.name}: {value.value!r} is not a literal")
        return
    exact = [(c, e) for c, e in option.choices if c == value.value]
    matches = exact or [(c, e) for c, e in option.choices if program.spec.abbrev and c.startswith(value.value)]
    if len(matches) != 1 or not value.value:
        listed = ", ".join(c for c, _ in option.choices)
        state.fail(f"{program.name} {option.name}: {value.value!r} is not one of {listed}")
        for _, effects in matches:
            state.effects |= effects  # ambiguous: it may be any of them
        return
    state.effects |= matches[0][1]


def glued(word: Word, start: int) -> Word:
    """The value glued to an option (`-fFILE`, `--file=FILE`) as a word of its own."""
    value = word.value[start:]
    mask = word.mask[start:] if word.mask else ""
    static = word.static or not mask or all(c == "." for c in mask)
    return Word(value=value, static=static, operand=word.operand, single=word.single, mask="" if static else mask)


def _noun(program: Program) -> str:
    return "primary" if program.spec.style == "find" else "option"


# -- operands


def _operands(state: Parse, operands: list[Word]) -> None:
    """Put the operands in their slots (a slot marked `*` takes all the rest)."""
    slots = [s for s in state.program.slots if not (s.role == "pattern" and "pattern" in state.effects)]
    index = 0
    for n, word in enumerate(operands):
        if index >= len(slots):
            if not state.lost:
                state.fail(f"{state.program.name} takes no operand {word.value!r}")
            state.paths.append(word)
            continue
        slot = slots[index]
        later = slots[index:] if slot.many else slots[index + 1 :]
        if slot.role == "write":
            ordinal = _ORDINALS[n] if n < len(_ORDINALS) else f"#{n + 1}"
            state.fail(f"{state.program.name} writes its {ordinal} operand ({word.value})")
        elif not word.single and any(s.role == "write" for s in later):
            name = state.program.name
            state.fail(f"{name}: an operand could expand to several words, and a later one is a file it writes")
        if not word.single and slot.role in ("text", "pattern") and any(s.role in ("file", "path") for s in later):
            state.paths.append(word)  # a glob where text goes: its matches shift into the file slots
        _fill(state, word, slot.role)
        if not slot.many:
            index += 1


def _fill(state: Parse, word: Word, role: str) -> None:
    name = state.program.name
    state.operands.append(word)
    if role in ("file", "path"):
        state.paths.append(word)
        if role == "path":
            state.named.append(word)
    elif role == "probe":
        state.probes.append(word)
    elif role == "arith" and evaluated.arithmetic_runs(word):
        _evaluates(state, word, "arithmetic that reads variables or subscripts")
    elif role in ("var", "name"):
        _variable(state, word, assigns=role == "var")
    elif role == "declare":
        if evaluated.declaration_runs(word):
            _evaluates(state, word, "an array subscript, or a name only known when it runs")
        elif evaluated.later(word, assigns=True):
            _later(state, word)
    elif role == "format" and not (word.static and word.value.startswith("+")):
        state.fail(f"{name} with an operand other than +FORMAT sets the system clock")
    elif role == "assign" and not (word.static and _ASSIGNMENT.fullmatch(word.value)):
        state.fail(f"{name} runs the command {word.value}")
        state.effects.add("runs")


def _variable(state: Parse, word: Word, *, assigns: bool) -> None:
    """A variable the command assigns (`assigns`) or only names: a subscript in it is evaluated as arithmetic, and
    one of the `LATER` variables assigned hides a command."""
    if evaluated.variable_runs(word):
        _evaluates(state, word, "an array subscript, or a name only known when it runs")
    elif assigns and evaluated.later(word, assigns=False):
        _later(state, word)


def _evaluates(state: Parse, word: Word, what: str) -> None:
    """`word` is code bash evaluates when it runs (`evaluated.py`): unknown to every deny rule."""
    state.evaluated.append(word)
    state.effects.add("hidden")
    state.fail(f"{state.program.name}: bash evaluates {word.value!r} as code ({what})")


def _later(state: Parse, word: Word) -> None:
    """`word` assigns a variable whose value is run as code later (`PS4`, `BASH_ENV`): a command we cannot see."""
    name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", word.value)
    state.effects.add("hidden")
    state.fail(f"{state.program.name} assigns {name.group() if name else word.value}, whose value is run as code later")


def _requirements(state: Parse) -> None:
    required = state.program.spec.requires
    if not required or state.problem is not None:
        return
    first = state.operands[0].value if state.operands and state.operands[0].static else None
    options = state.program.options
    wanted = {options[r].name for r in required if r in options}
    if not (state.given & wanted) and first not in required:
        state.fail(f"{state.program.name} without {' or '.join(required)} is not read-only")
