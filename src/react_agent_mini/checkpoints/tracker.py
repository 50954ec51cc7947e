"""The session's checkpoints as tool calls happen: before a turn's first change to a file, keep what it was.

`Checkpoints` is the `ChangeObserver` the runner tells about every call (`tools.observed`):
- Write and Edit: before the call, the file's content (or its absence) is kept, once per file and turn; after it,
  the hash of what the agent left.
- Bash, for a command that is not read-only: in a git repository, the workspace is snapshotted before and after
  and every path that differs is recorded the same way (its content before comes from the snapshot), the snapshot
  before recorded before the command starts, so a command ram was killed during is rewound too (`commands.py`).
  Without git nothing can tell what a command touched, so the command is recorded as not covered and a rewind
  says so. (The sandbox knows where a command may write, not what it wrote.)
A turn is the user's message that started it (its id); its record also lists the turns before it in the
conversation, which is how a rewind knows what came after what once the conversation itself has been rewound.

When a checkpoint cannot be kept — the store's folder cannot be written, the disk is full, git fails — the call
still runs, as in Claude Code (whose file history logs the failure and lets the edit go ahead), but not silently:
`NotKept` says what rewind will not cover, and the runner adds that line to the call's result and shows it to the
user. The file's state before is then recorded as one that cannot be restored, where the store still takes that,
and is never taken from a later call of the same turn (which would "restore" a state the turn made).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..builtin_tools import family_named
from ..messages import Message
from ..tools import paths
from ..tools.base import ToolContext

if TYPE_CHECKING:  # the store, git, content and commands modules load at the first change, not at startup
    from tempfile import TemporaryDirectory

    from .commands import Running
    from .git import GitSnapshots
    from .store import Before, CheckpointStore

SNAPSHOT_FAMILIES = frozenset({"edit", "shell"})
"""The tool families whose calls may change files (`tools.declared`): Write and Edit, whose file is kept before
the call, and Bash, whose workspace is."""


def is_turn_start(message: Message) -> bool:
    """A message the user typed (or a prompt sent for them): where a turn starts."""
    return message.is_user_text and not message.meta


def typed_text(message: Message) -> str:
    """What the user typed to start the turn: `/review src/app.py` for a custom command (whose message holds the
    text it expanded to), else the message's text."""
    return message.typed or message.text


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
    return TurnKey(ids[-1], ids, " ".join(typed_text(message).split())[:200])


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
    not_kept: str = ""
    """Why its checkpoint could not be kept (said once the call has run, with what it left recorded if it can be)."""


class Checkpoints:
    """Keeps what the agent's tool calls are about to change (a `ChangeObserver`)."""

    def __init__(self, history: Callable[[], Sequence[Message]], store: Callable[[], CheckpointStore]) -> None:
        self._history = history
        self._store = store
        self._git: dict[Path, GitSnapshots] = {}
        self._settled: set[Path] = set()
        """Stores whose commands cut off by an earlier process were settled (`commands.settle`)."""
        self._running: set[str] = set()
        """The ids of this process's commands that have started and not ended."""

    def store(self) -> CheckpointStore:
        """The store of the session's current transcript."""
        return self._store()

    @property
    def running(self) -> frozenset[str]:
        """The commands of this process running now (a rewind must not settle them)."""
        return frozenset(self._running)

    def git_for(self, store: CheckpointStore, workspace: Path) -> GitSnapshots:
        """The snapshots of `workspace` through `store`'s private index."""
        from .git import GitSnapshots

        if store.directory not in self._git:
            self._git[store.directory] = GitSnapshots(workspace, store.directory / "git-index")
        return self._git[store.directory]

    async def before_call(self, tool: str, args: Mapping[str, Any], ctx: ToolContext) -> object | None:
        family = family_named(tool)
        if family not in SNAPSHOT_FAMILIES:
            return None
        turn = current_turn(self._history())
        if turn is None:
            return None
        store = self._store()
        if family == "shell":
            return await self._before_command(store, turn, args, ctx)
        raw = args.get("file_path")
        if not isinstance(raw, str) or not raw:
            return None
        file = paths.resolve(ctx.cwd, raw)
        try:
            await self._settle(store)
            _mark(store, turn)
            keep_before(store, turn.id, file)
        except Exception as exc:  # the store cannot be read or written
            store.changed.add((turn.id, str(file)))  # a later call's "before" would be a state this turn made
            shown = paths.display(ctx.cwd, file)
            what = f"rewind will not cover this change to {shown}: its checkpoint could not be saved"
            return _FileCall(store, turn.id, file, str(_not_kept(what, exc)))
        return _FileCall(store, turn.id, file)

    async def after_call(self, token: object) -> None:
        from .content import state_hash
        from .store import AfterRecord, NotKept

        if isinstance(token, _FileCall):
            try:
                token.store.append(AfterRecord(token.turn, str(token.file), state_hash(token.file)))
            except OSError as exc:
                if not token.not_kept:
                    what = f"a rewind will ask before restoring {token.file.name}: what the agent left is not recorded"
                    raise _not_kept(what, exc) from None
            if token.not_kept:
                raise NotKept(token.not_kept)
        elif isinstance(token, _CommandToken):
            from .commands import finish

            try:
                await finish(token.running)
            except Exception as exc:
                raise _not_kept("rewind will not cover what this command changed: its checkpoint failed", exc) from None
            finally:
                self._running.discard(token.running.record.id)

    async def _settle(self, store: CheckpointStore) -> None:
        """Before this process's first change: settle the commands an earlier one was killed during (a store that
        cannot be written now is settled by the next rewind instead)."""
        if store.directory in self._settled:
            return
        self._settled.add(store.directory)
        from .commands import settle

        with contextlib.suppress(OSError):
            await settle(store, self._running)

    async def _before_command(
        self, store: CheckpointStore, turn: TurnKey, args: Mapping[str, Any], ctx: ToolContext
    ) -> _CommandToken | None:
        from ..permissions.bash.view import inspect_command  # loaded already: the policy judged this command
        from .commands import start

        command = args.get("command")
        if not isinstance(command, str) or inspect_command(command, ctx.cwd, ctx.shell.cwd).read_only:
            return None
        try:
            await self._settle(store)
            _mark(store, turn)
            running = await start(store, self.git_for(store, ctx.cwd), turn.id, command)
        except Exception as exc:
            what = "rewind will not cover what this command changes: its checkpoint could not be saved"
            raise _not_kept(what, exc) from None
        if running is None:
            return None
        self._running.add(running.record.id)
        return _CommandToken(running)


class _CommandToken(msgspec.Struct):
    running: Running


def _not_kept(what: str, exc: Exception) -> Exception:
    """`exc` as a `NotKept` saying `what` (and why); one that already says what is not covered, as it is."""
    from .store import NotKept

    if isinstance(exc, NotKept):
        return exc
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    return NotKept(f"{what} ({reason})")


def _mark(store: CheckpointStore, turn: TurnKey) -> None:
    from .store import TurnRecord

    if turn.id not in store.marked:
        store.append(TurnRecord(turn.id, list(turn.history), turn.prompt))


def keep_before(store: CheckpointStore, turn: str, file: Path) -> None:
    """Record what `file` holds now, unless this turn already did. OSError when it cannot be kept: what the store
    still takes then is that the state before cannot be restored."""
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
        if state is None:
            before = Absent()
        else:
            try:
                before = Blob(store.put_blob(state.data), state.mode)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    why = f"its content then could not be saved ({exc.strerror or exc})"
                    store.append(ChangeRecord(turn, str(file), Untracked(why)))
                raise
    store.append(ChangeRecord(turn, str(file), before))
