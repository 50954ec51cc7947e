"""What the early lane did in this process: the request on the wire, or why none was sent (read by `adopt`)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .wire import Sent

pending: Sent | None = None
"""The early request, until the session's first model call takes it (or closes it)."""
skipped = ""
"""Why no request went early ("" when one did, or when the lane was never asked)."""
CHECK_VARIABLE = "REACT_AGENT_MINI_EARLY_CHECK"
"""Set to 1 (the test suite does), an early request that the session's first call does not match is an error
instead of a silent resend: what would only cost time in use fails the tests."""
