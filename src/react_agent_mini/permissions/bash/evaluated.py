"""Words bash itself evaluates as code, though they look like data: where a quoted argument of a builtin is not
inert. Each rule below was checked by running the command through `/bin/bash -c` (tests/permissions/
test_bash_evaluated_words.py runs them again).

* Arithmetic. `let`'s arguments, the operands of `[[ -eq ]]` (`-ne` `-lt` `-le` `-gt` `-ge`), `(( ))` and `$(( ))`
  are evaluated as expressions, and a variable named in one has its value evaluated in turn; an array subscript
  (`a[...]`) anywhere in that chain has its command substitutions run: `let 'a[$(cat secrets/key)]'` and
  `[[ 'a[$(cat secrets/key)]' -eq 0 ]]` run `cat`, and so does `read i < f; [[ i -eq 1 ]]` when `f` holds such a
  subscript. (`[ ]` and `test` do not: their `-eq` wants a plain integer; nor do `shift`, `return`, `exit`,
  `break`, `continue`, `ulimit`, `printf %d`, `read -t`/`-n` and `mapfile -O`/`-n`, which reject anything else.)
* Variable names. A name a builtin assigns or looks up may carry a subscript, evaluated as arithmetic:
  `printf -v NAME`, `read NAME`, `read -a NAME`, `mapfile NAME`, `wait -p NAME`, `unset NAME`, `test -v NAME`,
  `[[ -v NAME ]]`, and the `NAME[=value]` words of `declare`, `typeset`, `local` (`export` and `readonly` refuse
  subscripts today; we do not rely on it).
* Values run later. Assigning a variable whose value bash or a program later runs as code (`PS4` under `set -x`,
  `PS1`/`PROMPT_COMMAND` in `bash -i`, `BASH_ENV` and `ENV` in a shell started later, `PAGER`...: the
  `LATER` names), by `declare`/`export`/`read`/`printf -v`/`mapfile` as much as by `NAME=value`; a name
  reference (`declare -n ref='a[$(...)]'`: the subscript runs wherever `$ref` is used) and the integer attribute
  (`declare -i x`: every value later assigned to `x`, by `x=`, `read x` or `printf -v x`, is arithmetic).
* Callbacks and word lists: `mapfile -C CMD` runs CMD with each line it reads as an argument, `compgen -C CMD`
  runs CMD, `compgen -F F` a shell function, and `compgen -W LIST` expands LIST (`$(...)` included) when it runs.
  `complete -C`/`-F`/`-W`, `bind -x` and `PROMPT_COMMAND` itself act only in an interactive shell, which a Bash
  call never is (they are not read-only all the same: they are not in the table).

Where the line is: in an evaluated context, a literal integer (`1`, `0x1f`), `$#` `$?` `$$` `$!` and `${#name}`,
and operators are data; a plain name assigned to (`let x=1`) is data; a name whose value is read (`let i++`,
`[[ n -gt 0 ]]`, `[[ $n -gt 0 ]]`), a subscript other than a literal integer (`a[0]` is fine, `a[i]` is not) in a
variable name, and anything holding `$`, a backtick or `[` in arithmetic, is code only known when it runs. Such a
word makes the command not read-only and counts as an unknown word: it meets every Read and Edit deny rule
(`touches.py`) and every Bash deny rule (`variants.HIDDEN`), as `cat "$f"` and `$CMD x` do. A value run later
and the name-reference and integer attributes give the command the `hidden` effect (unknown to every deny rule,
as `PAGER=... git log` is), without counting as a path outside the workspace.
"""

from __future__ import annotations

import re

from .words import _LITERAL_ARITHMETIC, ANSI_C, UNKNOWN, UNQUOTED, Word

__all__ = ["LATER", "arithmetic_runs", "declaration_runs", "later", "variable_runs"]

LATER = frozenset({"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "SHELLOPTS",
                   "BASHOPTS", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF",
                   "GIT_PAGER", "PAGER", "EDITOR", "VISUAL", "LD_PRELOAD", "IFS",
                   "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS",
                   "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH",
                   "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "LESSOPEN", "LESSCLOSE",
                   "MANPAGER", "BROWSER", "TAR_OPTIONS", "RSYNC_RSH", "PERL5OPT", "NODE_OPTIONS",
                   "RUBYOPT", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH"})  # fmt: skip
"""Variables whose value bash or a program runs as a command line later (or loads code or configuration naming
programs from where they point): assigning one hides a command, however it is assigned."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNED_NAME = re.compile(r"(?<![A-Za-z0-9_#])[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)")
"""`x=` in an expression: the name is assigned, its old value is not read (`x==1`, `x+=1`, `x<=1` read it)."""
_PLAIN_SUBSCRIPT = re.compile(r"\s*(?:[0-9]+|@|\*)\s*")


def arithmetic_runs(word: Word) -> bool:
    """Whether evaluating `word` as an arithmetic expression may run code: it reads a variable's value (evaluated
    in turn), holds a subscript, or is only known when it runs. Literal numbers, operators, `$#`-style specials and
    plain assignments (`x=1`) do not."""
    if not word.static and _glob(word):
        return True  # a glob: it may match a file named like an expression with a subscript
    # `$#`, `${#x}` are kept as their source text, which `_LITERAL_ARITHMETIC` accepts: numbers when they run
    return not re.fullmatch(_LITERAL_ARITHMETIC, _ASSIGNED_NAME.sub(" ", word.value))


def _glob(word: Word) -> bool:
    return any(m == UNQUOTED and c in "*?" for c, m in zip(word.value, word.mask, strict=False))


def _unknown(word: Word, start: int, end: int) -> bool:
    """Whether any of `word.value[start:end]` is only known when it runs: an expansion, `$'...'`, or a glob that
    may match any file name (a file may be named `a[$(...)]`)."""
    if word.static:
        return False
    if not word.mask:
        return True  # a word known only as text
    return any(
        m in (UNKNOWN, ANSI_C) or (m == UNQUOTED and c in "*?")
        for c, m in zip(word.value[start:end], word.mask[start:end], strict=False)
    )


def _name_end(word: Word) -> int | None:
    """Where the name (and its subscript) of `NAME`, `NAME[SUB]`, `NAME[SUB]=...` ends; None when the word does
    not start with a literal name."""
    match = _NAME.match(word.value)
    if match is None or _unknown(word, 0, match.end()):
        return None
    end = match.end()
    if word.value[end : end + 1] != "[":
        return end
    depth = 0
    for k in range(end, len(word.value)):
        depth += word.value[k] == "["
        depth -= word.value[k] == "]"
        if depth == 0:
            return k + 1
    return len(word.value)  # an unclosed subscript: bash reads to the end


def _runs(word: Word, *, value: bool) -> bool:
    """`variable_runs` and `declaration_runs`; `value`: a `=value` may follow the name (and is data)."""
    end = _name_end(word)
    if end is None:
        return _unknown(word, 0, len(word.value))  # `"$x"`, `$(...)`: any name; a literal non-name is refused
    name = _NAME.match(word.value)
    subscript_start = name.end() if name else end
    if subscript_start < end:
        inside = word.value[subscript_start + 1 : end - 1] if word.value[end - 1] == "]" else word.value[end:]
        if _unknown(word, subscript_start, end) or not _PLAIN_SUBSCRIPT.fullmatch(inside):
            return True
    rest = word.value[end:]
    if not rest or (value and rest.startswith(("=", "+="))):
        return False
    return _unknown(word, end, len(word.value))  # `a$x`: the rest of the name, only known when it runs


def variable_runs(word: Word) -> bool:
    """Whether naming `word` as a variable (to assign or look up) evaluates code: a subscript other than a literal
    integer, `@` or `*`, or a name only known when it runs (`read "$x"` with `x='a[$(...)]'`)."""
    return _runs(word, value=False)


def declaration_runs(word: Word) -> bool:
    """Whether a `NAME[=value]` word of `declare`/`typeset`/`local`/`export`/`readonly` evaluates code: its name
    is only known when it runs (`declare "$x"`) or carries a subscript other than a literal integer. The value is
    data (unless an attribute says otherwise: `-i`, `-n`, which the program table marks)."""
    return _runs(word, value=True)


def later(word: Word, *, assigns: bool) -> bool:
    """Whether `word` names (as its variable) one of the `LATER` variables, assigned a value: `PS4=...` in a
    declaration (`assigns`: the value is in the word), or the name alone where the value comes from elsewhere
    (`read PS4`, `printf -v PS4`)."""
    match = _NAME.match(word.value)
    if match is None or _unknown(word, 0, match.end()) or match.group() not in LATER:
        return False
    rest = word.value[match.end() :]
    if not assigns:
        return True
    return rest.startswith(("=", "+=")) or (rest.startswith("[") and "=" in rest)
