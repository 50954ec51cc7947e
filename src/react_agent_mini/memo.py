"""Per-object memo for the work done before every model call: the compaction stages' and estimates', and the
providers' wire form of each message.

Messages and blocks are immutable, so what is computed from one — its size, its cut or cleared copy — never
changes: computing it once is enough, and handing back the very same copy on every call keeps the outbound
history the same objects from call to call (so the next stage's memo, and the provider's, hit too). Without
it every call redid that work over the whole history and made new copies each time, which the memo then kept
alive: per-call cost and memory grew with the session.

The memo is keyed by object identity. It holds a weak reference to the object where it can (messages and tool
results), so an entry dies with its object — a history dropped by `/clear` or a summary is not kept alive by
what was computed from it — and otherwise keeps the object alive while its entry exists; either way an id can
never stand for another object while its value is cached. An optional `key` says what else the value depends
on (compared with `==`, after identity). It is bounded, and simply starts afresh when full.

`PrefixMemo` does the same for whole sequences that grow at their end: what was computed for the history at the
last call is reused for the part the next call shares with it; `PrefixUnion` keeps a union (the call ids of a request)
up to date the same way.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from itertools import compress, count
from operator import is_not
from typing import Generic, Protocol, TypeAlias, TypeVar

T = TypeVar("T")
V = TypeVar("V")

MAX_ENTRIES = 50_000


class _Counted(Protocol):
    computed: int


_ALL: list[_Counted] = []
"""Every memo made, for `computed_total` (they are module-level singletons: a handful per process)."""


def count_work(counter: _Counted) -> None:
    """Count `counter.computed` in `computed_total` (for stateful stages that are not memos themselves)."""
    _ALL.append(counter)


def computed_total() -> int:
    """How many values every memo together has computed so far: the work the per-call stages really did.
    Between two model calls it grows with what was added to the history, not with the history's length."""
    return sum(memo.computed for memo in _ALL)


class IdentityMemo(Generic[V]):
    """`memo(obj, compute, key=...)` → `compute(obj)`, computed once per object (and key)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._values: dict[int, tuple[Callable[[], object], object, V]] = {}
        self._max = max_entries
        self.computed = 0
        """How many values were computed (not found): what a call of the stages really worked on."""
        _ALL.append(self)

    def __call__(self, obj: T, compute: Callable[[T], V], key: object = None) -> V:
        entry = self._values.get(id(obj))
        if entry is not None and entry[0]() is obj and (entry[1] is key or entry[1] == key):
            return entry[2]
        value = compute(obj)
        self.computed += 1
        if len(self._values) >= self._max:
            self._values.clear()
        self._values[id(obj)] = (_reference(obj, partial(self._forget, id(obj))), key, value)
        return value

    def _forget(self, key: int, reference: object) -> None:
        """`obj` died: its entry goes (unless the id already names a newer object)."""
        entry = self._values.get(key)
        if entry is not None and entry[0] is reference:
            del self._values[key]


def _reference(obj: object, on_death: Callable[[weakref.ref[object]], None]) -> Callable[[], object]:
    """A weak reference to `obj` (messages and tool results are weak-referenceable), or, for anything else, a
    strong one: then the entry keeps `obj` alive, so its id cannot be reused while the entry exists."""
    try:
        return weakref.ref(obj, on_death)
    except TypeError:
        return lambda: obj


def shared_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items `a` and `b` share as the very same objects (compared at C speed)."""
    return next(compress(count(), map(is_not, a, b)), min(len(a), len(b)))


Step: TypeAlias = Callable[[Sequence[T], int, Sequence[V]], V]
"""`step(items, i, done)`: the result for `items[i]`, from `items[: i + 1]` and `done` (the results before i)."""


class PrefixMemo(Generic[T, V]):
    """Per-item results over a sequence that grows at its end between calls (the history, its outbound copy).

    `memo(items, step, key)` is `[step(items, i, done) for i in range(len(items))]`, but a call continues from an
    earlier one whose items it starts with (the very same objects, with an equal `key`): only the items after
    that shared start cost a `step`. So a stage run before every model call works on what was added since the
    last call, not on the whole history; finding the shared start is one identity comparison per item, in C.
    `step` must depend only on `items[: i + 1]`, `done` and what `key` stands for. The result is shared with
    the memo: do not change it. A few sequences are kept (one per stage's copy of the history, say); one not
    continued for `STALE_CALLS` calls is let go, so a history dropped by `/clear` or a summary is not kept.
    """

    STALE_CALLS = 8

    def __init__(self, slots: int = 4) -> None:
        self._slots: list[_Slot[T, V]] = []
        self._max = slots
        self._calls = 0
        self.computed = 0
        """How many steps ran (items not found in an earlier call's start)."""
        _ALL.append(self)

    def __call__(self, items: Sequence[T], step: Step[T, V], key: object = None) -> Sequence[V]:
        self._calls += 1
        best: _Slot[T, V] | None = None
        shared = 0
        for slot in reversed(self._slots):  # the newest first: the last call's is the likeliest
            if slot.key is key or slot.key == key:
                length = shared_prefix(slot.items, items)
                if length > shared:
                    best, shared = slot, length
                    if length == len(slot.items):
                        break  # a continuation of it: no other slot can share more that matters
        # Never extended in place: a result handed out earlier must not change under its holder.
        done = best.done[:shared] if best is not None else []
        for i in range(shared, len(items)):
            done.append(step(items, i, done))
        self.computed += len(items) - shared
        # The new sequence takes the place of the one it continues (most of which it shares: the next call will
        # continue it instead); one that only starts alike (another stage's copy of the same history) gets its
        # own slot. Slots not continued for a while, then the least recently used, make room.
        fresh = self._calls - self.STALE_CALLS
        if best is not None:
            best.used = self._calls
        self._slots = [s for s in self._slots if s.used >= fresh and not (s is best and 2 * shared >= len(s.items))]
        if len(self._slots) >= self._max:
            del self._slots[0]
        self._slots.append(_Slot(items if isinstance(items, tuple) else tuple(items), key, done, self._calls))
        return done

    def each(self, items: Sequence[T], compute: Callable[[T], V]) -> Sequence[V]:
        """`[compute(item) for item in items]`, continuing from an earlier call as `__call__` does."""
        return self(items, lambda seen, i, _done: compute(seen[i]), compute)


class _Slot(Generic[T, V]):
    """One sequence a `PrefixMemo` saw, with its results."""

    __slots__ = ("done", "items", "key", "used")

    def __init__(self, items: Sequence[T], key: object, done: list[V], used: int) -> None:
        self.items = items
        self.key = key
        self.done = done
        self.used = used
        """The memo's call count when it was last continued."""


K = TypeVar("K", bound=Hashable)


class PrefixUnion(Generic[T, K]):
    """The union of `keys(item)` over a sequence that changes mostly at its end between calls (a request: the
    history, cut now and then by compaction). Each call adds the keys of the items from the first one that is
    not the very same object as last time, so it costs work for what changed, not for the whole sequence. It only
    grows — the keys of items since dropped stay — until a sequence starts with another first item (another
    conversation, a history rewritten by a summary), when it starts afresh. The set is shared with the memo: do
    not change it."""

    def __init__(self, keys: Callable[[T], Iterable[K]]) -> None:
        self._keys = keys
        self._items: tuple[T, ...] = ()
        self._union: set[K] = set()
        self.computed = 0
        """How many items had their keys taken (not found, the very same, in the last call's sequence)."""
        _ALL.append(self)

    def __call__(self, items: Sequence[T]) -> AbstractSet[K]:
        if not items or not self._items or items[0] is not self._items[0]:
            self._union, same = set(), 0
        else:
            same = shared_prefix(self._items, items)
        for item in items[same:]:
            self._union.update(self._keys(item))
        self.computed += len(items) - same
        self._items = items if isinstance(items, tuple) else tuple(items)
        return self._union
