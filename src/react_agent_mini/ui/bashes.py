"""`/bashes [kill ID]`: the session's background shells (Bash with `run_in_background`), or stop one.

The listing shows each shell's id, its status (running and for how long, completed and its exit code, or killed)
and its command; the model reads them with BashOutput and stops them with KillShell, and ram stops whatever still
runs when it exits. `/bashes kill bash_1` stops one as KillShell does (everything it started, too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..host import SessionHost
    from ..tools.builtin.bash_background import BackgroundShells

USAGE = "usage: /bashes [kill ID] — list the background shells, or stop one (e.g. /bashes kill bash_1)"


class BashesHost(Protocol):
    """What `/bashes` needs of the REPL (`ui.repl.Repl` is one)."""

    async def ready(self) -> SessionHost: ...

    def say(self, text: str, style: str = "") -> None: ...


def shells_of(host: SessionHost) -> BackgroundShells | None:
    """The session's background shells (None when it offers no built-in Bash)."""
    from ..tools.builtin.bash import BashTool

    bash = host.tool("Bash")
    return bash.background if isinstance(bash, BashTool) else None


async def bashes_command(repl: BashesHost, args: str) -> None:
    shells = shells_of(await repl.ready())
    words = args.split()
    if words and (words[0] != "kill" or len(words) != 2):
        repl.say(USAGE, "yellow")
        return
    if shells is None or not shells.all():
        repl.say("no background shells in this session (the model starts one with Bash and run_in_background)")
        return
    if words:
        shell = shells.get(words[1])
        if shell is None:
            repl.say(shells.unknown(words[1]), "yellow")
            return
        was = shell.refresh()
        await shell.stop()
        what = "killed" if was == "running" else f"was not running ({shell.summary()})"
        repl.say(f"{shell.id} {what}: {shell.label}", "dim")
        return
    lines = [f"background shells ({len(shells.running())} running):"]
    lines += [f"  {shell.id:<8} {shell.summary():<26} {shell.label}" for shell in shells.all()]
    lines.append("the model reads them with BashOutput and stops them with KillShell; /bashes kill ID stops one;")
    lines.append("ram stops what still runs when it exits")
    repl.say("\n".join(lines))
