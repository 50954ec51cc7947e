"""The session's checkpoints as tool calls happen: before a turn's first change to a file, keep what it was.

`Checkpoints` is the `ChangeObserver` the runner tells about every call (`tools.observed`):
- Write and Edit: before the call, the file's content (or its absence) is kept, once per file and turn; after it,
  the hash of what the agent left.
- Bash, for a command that is not read-only: in a git repository, the workspace is snapshotted before and after
  (`git.py`) and every path that differs is recorded the same way (its content before comes from the snapshot).
  Without git nothing can tell what a command touched, so the command is recorded as not covered and a rewind
  says so. (The sandbox knows where a command may write, not what it wrote.)
A turn is the user's message that started it (its id); its record also lists the turns before it in the
conversation, which is how a rewind knows what came after what once the conversation itself has been rewound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..messages import Message
from ..tools import paths
from ..tools.base import ToolContext

if TYPE_CHECKING:  # the store, git and content modules load at the first change, not at startup
    from tempfile import TemporaryDirectory

    from .git import GitSnapshots
    from .store import Before, CheckpointStore

FILE_TOOLS = frozenset({"Write", "Edit"})
TRACKED_MODES = frozenset({0o100644, 0o100755, 0o120000})


def is_turn_start(message: Message) -> bool:
    """A message the user typed (or a prompt sent for them): where a turn starts."""
    return message.is_user_text and not message.meta


def turn_id(message: Message, index: int) -> str:
    return message.id or f"#{index}"


def turn_ids(history: Sequence[Message]) -> list[str]:
    """The ids of the turns of `history`, in order (turn N is the N-th)."""
    return [turn_id(m, i) for i, m in enumerate(history) if is_turn_start(m)]


class TurnKey(msgspec.Struct, frozen=True):
    id: str
    history: tuple[str, ...]
    prompt: str


def current_turn(history: Sequence[Message]) -> TurnKey | None:
    starts = [(i, m) for i, m in enumerate(history) if is_turn_start(m)]
    if not starts:
        return None
    _, message = starts[-1]
    ids = tuple(turn_id(m, i) for i, m in starts)
    return TurnKey(ids[-1], ids, " ".join(message.text.split())[:200])


class StoreLocator:
    """The store of the session's current transcript (beside it), or of a scratch directory when nothing is saved."""

    def __init__(self, transcript: Callable[[], Path | None], session_id: Callable[[], str]) -> None:
        self._transcript = transcript
        self._session_id = session_id
        self._stores: dict[Path, CheckpointStore] = {}
        self._scratch: TemporaryDirectory[str] | None = None

    def __call__(self) -> CheckpointStore:
        from .store import CheckpointStore, store_dir

        path = self._transcript()
        if path is not None:
            directory = store_dir(path)
        else:
            if self._scratch is None:
                from tempfile import TemporaryDirectory

                self._scratch = TemporaryDirectory(prefix="ram-checkpoints-")
            directory = Path(self._scratch.name) / self._session_id()
        if directory not in self._stores:
            self._stores[directory] = CheckpointStore(directory)
        return self._stores[directory]


class _FileCall(msgspec.Struct):
    store: CheckpointStore
    turn: str
    file: Path


class _CommandCall(msgspec.Struct):
    store: CheckpointStore
    turn: str
    git: GitSnapshots
    root: Path
    tree: str


class Checkpoints:
    """Keeps what the agent's tool calls are about to change (a `ChangeObserver`)."""

    def __init__(self, history: Callable[[], Sequence[Message]], store: Callable[[], CheckpointStore]) -> None:
        self._history = history
        self._store = store
        self._git: dict[Path, GitSnapshots] = {}

    def store(self) -> CheckpointStore:
        """The store of the session's current transcript."""
        return self._store()

    def git_for(self, store: CheckpointStore, workspace: Path) -> GitSnapshots:
        """The snapshots of `workspace` through `store`'s private index."""
        from .git import GitSnapshots

        if store.directory not in self._git:
            self._git[store.directory] = GitSnapshots(workspace, store.directory / "git-index")
        return self._git[store.directory]

    async def before_call(self, tool: str, args: Mapping[str, Any], ctx: ToolContext) -> object | None:
        if tool not in FILE_TOOLS and tool != "Bash":
            return None
        turn = current_turn(self._history())
        if turn is None:
            return None
        store = self._store()
        if tool == "Bash":
            return await self._before_command(store, turn, args, ctx)
        raw = args.get("file_path")
        if not isinstance(raw, str) or not raw:
            return None
        file = paths.resolve(ctx.cwd, raw)
        _mark(store, turn)
        keep_before(store, turn.id, file)
        return _FileCall(store, turn.id, file)

    async def after_call(self, token: object) -> None:
        from .content import state_hash
        from .store import AfterRecord

        if isinstance(token, _FileCall):
            token.store.append(AfterRecord(token.turn, str(token.file), state_hash(token.file)))
        elif isinstance(token, _CommandCall):
            await self._after_command(token)

    async def _before_command(
        self, store: CheckpointStore, turn: TurnKey, args: Mapping[str, Any], ctx: ToolContext
    ) -> _CommandCall | None:
        from ..permissions.bash.view import inspect_command  # loaded already: the policy judged this command
        from .git import GitFailed
        from .store import UncoveredRecord

        command = args.get("command")
        if not isinstance(command, str) or inspect_command(command, ctx.cwd, ctx.shell.cwd).read_only:
            return None
        _mark(store, turn)
        git = self.git_for(store, ctx.cwd)
        root = await git.root()
        if root is None:
            store.append(UncoveredRecord(turn.id, command))
            return None
        try:
            tree = await git.snapshot()
        except (GitFailed, OSError) as exc:
            store.append(UncoveredRecord(turn.id, f"{command}  (git snapshot failed: {exc})"))
            return None
        return _CommandCall(store, turn.id, git, root, tree)

    async def _after_command(self, call: _CommandCall) -> None:
        from .content import state_hash
        from .git import ZERO, GitFailed
        from .store import Absent, AfterRecord, ChangeRecord, GitBlob, UncoveredRecord

        try:
            after = await call.git.snapshot()
            changes = await call.git.changes(call.tree, after)
        except (GitFailed, OSError) as exc:
            call.store.append(UncoveredRecord(call.turn, f"(git snapshot after a command failed: {exc})"))
            return
        for change in changes:
            if change.old_mode and change.old_mode not in TRACKED_MODES:
                continue  # a submodule
            file = call.root / change.rel
            if (call.turn, str(file)) not in call.store.changed:
                before: Before = Absent()
                if change.old_id != ZERO:
                    before = GitBlob(change.old_id, change.old_mode, str(call.root), change.rel)
                call.store.append(ChangeRecord(call.turn, str(file), before))
            call.store.append(AfterRecord(call.turn, str(file), state_hash(file)))


def _mark(store: CheckpointStore, turn: TurnKey) -> None:
    from .store import TurnRecord

    if turn.id not in store.marked:
        store.append(TurnRecord(turn.id, list(turn.history), turn.prompt))


def keep_before(store: CheckpointStore, turn: str, file: Path) -> None:
    """Record what `file` holds now, unless this turn already did."""
    from .content import NotTrackable, read_state
    from .store import Absent, Blob, ChangeRecord, Untracked

    if (turn, str(file)) in store.changed:
        return
    before: Before
    try:
        state = read_state(file)
    except NotTrackable as exc:
        before = Untracked(str(exc))
    except OSError as exc:
        before = Untracked(f"unreadable: {exc.strerror or exc}")
    else:
        before = Absent() if state is None else Blob(store.put_blob(state.data), state.mode)
    store.append(ChangeRecord(turn, str(file), before))
