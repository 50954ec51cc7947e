"""Slash commands: `/help`, `/clear`, `/compact`, `/status`, `/context`, `/model`, `/permissions`, `/memory`,
`/init`, `/resume`, `/output`, `/export`, `/bashes`, `/rewind`, `/hooks`, `/agents`, `/exit`/`/quit`, custom commands
(`.claude/commands/`), `/<skill-id> [args]` and `/<server>:<prompt> [args]`.

Resolution order: the REPL's built-ins, then what every front end resolves (`kit.commands`): custom command → MCP
prompt (a `:` in the name) → skill → unknown. An unknown command is reported and never sent to the model. A first
word with a second `/` (`/etc/hosts is empty?`) is a path, not a command, and goes to the model as a message.

The commands see the REPL through `SlashHost` (what they need of it, nothing more); the texts they print or send
are worked out in `slash_text.py`.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from ..events import Compacted
from ..kit.init_task import init_prompt
from ..messages import Message
from .slash_text import ago, bash_runs, status_report

if TYPE_CHECKING:
    from ..custom_commands.catalog import CommandCatalog
    from ..host import SessionHost, TurnScope
    from ..transcript import SessionInfo


class SlashHost(Protocol):
    """What slash commands need of the REPL (`ui.repl.Repl` is one); `rewind.RewindHost` is a part of it."""

    @property
    def host(self) -> SessionHost | None:
        """The session's owner, once built (None while the first prompt is up): commands see the session through it."""
        ...

    async def ready(self) -> SessionHost:
        """The session's owner (waiting for the build if it is still running)."""
        ...

    def say(self, text: str, style: str = "") -> None:
        """Print one message for the user (not model output)."""
        ...

    def show_markdown(self, text: str) -> None:
        """Print `text` rendered as Markdown."""
        ...

    async def ask(self, question: str) -> str:
        """One answer line; empty when the user pressed Ctrl+C or Ctrl+D."""
        ...

    def show_context(self, host: SessionHost) -> None:
        """Print `/context`'s grid and table (`context_view.py`)."""
        ...

    def recap(self, title: str) -> None:
        """`title · N messages` and the last exchange, dimmed (after a switch to another conversation)."""
        ...

    async def turn(self, text: str, inject: Sequence[Message] = (), scope: TurnScope | None = None) -> None:
        """Send `text` (after `inject`) as a turn and show it until it ends; `scope`: a custom command's allowed
        tools and model."""
        ...

    def command_catalog(self) -> CommandCatalog:
        """The custom commands (found before the session is built too, for `/help` and Tab)."""
        ...


class Builtin(msgspec.Struct, frozen=True):
    name: str
    usage: str
    help: str


BUILTINS: tuple[Builtin, ...] = (
    Builtin("/help", "/help", "commands, keys, skills and MCP prompts"),
    Builtin("/clear", "/clear", "start a new conversation (the old one stays in /resume)"),
    Builtin("/compact", "/compact [focus]", "summarise the conversation now; your own messages are kept word for word"),
    Builtin("/status", "/status", "model, context use, tokens and cost, MCP servers, permission mode"),
    Builtin("/context", "/context", "what fills the context window now, part by part, and what is kept free"),
    Builtin("/model", "/model [NAME]", "list this provider's known models, or switch to one (the session goes on)"),
    Builtin("/permissions", "/permissions [revoke N|RULE]", "list the rules your “a” answers recorded; revoke one"),
    Builtin("/memory", "/memory [edit]", "show the memory file (edit: open it in $VISUAL or $EDITOR)"),
    Builtin("/init", "/init [notes]", "ask the agent to write or improve AGENTS.md for this project"),
    Builtin("/resume", "/resume [N|ID]", "list this directory's saved sessions, or switch to one"),
    Builtin("/output", "/output [N]", "everything the last Bash command printed (N: the N-th last)"),
    Builtin("/export", "/export [FILE]", "the conversation as Markdown to FILE, or to the clipboard (OSC 52)"),
    Builtin("/bashes", "/bashes [kill ID]", "the background shells the model started; stop one"),
    Builtin("/rewind", "/rewind [N] [code|conversation]", "code and conversation back to after turn N (0: the start)"),
    Builtin("/hooks", "/hooks", "the hooks that run in this session: events, matchers, commands, files"),
    Builtin("/agents", "/agents", "the agent types the Agent tool can start"),
    Builtin("/exit", "/exit, /quit", "leave (Ctrl+D works too)"),
    Builtin("/quit", "/quit", "leave"),
)
BUILTIN_NAMES = frozenset(b.name for b in BUILTINS)

KEYS_HELP = """keys:
  Enter                 send
  Esc Enter / Alt+Enter new line (or end the line with \\); pasted text keeps its lines
  Tab                   complete /commands, skills, MCP prompts and @paths
  Up / Down             history (saved across sessions); → takes the grey suggestion
  Esc                   interrupt the running turn (as Ctrl+C does)
  Shift+Tab             permission mode: default → accept edits → plan
  Ctrl+C                interrupt the running turn; clear the line; twice on an empty line: exit
  Ctrl+D                exit
  !command              run a shell command yourself (no question); it and its output join the conversation
  @path                 attach a file to the message (@server:uri attaches an MCP resource)"""


def is_shell_escape(line: str) -> bool:
    """A message that starts with `!` is a shell command the user runs (`shell_escape.py`; `!` alone is not)."""
    return line.startswith("!") and bool(line[1:].strip())


def is_command(line: str) -> bool:
    """True when `line` is a slash command (not a message that starts with a path)."""
    if not line.startswith("/"):
        return False
    first = line.split(maxsplit=1)[0]
    return "/" not in first[1:]


class SlashCommands:
    """Runs slash commands for a REPL."""

    def __init__(self, repl: SlashHost) -> None:
        self.repl = repl
        self._handlers: dict[str, Callable[[str], Awaitable[bool]]] = {
            "/help": self.help,
            "/clear": self.clear,
            "/compact": self.compact,
            "/status": self.status,
            "/context": self.context,
            "/model": self.model,
            "/permissions": self.permissions,
            "/memory": self.memory,
            "/init": self.init,
            "/resume": self.resume,
            "/output": self.output,
            "/export": self.export,
            "/bashes": self.bashes,
            "/rewind": self.rewind,
            "/hooks": self.hooks,
            "/agents": self.agents,
            "/exit": self.exit,
            "/quit": self.exit,
        }

    async def run(self, line: str) -> bool:
        """Run `line` (a slash command); True when the REPL should exit."""
        name, _, args = line.strip().partition(" ")
        args = args.strip()
        handler = self._handlers.get(name)
        if handler is not None:
            return await handler(args)
        from ..kit.commands import Done, Send, resolve

        host = await self.repl.ready()
        outcome = await resolve(host, line.strip())  # a custom command, an MCP prompt, a skill (`kit.commands`)
        for note in outcome.notes if isinstance(outcome, Send | Done) else ():
            self.repl.say(note, "yellow")
        if isinstance(outcome, Send):
            if outcome.kind == "skill":
                self.repl.say(f"loaded skill {name[1:]}", "dim")
            await self.repl.turn(outcome.text, inject=outcome.context, scope=outcome.scope)
        elif isinstance(outcome, Done):
            self.repl.say(outcome.text, "red" if outcome.error else "dim")
        else:
            self.repl.say(outcome.message or f"unknown command {name} — /help lists the commands", "yellow")
        return False

    # ---- listings (help and completion) ----

    def completions(self) -> list[tuple[str, str]]:
        """(`/name`, description) of every command: built-ins, custom commands, MCP prompts, then skills."""
        out = [(b.name, b.help) for b in BUILTINS]
        for command in self.repl.command_catalog().commands:  # found before the session is built too
            if f"/{command.name}" not in BUILTIN_NAMES:
                hint = f" {command.argument_hint}" if command.argument_hint else ""
                out.append((f"/{command.name}", (command.description or "custom command") + hint))
        host = self.repl.host
        if host is not None:
            if host.mcp.manager is not None:
                out += [(f"/{p.command}", p.description or "MCP prompt") for p in host.mcp.manager.prompts()]
            for skill in host.knowledge.skills:
                if f"/{skill.id}" not in BUILTIN_NAMES:
                    out.append((f"/{skill.id}", skill.description or "skill"))
        return out

    def arguments(self, command: str) -> list[tuple[str, str]]:
        """Values a command takes, for completion."""
        host = self.repl.host
        if host is None:
            return []
        if command == "/permissions":
            return [
                ("revoke", "forget a recorded rule"),
                *((rule, "recorded rule") for rule in host.policy.session_rules()),
            ]
        if command == "/resume":
            now = time.time()
            return [(i.session_id[:12], f"{ago(now - i.modified)} · {i.preview}") for i in self._other_sessions(host)]
        if command == "/memory":
            return [("edit", "open it in $VISUAL or $EDITOR")]
        if command == "/model":
            from .model_command import describe, known_models

            return [(name, describe(name)) for name in known_models(host.config.kind)]
        return []

    # ---- built-ins ----

    async def help(self, args: str) -> bool:
        lines = ["commands:"]
        lines += [f"  {b.usage:<30} {b.help}" for b in BUILTINS if b.name != "/quit"]
        host = self.repl.host
        catalog = self.repl.command_catalog()
        if catalog.commands:
            lines.append("custom commands (.claude/commands/, .agents/commands/):")
            for command in catalog.commands:
                usage = f"/{command.name} {command.argument_hint}".strip()
                lines.append(f"  {usage:<30} {command.description}")
        lines += [f"warning: {warning}" for warning in catalog.warnings]
        if host is not None and host.knowledge.skills:
            lines.append("skills (/<id> [args] loads the skill and runs it):")
            lines += [f"  /{s.id:<29} {s.description}" for s in host.knowledge.skills]
        if host is not None and host.mcp.manager is not None and host.mcp.manager.prompts():
            lines.append("MCP prompts:")
            lines += [f"  {p.usage:<30} {p.description}" for p in host.mcp.manager.prompts()]
        lines.append(KEYS_HELP)
        self.repl.say("\n".join(lines))
        return False

    async def clear(self, args: str) -> bool:
        host = await self.repl.ready()
        saved = host.saved
        await host.new_conversation()
        kept = " (the previous one is in /resume)" if saved else ""
        self.repl.say(f"conversation cleared — a new session starts{kept}", "dim")
        return False

    async def compact(self, args: str) -> bool:
        host = await self.repl.ready()
        self.repl.say("compacting the conversation…", "dim")
        result = await host.session.compact_now(args)
        if isinstance(result, Compacted):
            self.repl.say(result.notice, "dim")
        elif isinstance(result, str):
            self.repl.say(result, "dim")
        return False

    async def status(self, args: str) -> bool:
        self.repl.say(status_report(await self.repl.ready()))
        return False

    async def context(self, args: str) -> bool:
        host = await self.repl.ready()
        for warning in await host.mcp.join(host.session.tools):  # the servers' tools count too
            self.repl.say(f"warning: {warning}", "yellow")
        self.repl.show_context(host)
        return False

    async def model(self, args: str) -> bool:
        from .model_command import model_command

        for line, style in model_command(await self.repl.ready(), args):
            self.repl.say(line, style)
        return False

    async def permissions(self, args: str) -> bool:
        policy = (await self.repl.ready()).policy
        words = args.split(maxsplit=1)
        if words and words[0] == "revoke":
            wanted = words[1].strip() if len(words) > 1 else ""
            rules = policy.session_rules()
            rule = rules[int(wanted) - 1] if wanted.isdigit() and 0 < int(wanted) <= len(rules) else wanted
            if rule and policy.revoke(rule):
                self.repl.say(f"revoked {rule}: such calls will ask again")
            else:
                self.repl.say(f"no recorded rule {wanted or '(none given)'}; /permissions lists them", "yellow")
            return False
        if words:
            self.repl.say("usage: /permissions, or /permissions revoke <number|rule>", "yellow")
            return False
        lines = [f"permission mode: {policy.mode}"]
        rules = policy.session_rules()
        if rules:
            lines.append("rules recorded by your “a” answers in this session:")
            lines += [f"  {n}. {rule}" for n, rule in enumerate(rules, 1)]
            lines.append("revoke one with /permissions revoke <number|rule>")
        else:
            lines.append("no rules recorded in this session (answer “a” at a permission prompt to record one)")
        others = [(kind, rule) for kind, rule in policy.rules.rules() if rule.source != "session"]
        if others:
            lines.append("rules from settings files and flags:")
            lines += [f"  {kind:<5} {rule.text}  ({rule.source})" for kind, rule in others]
        self.repl.say("\n".join(lines))
        return False

    async def memory(self, args: str) -> bool:
        host = await self.repl.ready()
        path = host.knowledge.memory.path
        shown = _shown_path(path, host.cwd)
        if args == "edit":
            editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
            if not editor:
                self.repl.say(f"set $EDITOR to edit {shown} from here (or ask the agent to remember something)")
                return False
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                await asyncio.to_thread(subprocess.run, [*shlex.split(editor), str(path)], check=False)
            except (OSError, ValueError) as exc:
                self.repl.say(f"could not start {editor}: {exc}", "red")
                return False
            self.repl.say(f"saved {shown}; the agent sees it from the next message", "dim")
            return False
        if args:
            self.repl.say("usage: /memory, or /memory edit", "yellow")
            return False
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            self.repl.say(
                f"memory: {shown} (no file yet: the agent writes it when you ask it to remember something; "
                "/memory edit to write it yourself)"
            )
            return False
        except OSError as exc:
            self.repl.say(f"memory: {shown}: cannot read it ({exc.strerror or exc})", "red")
            return False
        self.repl.say(f"memory: {shown} ({len(text):,} chars)")
        self.repl.show_markdown(text if text.strip() else "_(empty)_")
        return False

    async def init(self, args: str) -> bool:
        host = await self.repl.ready()
        await self.repl.turn(init_prompt(host.cwd, args))
        return False

    async def resume(self, args: str) -> bool:
        host = await self.repl.ready()
        sessions = self._other_sessions(host)
        if not sessions:
            self.repl.say("no other saved sessions in this directory")
            return False
        choice = args
        if not choice:
            now = time.time()
            lines = ["saved sessions of this directory, newest first:"]
            for number, info in enumerate(sessions[:20], 1):
                lines.append(
                    f"  {number:2d}. {info.session_id[:12]}  {ago(now - info.modified):<12} "
                    f"{info.messages:4d} messages  {info.preview}"
                )
            self.repl.say("\n".join(lines))
            choice = (await self.repl.ask("Resume which session? [number or id, Enter to cancel] ")).strip()
            if not choice:
                return False
        if choice.isdigit() and 0 < int(choice) <= len(sessions):
            picked = sessions[int(choice) - 1]
        else:
            matches = [i for i in sessions if i.session_id.startswith(choice)]
            if len(matches) != 1:
                self.repl.say(f"no single saved session matches {choice!r}", "yellow")
                return False
            picked = matches[0]
        from ..session_lock import SessionInUse

        try:
            warnings = await host.switch_to(picked.path)
        except (OSError, SessionInUse) as exc:  # in use: nothing changed, this conversation goes on
            self.repl.say(f"could not resume {picked.session_id[:12]}: {exc}", "red")
            return False
        for warning in warnings:
            self.repl.say(f"warning: {warning}", "yellow")
        self.repl.recap(f"resumed session {picked.session_id[:12]}")
        return False

    async def output(self, args: str) -> bool:
        """The whole output of a Bash command of this conversation, as the model got it (the REPL shows the
        last lines under each call)."""
        runs = bash_runs((await self.repl.ready()).session.messages)
        if args and not (args.isdigit() and int(args) > 0):
            self.repl.say(
                "usage: /output [N] — N = 1 for the last Bash command (the default), 2 for the one before", "yellow"
            )
            return False
        back = int(args) if args else 1
        if not runs:
            self.repl.say("no Bash command has run in this conversation yet", "yellow")
        elif back > len(runs):
            self.repl.say(
                f"only {len(runs)} Bash command{'s have' if len(runs) > 1 else ' has'} run in this conversation",
                "yellow",
            )
        else:
            command, content = runs[-back]
            self.repl.say(f"$ {command}", "bold")
            self.repl.say(content)
        return False

    async def export(self, args: str) -> bool:
        from .export import export

        host = await self.repl.ready()
        session = host.session
        title = f"ram session {session.session_id[:12]} · {host.model} · {session.context.cwd}"
        line, style = export(session.messages, title, args.strip(), session.context.cwd)
        self.repl.say(line, style)
        return False

    async def bashes(self, args: str) -> bool:
        from .bashes import bashes_command

        await bashes_command(self.repl, args)
        return False

    async def hooks(self, args: str) -> bool:
        hooks = (await self.repl.ready()).hooks
        entries = hooks.entries if hooks is not None else []
        if not entries:
            self.repl.say(
                "no hooks: add them to .claude/settings.json, .agents/settings.json or "
                '~/.config/react-agent-mini/settings.json ({"hooks": {"PreToolUse": [...]}})'
            )
            return False
        lines = ["hooks (each runs on this machine, outside the sandbox; read at start — restart to change them):"]
        for entry in entries:
            matcher = f" [{entry.matcher}]" if entry.matcher else ""
            source = entry.source or "this program"
            lines.append(f"  {entry.event}{matcher}  {entry.label}  ({source}, timeout {entry.timeout:g} s)")
        self.repl.say("\n".join(lines))
        return False

    async def agents(self, args: str) -> bool:
        host = await self.repl.ready()
        if host.tool("Agent") is None:
            self.repl.say("the Agent tool is not offered in this session (--tools)", "yellow")
            return False
        lines = ["agent types (the model starts them with the Agent tool; files in .claude/agents/, .agents/agents/):"]
        for agent in host.agents.agents:
            tools = ", ".join(agent.tools) if agent.tools else "all tools"
            where = str(agent.path) if agent.path is not None else agent.scope
            lines.append(f"  {agent.name:<20} {tools} · {where}")
            lines.append(f"  {'':<20} {agent.description}")
        for warning in host.agents.warnings:
            lines.append(f"warning: {warning}")
        self.repl.say("\n".join(lines))
        return False

    async def rewind(self, args: str) -> bool:
        from .rewind import rewind_command

        await rewind_command(self.repl, args)
        return False

    async def exit(self, args: str) -> bool:
        return True

    def _other_sessions(self, host: SessionHost) -> list[SessionInfo]:
        from .. import transcript

        return [i for i in transcript.list_sessions(host.cwd) if i.session_id != host.session_id]


def _shown_path(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
