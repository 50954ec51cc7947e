"""Permission rules: their syntax (`grammar.py`) and the rule sets that judge calls (`ruleset.py`).

The names below are the package's interface; what a Bash command touches comes from `..bash` (`bash.view`), which
`ruleset.inspect_call` asks on the first Bash call."""

from __future__ import annotations

from .grammar import (
    PERMISSION_MODES,
    RULE_KINDS,
    PermissionMode,
    Rule,
    RuleError,
    RuleKind,
    RuleMatch,
    Verdict,
    escape_pattern,
    parse_rule,
    split_rule_list,
)
from .ruleset import CallView, PathTarget, RuleSet, inspect_call

__all__ = [
    "PERMISSION_MODES",
    "RULE_KINDS",
    "CallView",
    "PathTarget",
    "PermissionMode",
    "Rule",
    "RuleError",
    "RuleKind",
    "RuleMatch",
    "RuleSet",
    "Verdict",
    "escape_pattern",
    "inspect_call",
    "parse_rule",
    "split_rule_list",
]
