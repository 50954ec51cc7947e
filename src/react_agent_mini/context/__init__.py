"""What the agent knows before the first word: project instructions, skills, memory, and the system prompt.

- `project`: AGENTS.md / CLAUDE.md from the repository root down to the working directory, with `@path` imports;
- `skills`: SKILL.md discovery and the catalogue the system prompt carries (bodies load on demand via the Skill tool);
- `memory`: `.agents/memory/MEMORY.md`, re-read when it changes;
- `system_prompt`: assembles the above behind our own base prompt.

Every loader reports bad input as warning strings naming the file; none of them raises on a broken file.
This package imports nothing heavy: the YAML parser is loaded only when a SKILL.md has frontmatter.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_DIR_NAME = "react-agent-mini"
"""The directory name under the user's config home."""


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's config directory for react-agent-mini: `$XDG_CONFIG_HOME/react-agent-mini`, by default
    `~/.config/react-agent-mini` (it holds the user-level AGENTS.md and `skills/`)."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if config and os.path.isabs(config):
        return Path(config) / APP_DIR_NAME
    home = env.get("HOME", "")
    base = Path(home) if home and os.path.isabs(home) else Path.home()
    return base / ".config" / APP_DIR_NAME
