"""Custom slash commands: Claude Code's `.claude/commands/**/*.md`, read as-is.

- `catalog`: where commands are found (`.agents/commands/` and `.claude/commands/` in the project, `commands/` in
  the user's config directory), their names (`frontend/component.md` is `/frontend:component`) and frontmatter
  (`description`, `argument-hint`, `allowed-tools`, `model`). Found the first time they are listed or run, not at
  startup.
- `expand`: the text a command sends — `$ARGUMENTS`, `$1`…, then `` !`command` `` (run through the permission
  policy, its output put in place) and `@file` (the file attached as a Read would show it).
- `invoke`: `/name args` typed in any front end, as the turn it becomes.
- `scope`: what that turn may do beyond the session's settings (`allowed-tools`, `model`), applied by the host.
"""
