"""What the parts of one ACP session share: the connection to the client and the session's id, and the session
updates the tools themselves send (a terminal embedded in its tool card)."""

from __future__ import annotations

from collections.abc import Callable

from acp.interfaces import Client
from acp.schema import ClientCapabilities


class ClientLink:
    """The client as one session reaches it."""

    def __init__(
        self, conn: Client, session_id: str, capabilities: ClientCapabilities, complain: Callable[[str], None]
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.capabilities = capabilities
        """What the client said it can do (`fs`, `terminal`) in `initialize`."""
        self.complain = complain
        """Writes one line on stderr."""
        self.terminals: dict[str, str] = {}
        """Tool call id → the client terminal its Bash command ran in (that call's card shows the terminal)."""

    @property
    def files(self) -> bool:
        """True when Read, Write and Edit go through the client (it offers both `fs` methods)."""
        fs = self.capabilities.fs
        return fs is not None and bool(fs.read_text_file) and bool(fs.write_text_file)

    @property
    def terminal(self) -> bool:
        """True when Bash runs in the client's terminal."""
        return bool(self.capabilities.terminal)
