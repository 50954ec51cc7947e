"""The permission modes are one table (`permission_modes`): every list of them — the rule grammar's, ACP's, the
`--permission-mode` choices of ram, ram batch and ram acp, and their help — is read from it."""

from __future__ import annotations

import argparse
import ast
import inspect

from react_agent_mini import permission_modes
from react_agent_mini.acp import options as acp_options
from react_agent_mini.acp.main import build_parser as acp_parser
from react_agent_mini.batch.cli import build_parser as batch_parser
from react_agent_mini.cli import build_parser as ram_parser
from react_agent_mini.mcp_serve.main import build_parser as mcp_serve_parser
from react_agent_mini.permission_modes import MODES, PERMISSION_MODES, SDK_PERMISSION_MODES, is_sdk_only
from react_agent_mini.permissions import rules


def _literal(name: str) -> tuple[str, ...]:
    """The values of the Literal `name` is declared as in `permission_modes` (for the type checker only: at run time
    the module does not import typing)."""
    for node in ast.walk(ast.parse(inspect.getsource(permission_modes))):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            assert isinstance(node.value, ast.Subscript)
            values = ast.literal_eval(node.value.slice)
            return values if isinstance(values, tuple) else (values,)
    raise AssertionError(f"no {name} in permission_modes")


def _mode_flag(parser: argparse.ArgumentParser) -> argparse.Action:
    (action,) = [a for a in parser._actions if "--permission-mode" in a.option_strings]
    return action


def test_every_list_of_modes_is_the_table_s() -> None:
    assert tuple(MODES) == SDK_PERMISSION_MODES == (*PERMISSION_MODES, "dontAsk", "auto")
    assert PERMISSION_MODES == _literal("PermissionMode") == rules.PERMISSION_MODES
    assert _literal("SdkOnlyMode") == permission_modes.SDK_ONLY_MODES
    assert tuple(_mode_flag(ram_parser()).choices or ()) == SDK_PERMISSION_MODES
    assert tuple(_mode_flag(batch_parser()).choices or ()) == SDK_PERMISSION_MODES
    assert tuple(_mode_flag(acp_parser()).choices or ()) == PERMISSION_MODES
    assert tuple(_mode_flag(mcp_serve_parser()).choices or ()) == PERMISSION_MODES
    assert tuple(acp_options.MODES) == PERMISSION_MODES
    assert [name for name, _ in acp_options.MODES.values()] == [MODES[m].title for m in PERMISSION_MODES]


def test_the_help_names_every_mode_with_its_words() -> None:
    text = _mode_flag(ram_parser()).help or ""
    assert text == permission_modes.modes_help()
    for mode in SDK_PERMISSION_MODES:
        assert f"{mode}: {MODES[mode].help}" in text
    assert text.startswith("default: ask before changes (headless: deny); acceptEdits: allow edits inside")


def test_only_the_sdk_s_modes_run_as_default() -> None:
    assert [mode for mode in SDK_PERMISSION_MODES if is_sdk_only(mode)] == ["dontAsk", "auto"]
    assert not is_sdk_only("") and not is_sdk_only("plan")
