"""`ram batch TASKS --out DIR [options]`: the subcommand's arguments, turned into the driver's options and the
workers' settings."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EPILOG = """\
tasks file (JSONL, one task a line):
  {"id": "fix-1", "repo": "repos/calc", "base_commit": "4f2a9c1", "prompt": "Fix the failing test",
   "setup": "pip install -e .", "test": "python -m pytest -q", "model": "gpt-4.1-mini", "max_turns": 30}
  SWE-bench instances are read as they are (instance_id, problem_statement, repo, base_commit).
  A relative repo path is relative to the tasks file; a bad line is reported with its number and skipped.

DIR gets results.jsonl (one line per task), patches/<id>.patch, transcripts/<id>.jsonl, preds.json
(SWE-bench predictions) and summary.json. Run the same command again to go on after Ctrl+C, a crash or a full
disk: tasks with a result are skipped (--retry-failed runs the ones that did not complete again).

permissions: every task gets the same ones. The default mode is acceptEdits: edits inside the task's workspace
(a throwaway clone) are allowed; Bash commands that change something need --allowed-tools rules (e.g.
"Bash(python -m pytest:*)"), ALLOW_WRITE=1, the sandbox (where bubblewrap works, commands confined to the
workspace run under acceptEdits), or --permission-mode bypassPermissions. Only the user settings file is read
(--setting-sources user): a task's repository cannot grant itself permissions. MCP servers are not started.

exit codes: 0 every task of the file completed · 1 some did not (or a line was bad, or --max-cost or a full disk
stopped the batch) · 2 usage error (bad flags, DIR in use by another batch, no Ray cluster) · 130/143
interrupted (Ctrl+C, SIGTERM; run again to go on)
"""


def build_parser() -> argparse.ArgumentParser:
    from ..claude_flags import SDK_PERMISSION_MODES
    from ..provider_registry import flag_choices

    parser = argparse.ArgumentParser(
        prog="ram batch",
        description="Run many tasks at once, each in its own workspace (a git clone at its base commit) and session.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", type=Path, nargs="?", metavar="TASKS", help="the tasks file (JSONL)")
    parser.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="where results go")
    parser.add_argument("--workers", type=int, default=4, metavar="N", help="tasks at once (default 4)")
    parser.add_argument("--max-turns", type=int, default=20, metavar="N", help="model calls per task (default 20)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="time limit per task (default: none)")
    parser.add_argument("--max-cost", type=float, metavar="USD", help="stop the batch once it has spent this much")
    parser.add_argument("--retry-failed", action="store_true", help="run again the tasks whose result is not completed")
    parser.add_argument("--provider", choices=flag_choices(), help="model API (default: whichever key is set)")
    parser.add_argument("--model", help="model id for tasks that do not name one")
    parser.add_argument("--mock", action="store_true", help="the offline scripted demo model")
    parser.add_argument("--model-name", metavar="NAME", help="model_name_or_path in preds.json (default: the model id)")
    parser.add_argument(
        "--permission-mode", choices=SDK_PERMISSION_MODES, default="acceptEdits", help="default: acceptEdits"
    )
    parser.add_argument("--allowed-tools", action="append", default=[], metavar="RULES", help="allow rules")
    parser.add_argument("--disallowed-tools", action="append", default=[], metavar="RULES", help="deny rules")
    parser.add_argument(
        "--setting-sources", default="user", metavar="LIST", help="settings files to read: user,project,local (user)"
    )
    parser.add_argument("--settings", metavar="JSON|PATH", help="one more settings object (its permissions)")
    parser.add_argument("--sandbox", choices=["read-only", "workspace-write", "off"], help="as for ram")
    parser.add_argument("--sandbox-network", action="store_true", help="let sandboxed commands use the network")
    parser.add_argument("--keep-workspaces", action="store_true", help="leave each task's workspace in DIR/workspaces")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="run the tasks on a Ray cluster: auto (default), host:port or ray://host:port (pip install "
        "'react-agent-mini[ray]'); --workers then caps the tasks in flight",
    )
    parser.add_argument("--ray-num-cpus", type=float, default=1.0, metavar="N", help="CPUs per task on Ray (1)")
    parser.add_argument(
        "--ray-runtime-env",
        metavar="JSON|PATH",
        help='Ray runtime_env for the workers, e.g. {"pip": ["react-agent-mini"]}',
    )
    return parser


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.tasks is None and args.ray is not None and Path(args.ray).is_file():  # `--ray TASKS`: --ray took it
        args.tasks, args.ray = Path(args.ray), "auto"
    problem = _check(args)
    if problem:
        parser.error(problem)
    try:
        built = _build(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if isinstance(built, int):
        return built
    options, settings = built
    from .run import run_batch

    try:
        return asyncio.run(run_batch(options, settings, out=sys.stdout, err=sys.stderr))
    except KeyboardInterrupt:  # before the driver's own handlers were in place
        print("\ninterrupted", file=sys.stderr)
        return 130


def _check(args: argparse.Namespace) -> str:
    if args.tasks is None:
        return "the following arguments are required: TASKS"
    if args.workers < 1:
        return "--workers must be at least 1"
    if args.max_turns < 1:
        return "--max-turns must be at least 1"
    if args.timeout is not None and not args.timeout > 0:
        return "--timeout must be above 0"
    if args.max_cost is not None and not args.max_cost > 0:
        return "--max-cost must be above 0"
    if args.ray_num_cpus < 0:
        return "--ray-num-cpus must be 0 or more"
    return ""


def _build(args: argparse.Namespace) -> Any:
    """(BatchOptions, RunSettings), or an exit code after printing why not."""
    import msgspec

    from ..claude_flags import FlagError, setting_sources
    from ..config import ConfigError, resolve_provider
    from ..permission_modes import is_sdk_only
    from ..permissions.configured import PermissionOptions
    from ..permissions.rules import PermissionMode
    from .run import BatchOptions
    from .settings import RunSettings

    try:
        sources = setting_sources(args.setting_sources)
        provider = resolve_provider(provider=args.provider, model=args.model, mock=args.mock)
    except (FlagError, ConfigError) as exc:
        raise ValueError(str(exc)) from None
    mode: PermissionMode = "default" if is_sdk_only(args.permission_mode) else args.permission_mode
    permissions = PermissionOptions(
        mode,
        tuple(args.allowed_tools),
        tuple(args.disallowed_tools),
        setting_sources=sources,
        settings=_settings_text(args.settings),
    )
    sandbox = None
    if args.sandbox is not None or args.sandbox_network:
        from ..sandbox.settings import sandbox_from_flags

        args.setting_sources = sources
        sandbox = sandbox_from_flags(args, os.environ)
        if sandbox is None:
            return 2
        sandbox = msgspec.structs.replace(sandbox, warnings=())
    out = args.out.resolve()
    settings = RunSettings(
        provider,
        permissions,
        max_turns=args.max_turns,
        timeout=args.timeout,
        sandbox=sandbox,
        workspace_root=str(out / "workspaces") if args.ray is None else None,
        repo_cache=str(out / "repos") if args.ray is None else None,
        keep_workspaces=args.keep_workspaces,
    )
    options = BatchOptions(
        args.tasks,
        out,
        workers=args.workers,
        retry_failed=args.retry_failed,
        max_cost=args.max_cost,
        model_name=args.model_name,
        ray=args.ray,
        ray_num_cpus=args.ray_num_cpus,
        ray_runtime_env=_json_or_file(args.ray_runtime_env, "--ray-runtime-env"),
    )
    return options, settings


def _settings_text(value: str | None) -> str | None:
    """`--settings` as JSON text: a file is read here, so every worker (a Ray node too) gets the same object."""
    if value is None or value.lstrip().startswith("{"):
        return value
    try:
        return Path(value).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--settings: cannot read {value}: {exc.strerror or exc}") from None


def _json_or_file(value: str | None, flag: str) -> dict[str, Any] | None:
    if value is None:
        return None
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{flag}: cannot read {value}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{flag}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{flag}: expected a JSON object")
    return data
