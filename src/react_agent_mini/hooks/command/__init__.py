"""Command hooks from settings files, in Claude Code's format as-is.

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}

`config` reads the `hooks` blocks of the settings files the permissions come from (the user's, `.claude/settings.json`,
`.claude/settings.local.json`, `.agents/settings.json`, and `--settings`), once, when the session is built: a file
edited later changes nothing until the next session (as Claude Code's snapshot). `run` turns each entry into a
`hooks.HookEntry` whose handler runs the command with the event's JSON on stdin and reads its exit code, stdout and
stderr as Claude Code does. From then on they are hooks like any other: they run with the SDK's callbacks and a
library's, in every front end.

Hooks are the user's own commands: they run outside the sandbox, with the environment Bash commands get (ram's
credentials withheld) plus `CLAUDE_PROJECT_DIR`. A project's hooks are the project's, as in Claude Code; each session
names them in one line when it starts (and `/hooks` lists them), and `--setting-sources user` leaves them out.
"""
