"""Every part of a folder's configuration that needs trust, as the loaders themselves find it.

The loaders are run with a gate that approves nothing, so what they leave out is exactly what trusting would
enable — the same parsing, the same digests, no second reading of the formats to drift apart. `describe` renders
the list for the REPL's question and `ram trust`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ..terminal_text import visible
from ..trust.gate import TrustGate
from ..trust.items import ItemKind, TrustItem

HEADINGS: dict[ItemKind, str] = {
    "hook": "run these hooks on this machine, outside the sandbox, at every matching event",
    "mcp": "start these MCP servers (their commands run on this machine; remote ones get what their headers say)",
    "allow": "let these run without asking (allow rules and a default mode)",
    "mode": "let these run without asking (allow rules and a default mode)",
    "command": "let these custom commands allow tools during their turn",
}


def project_items(cwd: Path, env: Mapping[str, str], sources: Iterable[str] | None = None) -> list[TrustItem]:
    """What trusting `cwd` would enable, in the order the loaders meet it (`sources`: `--setting-sources`)."""
    from ..context import user_config_dir
    from ..custom_commands.catalog import discover_commands
    from ..custom_commands.invoke import trust_item
    from ..hooks.command.config import load_command_hooks
    from ..mcp.config import load_mcp_config
    from ..permissions.settings import load_permissions

    folder = cwd.resolve()
    collector = TrustGate(folder)  # approves nothing: everything it is asked about is listed
    chosen = tuple(sources) if sources is not None else None
    load_permissions(folder, env, chosen, trust=collector)
    load_command_hooks(folder, env, chosen, trust=collector)
    load_mcp_config(folder, env, trust=collector)
    commands, _ = discover_commands(folder, user_config_dir(env))
    for command in commands:
        if command.scope == "project" and command.allowed_tools:
            collector.permits(trust_item(command, cwd=folder))
    return collector.withheld


def describe(items: Iterable[TrustItem], indent: str = "  ") -> list[str]:
    """The lines that show `items`, grouped under what trusting them does (control characters made visible)."""
    lines: list[str] = []
    shown: set[str] = set()
    ordered = sorted(items, key=lambda item: list(HEADINGS).index(item.kind))
    for item in ordered:
        heading = HEADINGS[item.kind]
        if heading not in shown:
            shown.add(heading)
            lines.append(f"{indent}{heading}:")
        lines.append(f"{indent}  {visible(item.source)}  {visible(item.label)}")
    return lines
