"""What a table cannot say about a program, as checks the table names (`Spec.check`): sed scripts, the
argument-count rules of `test` (and the subscript `test -v NAME` evaluates), listing-or-creating for `git branch`
and `git tag`, jq modules, the `+`-led options of `declare`. A check sees the parsed command and may find a problem
(not read-only) or add effects."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from .evaluated import variable_runs
from .parse_state import Parse
from .sed import sed_script_problem
from .words import Word


def _sed(state: Parse) -> None:
    """The script: every `-e` value, or else the first operand."""
    scripts = [value for option, value in state.values if option.name == "-e"]
    if not scripts and "pattern" not in state.effects:
        scripts = state.operands[:1]
    texts: list[str] = []
    for script in scripts:
        if not script.static:
            state.fail(f"sed: the script {script.value!r} is not a literal")
            return
        texts.append(script.value)
    if not texts:
        return  # no script: sed prints its usage and fails
    problem = sed_script_problem("\n".join(texts))
    if problem:
        state.fail(problem)
        if "runs a command" in problem:
            state.effects.add("hidden")  # `sed 'e rm f'`
        elif "a file" in problem:
            state.effects.add("names")  # `sed 'r secrets/key'`, `s///w f`: a file named inside the script


def _test(state: Parse) -> None:
    problem = test_problem(state.operands)
    if problem:
        state.fail(problem)
    for word in test_evaluated(state.operands):
        state.evaluated.append(word)  # `test -v 'a[$(...)]'` runs what is in the subscript
        state.effects.add("hidden")


def _listing(state: Parse) -> None:
    """`git branch NAME` creates a branch; with `--list` the words are patterns."""
    what = state.program.name.split()[-1]
    if state.operands and "list" not in state.effects:
        state.fail(f"git {what} with a name creates a {what} (use --list to filter)")


def _jq(state: Parse) -> None:
    """jq loads modules from files named inside its program (`import "x" as y;`): where it reads is unknowable."""
    modules = any("import" in w.value or "include" in w.value for w in state.operands[:1])
    if modules or state.given & {"-L", "-f"}:
        state.effects.add("names")


def _declare(state: Parse) -> None:
    """`declare +x -n ref=...`: bash reads options led by `+` too, and options after them, which the table's posix
    style takes for operands. A `-n` or `-i` among them makes later words code, as the table's own `-n` and `-i`
    do (`declare`, `typeset`, `local` only: `export -n` removes the export flag)."""
    attributes = "ni" if state.program.name in ("declare", "typeset", "local") else ""
    for word in state.operands:
        value = word.value
        if not word.static or len(value) < 2 or value[0] not in "+-" or value == "--":
            return
        if value[0] == "-" and set(value[1:]) & set(attributes):
            state.effects.add("hidden")
            state.fail(f"{state.program.name} {value} makes later values of the names it declares code")


CHECKS: dict[str, Callable[[Parse], None]] = {
    "sed": _sed,
    "test": _test,
    "listing": _listing,
    "jq": _jq,
    "declare": _declare,
}


def test_evaluated(args: Sequence[Word]) -> list[Word]:
    """The operands of `test -v NAME` / `[ -v NAME ]` whose subscript bash evaluates (`evaluated.py`; `-R` looks the
    name up without evaluating it)."""
    return [
        word
        for option, word in itertools.pairwise(args)
        if option.static and option.value == "-v" and variable_runs(word)
    ]


def test_problem(args: Sequence[Word]) -> str | None:
    """Why `test ARGS` / `[ ARGS ]` is not read-only, or None."""
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
