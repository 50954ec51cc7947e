"""Shell builtins that assign variables or evaluate their words: `declare` and its kin, `unset`, `let`, `read`,
`mapfile`, `compgen`, `wait`. None is read-only (each changes the shell's state); they are here for which of their
words bash evaluates as code though they look like data (`../evaluated.py` has the rules and the line drawn):
`let`'s arithmetic (role `arith`), the variables they assign or name (`var`, `name`: a subscript in one runs
commands), declarations (`declare`), callbacks (`mapfile -C`, `compgen -C`, values of kind `cmd`), and word
lists bash expands (`compgen -W`, kind `expands`). Such a word makes a deny rule of every kind apply; so do the
options that make later words code (`declare -n`, `declare -i`), marked `+hidden`.

`printf -v` and `test -v` are in `coreutils.py` with the rest of those programs; `[[ ]]` is judged by the walker
(`../compound.py`). `export`/`readonly` take no `-i` or `-n` attribute (`export -n` removes the export flag).
"""

from __future__ import annotations

from ..spec import Spec

_ATTRIBUTES = (
    "-a",
    "-A",
    "-f",
    "-F",
    "-g",
    "-I",
    "-l",
    "-p",
    "-r",
    "-t",
    "-u",
    "-x",
    "-i +hidden # gives the integer attribute: every value later assigned to the name is evaluated as arithmetic",
    "-n +hidden # makes a name reference: its value (an array subscript) is evaluated wherever the name is used",
)

SPECS: tuple[Spec, ...] = (
    Spec(
        "declare typeset local",
        read_only=False,
        style="posix",
        options=_ATTRIBUTES,
        operands="declare*",
        check="declare",
        counterexamples=("declare -p", "declare x=1", "declare 'a[$(rm x)]=1'", "declare -n r='a[$(rm x)]'"),
    ),
    Spec(
        "export",
        read_only=False,
        style="posix",
        options=("-f", "-n", "-p"),
        operands="declare*",
        check="declare",
        counterexamples=("export -p", "export PS4='$(rm x)'"),
    ),
    Spec(
        "readonly",
        read_only=False,
        style="posix",
        options=("-a", "-A", "-f", "-p"),
        operands="declare*",
        check="declare",
        counterexamples=("readonly x",),
    ),
    Spec(
        "unset",
        read_only=False,
        style="posix",
        options=("-f", "-v", "-n"),
        operands="name*",
        counterexamples=("unset x", "unset 'a[$(rm x)]'"),
    ),
    Spec("let", read_only=False, style="text", operands="arith*", counterexamples=("let x=1", "let 'a[$(rm x)]'")),
    Spec(
        "read",
        read_only=False,
        style="posix",
        options=(
            "-a =var",
            "-d =text",
            "-e",
            "-i =text",
            "-n =n",
            "-N =n",
            "-p =text",
            "-r",
            "-s",
            "-t =text",
            "-u =text",
        ),
        operands="var*",
        counterexamples=("read -r x", "read 'a[$(rm x)]'"),
    ),
    Spec(
        "mapfile readarray",
        read_only=False,
        style="posix",
        options=(
            "-d =text",
            "-n =n",
            "-O =text",
            "-s =n",
            "-t",
            "-u =text",
            "-C =cmd +names # runs a callback, with each line it reads as an argument",
            "-c =n",
        ),
        operands="var?",
        counterexamples=("mapfile -t lines", "mapfile -C 'rm x' -c 1"),
    ),
    Spec(
        "compgen",
        read_only=False,
        style="posix",
        options=(
            *(f"-{flag}" for flag in "abcdefgjksuv"),
            "-o =text",
            "-A =text",
            "-G =text",
            "-W =expands",
            "-F =text +hidden # runs a shell function",
            "-C =cmd",
            "-X =text",
            "-P =text",
            "-S =text",
            "-V =var",
        ),
        operands="text?",
        counterexamples=("compgen -c", "compgen -W '$(rm x)' y"),
    ),
    Spec(
        "wait",
        read_only=False,
        style="posix",
        options=("-f", "-n", "-p =var"),
        operands="text*",
        counterexamples=("wait", "wait -p 'a[$(rm x)]' -n"),
    ),
)
