"""sed scripts, read by GNU sed's grammar closely enough that anything we do not understand is reported rather than
skipped: the `w`/`W`/`e` commands and the `w`/`e` flags of `s` (they write files and run commands), and `r`/`R`
(they read a file named inside the script, where the path checks cannot see it)."""

from __future__ import annotations

_UNKNOWN = "sed: a script we cannot analyse"


def sed_script_problem(script: str) -> str | None:
    """Why `script` is not read-only, or None when it only reads its input and prints."""
    return _Script(script).problem()


class _Script:
    """A position in a script and the grammar around it."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.n = len(script)

    def at(self, k: int, chars: str) -> bool:
        return k < self.n and self.script[k] in chars

    def skip_blanks(self, k: int) -> int:
        while self.at(k, " \t"):
            k += 1
        return k

    def skip_digits(self, k: int) -> int:
        while k < self.n and self.script[k].isdigit():
            k += 1
        return k

    def delimited(self, k: int, delimiter: str) -> int:
        """Index just past the next unescaped `delimiter` from k, or -1."""
        while k < self.n:
            if self.script[k] == "\\":
                k += 2
                continue
            if self.script[k] == "\n":
                return -1
            if self.script[k] == delimiter:
                return k + 1
            k += 1
        return -1

    def address(self, k: int) -> int:
        """Past one address (`12`, `1~2`, `$`, `/re/I`, `\\%re%`); -1 when it does not end."""
        if k < self.n and self.script[k].isdigit():
            k = self.skip_digits(k)
            return self.skip_digits(k + 1) if self.at(k, "~") else k
        if self.at(k, "$"):
            return k + 1
        if not self.at(k, "/\\"):
            return k
        if self.script[k] == "\\":
            if k + 1 >= self.n:
                return -1
            delimiter, k = self.script[k + 1], k + 2
        else:
            delimiter, k = "/", k + 1
        k = self.delimited(k, delimiter)
        while k >= 0 and self.at(k, "IM"):
            k += 1
        return k

    def addresses(self, i: int) -> int:
        """Past the addresses of a command, a range and `!` included; -1 when they do not end."""
        i = self.address(i)
        if i < 0:
            return i
        i = self.skip_blanks(i)
        if self.at(i, ","):
            i = self.skip_blanks(i + 1)
            i = self.skip_digits(i + 1) if self.at(i, "+~") else self.address(i)
            if i < 0:
                return i
            i = self.skip_blanks(i)
        while self.at(i, "!"):
            i = self.skip_blanks(i + 1)
        return i

    def end_of_command(self, k: int) -> int:
        k = self.skip_blanks(k)
        return -1 if k < self.n and self.script[k] not in ";\n}#" else k

    def problem(self) -> str | None:
        i = 0
        while True:
            while self.at(i, " \t\n;"):
                i += 1
            if i >= self.n:
                return None
            if self.script[i] == "#":
                newline = self.script.find("\n", i)
                i = self.n if newline < 0 else newline
                continue
            i = self.addresses(i)
            if i < 0 or i >= self.n:
                return _UNKNOWN
            found = self.command(self.script[i], i + 1)
            if isinstance(found, str):
                return found
            if found < 0:
                return _UNKNOWN
            i = found

    def command(self, command: str, i: int) -> int | str:
        """Past the command `command` whose arguments start at `i` (-1: not understood), or why it is not read-only."""
        if command in "wW":
            return f"sed {command} writes a file"
        if command == "e":
            return "sed e runs a command"
        if command in "rR":
            return f"sed {command} reads a file its script names (the path checks cannot see it)"
        if command in "{}":
            return i
        if command in "=dDgGhHnNpPxzFlLqQv":
            if command in "lLqQv":  # an optional number (v: a version)
                i = self.skip_blanks(i)
                while i < self.n and (self.script[i].isdigit() or (command == "v" and self.script[i] == ".")):
                    i += 1
            return self.end_of_command(i)
        if command in "aic":
            # Text or a file name up to the end of the line; a backslash continues the text onto the next line.
            while i < self.n and self.script[i] != "\n":
                i += 2 if self.script[i] == "\\" else 1
            return i
        if command in ":btT":
            i = self.skip_blanks(i)
            while i < self.n and self.script[i] not in " \t\n;":
                i += 1
            return i
        if command in "sy":
            return self.replace(command, i)
        return -1

    def replace(self, command: str, i: int) -> int | str:
        """`s/re/text/flags` and `y/abc/xyz/`."""
        if i >= self.n or self.script[i] in "\\\n":
            return -1
        delimiter = self.script[i]
        i = self.delimited(i + 1, delimiter)
        if i >= 0:
            i = self.delimited(i, delimiter)
        if i < 0:
            return -1
        if command == "s":
            while i < self.n and self.script[i] not in " \t\n;}#":
                flag = self.script[i]
                if flag == "w":
                    return "sed s///w writes a file"
                if flag == "e":
                    return "sed s///e runs a command"
                if flag not in "gpiImM0123456789":
                    return -1
                i += 1
        return self.end_of_command(i)
