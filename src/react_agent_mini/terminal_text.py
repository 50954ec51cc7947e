"""Text from outside — the model, tool arguments, files, MCP servers, transcripts — made safe to print.

A terminal obeys what it is sent: an escape sequence in a model's answer can clear the screen, and one in a
Bash command can overwrite the permission prompt so that `$ echo hello` is shown while `touch PWNED` runs. So
every C0 and C1 control character except newline and tab is shown in caret notation (`^[` for ESC, `^M` for a
lone CR), and the Unicode bidirectional controls that can reorder what a line seems to say are shown as
`<U+202E>`. The REPL's console applies this to everything it prints (`SafeConsole` in `ui/render.py`), the
headless text output to what it writes to a terminal (a pipe gets the text as it is), raw writes call `visible`.
"""

from __future__ import annotations

import re

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TABLE: dict[int, str] = {c: f"^{chr(c + 64)}" for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "^?"
_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_TABLE.update({c: f"<U+{c:04X}>" for c in _BIDI})
_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_TABLE)) + "]")


def visible(text: str) -> str:
    """`text` with every character that would steer the terminal made visible (CRLF line ends become LF)."""
    if not _UNSAFE.search(text):
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)
