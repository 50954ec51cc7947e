"""The built-in tools' schemas as the first request lists them, as prebuilt data (`tools.json`).

The early lane (`lane.py`) cannot import the tools (their modules pull in msgspec, the permission checker, the
sandbox): it reads what they declare from here. `python -m react_agent_mini.early.schemas` writes the file from the
tools themselves; `tests/test_early_request.py` fails when it differs from them.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

FILE = os.path.join(os.path.dirname(__file__), "tools.json")


class Schema:
    """One tool as a request lists it."""

    __slots__ = ("description", "input_schema", "name")

    def __init__(self, name: str, description: str, input_schema: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema


def prebuilt() -> list[Schema]:
    """The default tools of a session, in order, as `tools.json` holds them."""
    with open(FILE, encoding="utf-8") as file:
        return [Schema(t["name"], t["description"], t["input_schema"]) for t in json.load(file)]


def declared(cwd: Path) -> list[dict[str, Any]]:
    """The tools a session built for `cwd` with no configuration offers, from the tools themselves (heavy)."""
    from ..app import SessionOptions, build_session
    from ..config import ProviderConfig

    config = ProviderConfig("openai", "schemas", "http://127.0.0.1:9", api_key="unused")
    built = build_session(config, SessionOptions(cwd))
    return [
        {"name": spec.name, "description": spec.description, "input_schema": dict(spec.input_schema)}
        for spec in built.session.tools.specs()
    ]


def main() -> None:
    """Rewrite `tools.json` from the tools (run from an empty directory, with no settings of the user's)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as cwd:
        os.environ.update(HOME=cwd, XDG_CONFIG_HOME=os.path.join(cwd, "config"))  # none of this user's own files
        tools = declared(Path(cwd))
    with open(FILE, "w", encoding="utf-8") as file:
        json.dump(tools, file, ensure_ascii=False, indent=1)
        file.write("\n")
    print(f"{FILE}: {len(tools)} tools")


if __name__ == "__main__":
    main()
