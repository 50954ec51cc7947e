"""`ram --help`'s usage line and options, recorded from `cli.build_parser(help_only=True)` by
`python -m react_agent_mini.help_record` (do not edit: `tests/test_help_text.py` says when to run it)."""

PYTHON = (3, 11)
"""The Python whose argparse formatted the entries below (their layout differs between versions)."""
USAGE = "ram [-h] [options] [task ...]\n       ram {mcp,batch,acp,trust,rewind,usage,view} ...  (see below)"
SECTIONS = (
    ("positional arguments", None, (("task", "the task; omit it to read stdin or start the REPL"),)),
    (
        "options",
        None,
        (
            ("-h, --help", "show this help message and exit"),
            ("-p, --print", "non-interactive: read the task from stdin"),
            ("--provider {openai,anthropic}", "model API to use (default: whichever key is set)"),
            ("--model MODEL", "model id (overrides OPENAI_MODEL / ANTHROPIC_MODEL)"),
            ("--mock", "offline scripted demo model: no key, no network"),
            ("--max-turns N", "stop after N model calls (default 20)"),
            (
                "--output-format {text,json,stream-json}",
                "text (answer on stdout, tool lines on stderr), json (one result object), stream-json (one JSON event per line)",
            ),
            (
                "--permission-mode {default,acceptEdits,plan,bypassPermissions,dontAsk,auto}",
                "default: ask before changes (headless: deny); acceptEdits: allow edits inside the workspace; plan: read-only; bypassPermissions: allow everything not denied by a rule; dontAsk: deny what would be asked, even with a driving program; auto: as default",
            ),
            (
                "--allowed-tools RULES, --allowedTools RULES",
                'allow rules, comma- or space-separated, e.g. "Read,Edit(src/**),Bash(git diff:*)"',
            ),
            (
                "--disallowed-tools RULES, --disallowedTools RULES",
                'deny rules, same syntax, e.g. "Bash(rm:*),Read(./secrets/**)"',
            ),
            (
                "--sandbox {read-only,workspace-write,off}",
                "the OS sandbox Bash commands run in (bubblewrap; default workspace-write where it works): writable are the workspace, --add-dir directories and a private /tmp (read-only: only /tmp); no network; paths under Read deny rules hidden. Given explicitly, a machine where it cannot run is an error (exit 2)",
            ),
            ("--sandbox-network", "let sandboxed commands use the network"),
            ("-c, --continue", "continue this directory's newest session"),
            (
                "-r [ID], --resume [ID]",
                "continue the session with this id (or id prefix); without ID, list this directory's sessions",
            ),
            (
                "--print-system-prompt",
                "print the system prompt this directory gives (base prompt, environment, AGENTS.md/CLAUDE.md, memory, skills) and exit",
            ),
            ("-v, --version", "show program's version number and exit"),
        ),
    ),
    (
        "Claude Code compatibility (what the Claude Agent SDK and claude-code-acp pass)",
        None,
        (
            (
                "--input-format {text,stream-json}",
                "stream-json: a long-lived session driven over stdin/stdout with Claude Code's NDJSON protocol (user messages and control requests in; needs --output-format stream-json)",
            ),
            (
                "--include-partial-messages",
                "stream-json: also write stream_event lines as the answer streams (text and thinking deltas)",
            ),
            (
                "--permission-prompt-tool stdio",
                "stdio: ask the driving program (can_use_tool control requests) instead of denying what needs asking",
            ),
            (
                "--system-prompt TEXT",
                "replace ram's base instructions (AGENTS.md/CLAUDE.md, memory and skills still follow); an empty value (\"\", as the SDK sends by default) keeps ram's own",
            ),
            ("--system-prompt-file PATH", "the same, read from a file"),
            ("--append-system-prompt TEXT", "text added at the end of the system prompt"),
            (
                "--tools TOOLS",
                'the built-in tools offered: "default" (all but the Echo demo tool, which only --mock offers), "" (none), or a list such as "Read,Grep" or "default,Echo"',
            ),
            (
                "--mcp-config JSON|PATH",
                'MCP servers, {"mcpServers": {...}} as JSON or a file (repeatable; they win over .mcp.json; SDK-hosted "type": "sdk" servers are skipped with a warning)',
            ),
            ("--strict-mcp-config", "use only the --mcp-config servers"),
            (
                "--setting-sources LIST",
                "which settings files give permission rules and hooks: user (~/.config/react-agent-mini/settings.json), project (.claude/settings.json, .agents/settings.json), local (.claude/settings.local.json); default all",
            ),
            (
                "--settings JSON|PATH",
                "one more settings object or file; its `permissions` and `hooks` apply (other keys are named and ignored)",
            ),
            ("--session-id UUID", "the new session's id (a UUID not used yet)"),
            ("--fork-session", "with --resume/--continue: continue as a new session"),
            ("--no-session-persistence", "save no transcript of this session"),
            (
                "--max-budget-usd X",
                "stop once the session's cost at list price reaches X dollars (error_max_budget_usd)",
            ),
            (
                "--allow-dangerously-skip-permissions",
                "let a driving program switch to bypassPermissions during the session",
            ),
            ("--add-dir DIR", "a directory Bash commands may also write in the sandbox (repeatable)"),
        ),
    ),
    (
        "accepted for Claude Code compatibility, no effect",
        "--verbose --include-hook-events --fallback-model M --max-thinking-tokens N --thinking MODE\n--thinking-display X --effort LEVEL --betas LIST --json-schema JSON --plugin-dir DIR --agent NAME\n--debug [FILTER] --debug-to-stderr --debug-file F --task-budget N --resume-session-at ID\n--resume-drops-turn X --session-mirror",
        (),
    ),
)
