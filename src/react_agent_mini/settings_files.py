"""Where ram's settings files are: the user's, then the project's, in load order.

The permission rules (`permissions.settings`), the hooks (`hooks.command.config`) and the search backend
(`web.search_config`) all read these files; the paths live here, below all of them, so none has to import another
to find them. What each file may say, and what a project's file may not, is for its readers.

1. the user's `$XDG_CONFIG_HOME/react-agent-mini/settings.json` (default `~/.config/...`),
2. `<workspace>/.claude/settings.json` and 3. `.claude/settings.local.json` (Claude Code's format),
4. `<workspace>/.agents/settings.json`.

`sources` (`--setting-sources user,project,local`) picks among them: `user` is file 1, `project` files 2 and 4,
`local` file 3.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json", ".agents/settings.json")
"""Settings files inside the workspace, in load order."""
SETTING_SOURCES = ("user", "project", "local")
"""The names `--setting-sources` takes (Claude Code's)."""
_SOURCE_OF = {
    ".claude/settings.json": "project",
    ".claude/settings.local.json": "local",
    ".agents/settings.json": "project",
}


def user_settings_path(env: Mapping[str, str] | None = None) -> Path:
    """The user-level settings file."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME", "")
    # the XDG spec says a relative value is invalid and must be ignored
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "react-agent-mini" / "settings.json"


def settings_files(
    workspace: Path, env: Mapping[str, str] | None = None, sources: Iterable[str] | None = None
) -> list[Path]:
    """Every settings file consulted, in load order (whether or not it exists); `sources`: only those of these
    kinds (`user`, `project`, `local`), None: all."""
    wanted = set(SETTING_SOURCES if sources is None else sources)
    files = [user_settings_path(env)] if "user" in wanted else []
    return files + [workspace / name for name in PROJECT_SETTINGS if _SOURCE_OF[name] in wanted]
