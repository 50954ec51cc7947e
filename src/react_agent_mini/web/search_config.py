"""Which search backend WebSearch uses, if any: from the environment, else the user settings file.

In order: `SEARXNG_URL` (a SearXNG instance; no key), `BRAVE_API_KEY`, `TAVILY_API_KEY`; then the same in the user
settings (`~/.config/react-agent-mini/settings.json`):

    {"webSearch": {"searxngUrl": "http://localhost:8888"}}      (or "braveApiKey", "tavilyApiKey")

A project's settings cannot choose the backend: a cloned repository must not be able to send your queries to a
server of its choosing, nor learn your keys. With no backend, WebSearch is not offered to the model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded only once a backend is configured
    from .search import SearchBackend

ENVIRONMENT = (("SEARXNG_URL", "searxngUrl"), ("BRAVE_API_KEY", "braveApiKey"), ("TAVILY_API_KEY", "tavilyApiKey"))
SETTINGS_KEY = "webSearch"


def search_backend(workspace: Path, env: Mapping[str, str] | None = None) -> tuple[SearchBackend | None, list[str]]:
    """The configured backend (None: WebSearch is not offered), and warnings about the settings."""
    from ..settings_files import settings_files

    env = os.environ if env is None else env
    for variable, _key in ENVIRONMENT:
        if value := env.get(variable, "").strip():
            return _backend(variable, value, env), []
    user_file, *project_files = settings_files(workspace, env)
    warnings = [
        f"{path}: `{SETTINGS_KEY}` is accepted only from the user settings ({user_file}) (ignored)"
        for path in project_files
        if SETTINGS_KEY in _settings(path)
    ]
    block = _settings(user_file).get(SETTINGS_KEY)
    if block is None:
        return None, warnings
    if not isinstance(block, dict):
        return None, [*warnings, f"{user_file}: `{SETTINGS_KEY}` must be an object (ignored)"]
    for variable, key in ENVIRONMENT:
        setting = block.get(key)
        if isinstance(setting, str) and setting.strip():
            return _backend(variable, setting.strip(), env), warnings
    known = ", ".join(key for _, key in ENVIRONMENT)
    return None, [*warnings, f"{user_file}: `{SETTINGS_KEY}` names no backend ({known}); WebSearch is off"]


def _backend(variable: str, value: str, env: Mapping[str, str]) -> SearchBackend:
    from .fetch import FetchLimits
    from .search import BraveBackend, SearxngBackend, TavilyBackend

    timeout = FetchLimits.from_env(env).timeout
    if variable == "SEARXNG_URL":
        return SearxngBackend(value, timeout)
    if variable == "BRAVE_API_KEY":
        return BraveBackend(value, timeout)
    return TavilyBackend(value, timeout)


def _settings(path: Path) -> dict[str, Any]:
    """A settings file's object ({} when it is missing or broken: the permission loader reports that)."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}
