"""A transcript read into what its page shows: the records in file order — messages, model calls, summaries,
rewinds — and, for each model call, where compaction acted.

Records are decoded one line at a time (a line that cannot be read is counted, never fatal). The history is
replayed as `transcript.load` replays it (a `compact` record replaces it, a `rewind` cuts it), but only its length
is kept, which is what a call record is compared with:

- a **summary** is a `compact` record: the history was rewritten there (after the summary's own side call);
- **retain** (dropped turns): a call whose request left out more of the history than the call before it — the
  history then held `history` messages, of which `sent.messages - sent.notes` were sent;
- **microcompact** (cleared results): a call whose request held more cleared tool results than the one before.
A summary or a rewind starts the comparison afresh. Subagents' transcripts (`<session>/subagents/`) are read too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

import msgspec

from ..messages import Message, message_from_dict
from ..usage.scan import Counts

PARTS = ("system", "project", "memory", "skills", "tools", "user", "injected", "assistant")
"""The parts of a request, bottom of the stack first; tool results by tool come after them."""


class Context(msgspec.Struct):
    """A request's estimated tokens by part (call_record.py)."""

    system: int = 0
    project: int = 0
    memory: int = 0
    skills: int = 0
    tools: int = 0
    user: int = 0
    injected: int = 0
    assistant: int = 0
    results: dict[str, int] = msgspec.field(default_factory=dict)

    def parts(self) -> list[tuple[str, int]]:
        """(part, tokens) in stacking order; results as `Read results`, `Bash results`, ..."""
        fixed = [(name, getattr(self, name)) for name in PARTS]
        return fixed + [(f"{tool} results", tokens) for tool, tokens in sorted(self.results.items())]

    @property
    def total(self) -> int:
        return sum(tokens for _name, tokens in self.parts())


class Sent(msgspec.Struct):
    messages: int = 0
    cleared: int = 0
    cut: int = 0
    notes: int = 0


class CallRecord(msgspec.Struct):
    """A `call` record as the view reads it."""

    usage: Counts
    kind: str = "turn"
    model: str = ""
    ts: float = 0.0
    message: str = ""
    stop: str = ""
    context: Context | None = None
    sent: Sent | None = None


class Call(msgspec.Struct):
    """A model call as the page shows it."""

    number: int
    """1, 2, ... in the transcript's order."""
    record: CallRecord
    history: int = 0
    """Messages the history held when the call was made."""
    dropped: int = 0
    """Of those, the ones its request left out."""
    events: list[str] = msgspec.field(default_factory=list)
    """`micro`, `retain`: what compaction did first at this call."""
    message: int | None = None
    """The index (in `Story.items`) of the assistant message it produced."""

    @property
    def read(self) -> int:
        """Every input token the model read (plain, cache reads and cache writes): the context it carried."""
        u = self.record.usage
        return u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens

    @property
    def cache_share(self) -> float | None:
        read = self.read
        return self.record.usage.cache_read_input_tokens / read if read else None


class MessageItem(msgspec.Struct):
    message: Message
    ts: float = 0.0
    call: int | None = None
    """The number of the call that produced it (assistant messages)."""


class CallItem(msgspec.Struct):
    call: Call


class CompactItem(msgspec.Struct):
    """A summary rewrote the history here."""

    messages: list[Message]
    after_call: int
    """Calls recorded before it."""
    ts: float = 0.0


class RewindItem(msgspec.Struct):
    keep: int
    ts: float = 0.0


Item: TypeAlias = MessageItem | CallItem | CompactItem | RewindItem


class Story(msgspec.Struct):
    """One transcript, read."""

    path: Path
    meta: dict[str, Any]
    items: list[Item]
    calls: list[Call]
    broken: int = 0
    """Lines that could not be read."""
    subagents: list[Story] = msgspec.field(default_factory=list)

    @property
    def session_id(self) -> str:
        return str(self.meta.get("session_id") or self.path.stem)

    def all_calls(self) -> list[Call]:
        """This transcript's calls and its subagents'."""
        return [*self.calls, *(c for s in self.subagents for c in s.calls)]


_record = msgspec.json.Decoder(dict[str, Any])
_call = msgspec.json.Decoder(CallRecord)
_errors = (msgspec.DecodeError, msgspec.ValidationError, ValueError, KeyError, TypeError, AttributeError)


def read_story(path: Path, *, subagents: bool = True) -> Story:
    """The transcript at `path` (OSError when it cannot be read), with its subagents' when `subagents`."""
    story = Story(path, {}, [], [])
    ids: list[str] = []
    """The ids of the history's messages, as the replay stands."""
    last_cleared = last_dropped = 0
    with path.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                if line.startswith((b'{"type": "call"', b'{"type":"call"')):
                    record = _call.decode(line)
                    call = Call(len(story.calls) + 1, record)
                    if record.kind == "turn":
                        call.history = max(0, len(ids) - 1)  # the answer is already in the history
                        last_cleared, last_dropped = _events(call, last_cleared, last_dropped)
                        call.message = _answer_of(story, record.message)
                        if call.message is not None:
                            answer = story.items[call.message]
                            if isinstance(answer, MessageItem):
                                answer.call = call.number
                    story.calls.append(call)
                    story.items.append(CallItem(call))
                    continue
                raw = _record.decode(line)
                kind = raw.get("type")
                ts = float(raw.get("ts") or 0.0)
                if kind == "meta":
                    story.meta = raw
                elif kind == "message":
                    message = message_from_dict(raw["message"])
                    ids.append(message.id)
                    story.items.append(MessageItem(message, ts))
                elif kind == "compact":
                    messages = [message_from_dict(m) for m in raw["messages"]]
                    ids = [m.id for m in messages]
                    story.items.append(CompactItem(messages, len(story.calls), ts))
                    last_cleared = last_dropped = 0
                elif kind == "rewind":
                    ids = _rewound(ids, raw)
                    story.items.append(RewindItem(len(ids), ts))
                    last_cleared = last_dropped = 0
            except _errors:
                story.broken += 1
    if subagents:
        story.subagents = _subagents(path)
    return story


def _events(call: Call, last_cleared: int, last_dropped: int) -> tuple[int, int]:
    """Mark what compaction did first at this call; the counts the next call is compared with."""
    sent = call.record.sent
    if sent is None:
        return last_cleared, last_dropped
    call.dropped = max(0, call.history - (sent.messages - sent.notes))
    if sent.cleared > last_cleared:
        call.events.append("micro")
    if call.dropped > last_dropped:
        call.events.append("retain")
    return sent.cleared, call.dropped


def _answer_of(story: Story, message_id: str) -> int | None:
    """The index of the assistant message `message_id` names (the last item but the call itself, usually)."""
    for index in range(len(story.items) - 1, max(-1, len(story.items) - 4), -1):
        item = story.items[index]
        if isinstance(item, MessageItem) and item.message.role == "assistant" and item.message.id == message_id:
            return index
    return None


def _rewound(ids: list[str], raw: dict[str, Any]) -> list[str]:
    """The history's ids cut as a rewind record says (transcript._rewound)."""
    next_id = raw.get("next") or ""
    if next_id and next_id in ids:
        return ids[: len(ids) - 1 - ids[::-1].index(next_id)]
    keep = raw.get("keep")
    if isinstance(keep, int) and 0 <= keep <= len(ids):
        return ids[:keep]
    raise ValueError("a rewind record that does not fit the history")


def _subagents(path: Path) -> list[Story]:
    folder = path.with_suffix("") / "subagents"
    if not folder.is_dir():
        return []
    found = []
    for agent in sorted(folder.glob("*.jsonl")):
        try:
            found.append(read_story(agent, subagents=False))
        except OSError:
            continue
    return sorted(found, key=lambda s: float(s.meta.get("started") or 0.0))
