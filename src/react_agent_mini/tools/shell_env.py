"""The environment Bash commands run with: the user's, minus the credentials ram itself uses.

A command the model runs must not see the keys ram talks to its providers with (`printenv OPENAI_API_KEY` is
read-only and runs unasked), nor those of the web search backends (`BRAVE_API_KEY`, `TAVILY_API_KEY`), nor the
tokens ram sends to remote MCP servers (the `${VAR}`s in their `url` and `headers`): the model would read them,
and they would go into the transcript and to the provider. Everything else is passed on, as Codex's shell
environment policy does. Which variables those are is not decided here: the session's assembly
(`app.withheld_credentials`) hands them in as `ShellState.withheld` — ram's own (`credentials.own_credentials`, the
default) and the remote servers' (`mcp.config.credential_references`) — so the tool kit reads no MCP configuration.
The user opts a credential back in with `{"shellEnvironment": {"passCredentials": ["OPENAI_API_KEY"]}}` in the user
settings file (`permissions.settings.load_pass_credentials`). MCP stdio servers are not affected: they get what
their config names.

Withholding a variable from a command's environment is not enough on its own: with the sandbox off, a command
runs as the same user as ram and can read ram's own environment from `/proc/<ram's pid>/environ`
(`cat /proc/$PPID/environ`), which still holds the key. Removing it from `os.environ` does not help: that only
unsets it in the C library's array of pointers, while `/proc/<pid>/environ` shows the block the kernel recorded at
`exec`, unchanged (checked on Linux 6.x: the key was still there after `os.environ.pop`). Overwriting that block in
place would blank the key for every process ram starts without an explicit environment too, so it is not done.
Instead `guard_own_process` marks ram's process not dumpable before the first command, hook or MCP stdio server is
started: its `/proc/<pid>/environ`, `mem` and `maps` then belong to root, and another process of the same user
cannot read them or attach to ram without CAP_SYS_PTRACE. The processes ram starts are not affected (the flag goes
back to normal at their `exec`). What it costs: ram leaves no core dump, and a debugger or profiler (gdb, py-spy,
strace) can attach to a running ram only as root.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping

PR_SET_DUMPABLE = 4
"""prctl(2)'s option for the flag that says whether a process dumps core and can be read through /proc and ptrace."""
_guarded: bool | None = None
"""What `guard_own_process` found (None: not run yet; it does its work once per process)."""


def command_environment(base: Mapping[str, str], withheld: Collection[str]) -> dict[str, str]:
    """`base` without the variables named in `withheld`."""
    return {name: value for name, value in base.items() if name not in withheld}


def guard_own_process() -> bool:
    """Make ram's own process unreadable to the processes it starts (Linux: `prctl(PR_SET_DUMPABLE, 0)`; see the
    module docstring for what it protects and costs). Called by every place that starts a process the project or
    the model chose — Bash (`tools.bash`), hooks (`hooks.command.run`), MCP stdio servers (`mcp.transport`) — just
    before it does; only the first call does the work, so ram's start-up never pays for `ctypes` (≈2 ms warm,
    ≈6 ms cold to import; the call itself ≈20 µs). True when the process is guarded."""
    global _guarded
    if _guarded is None:
        _guarded = _set_not_dumpable()
    return _guarded


def _set_not_dumpable() -> bool:
    if not sys.platform.startswith("linux"):
        return False  # no /proc to read ram's environment from (macOS: only root can read another's)
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # no C library to load, or one without prctl
        return False
