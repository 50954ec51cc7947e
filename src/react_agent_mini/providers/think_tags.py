"""Reasoning written inside the answer text, `<think>…</think>`, split off as it streams.

Servers that run a reasoning model without a reasoning parser put the model's reasoning in `content` between tags:
Groq with `reasoning_format: raw` (its default for DeepSeek-R1 distills and Qwen3), Hugging Face's router serving
DeepSeek-R1, vLLM, llama.cpp and Ollama without a parser; Gemini's OpenAI-compatible endpoint does the same with
`<thought>` when asked to include thoughts. Some chat templates open the reasoning in the prompt, so the content
starts inside it and carries only the closing `</think>`.

`ThinkTagSplitter` takes the content piece by piece, as the chunks bring it, and says which text is reasoning and
which is answer. A tag cut across two pieces (`<thi` + `nk>`) is held back until it is whole, and released as text
when it turns out not to be a tag. A closing tag with no opening one before it (`lone_close`) means everything
before it was reasoning: what was already passed on as answer cannot be taken back, so the caller moves it; and a
splitter made with `open_at_start` (a server seen doing that, or a model whose name says its template opens the
reasoning: `opens_reasoning`) starts inside the reasoning until a tag, or a reasoning field, says otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

TAGS = {"<think>": "</think>", "<thought>": "</thought>"}
"""Opening tags and the closing tag each one needs."""
_CLOSINGS = frozenset(TAGS.values())
_ALL = (*TAGS, *_CLOSINGS)
_LONGEST = max(map(len, _ALL))
_OPENING_TEMPLATES = re.compile(r"thinking|qwq|deepseek-r1|r1-distill", re.IGNORECASE)
"""Models whose chat templates end the prompt with `<think>`: Qwen3's *-Thinking-2507, QwQ, DeepSeek-R1 (0528 and
the distills), Kimi-K2-Thinking."""


def opens_reasoning(model: str) -> bool:
    """The model's name says its template opens the reasoning in the prompt, so the content may start inside it."""
    return bool(_OPENING_TEMPLATES.search(model))


class ThinkTagSplitter:
    """Feed it content pieces; it yields `(is_reasoning, text)` pieces with the tags taken out."""

    def __init__(self, *, open_at_start: bool = False) -> None:
        self._closing = "</think>" if open_at_start else ""
        """The tag that ends the reasoning we are in; empty outside reasoning."""
        self._held = ""
        self._assumed_open = open_at_start
        self._seen_tag = False
        self.lone_close = False
        """A closing tag came before any opening one: the content so far was reasoning."""
        self.closed = False
        """The last tag seen ended a reasoning section (the answer text after it may start with a line break)."""

    @property
    def inside(self) -> bool:
        """The text fed last was reasoning."""
        return bool(self._closing)

    def drop_assumption(self) -> None:
        """The server parses reasoning into its own field: content does not start inside it after all."""
        if self._assumed_open and not self._seen_tag:
            self._assumed_open, self._closing = False, ""

    @property
    def only_assumed(self) -> bool:
        """It started inside the reasoning (`open_at_start`) and no tag has come since: nothing said it was."""
        return self._assumed_open and not self._seen_tag

    def feed(self, text: str) -> Iterator[tuple[bool, str]]:
        """The pieces of `held + text` that can be told apart now."""
        text = self._held + text
        self._held = ""
        while text:
            at, tag = self._next_tag(text)
            if tag is None:
                keep = _partial_tag_at_end(text)
                if keep:
                    text, self._held = text[:-keep], text[-keep:]
                if text:
                    yield self.inside, text
                return
            if at:
                yield self.inside, text[:at]
            text = text[at + len(tag) :]
            self._switch(tag)

    def flush(self) -> Iterator[tuple[bool, str]]:
        """At the end of the content: a held-back piece that never became a tag is text as it stands."""
        if self._held:
            held, self._held = self._held, ""
            yield self.inside, held

    def _next_tag(self, text: str) -> tuple[int, str | None]:
        """The first tag in `text` that changes something here: inside, our closing tag; outside, an opening tag,
        or a closing one when no tag was seen yet (the reasoning was open from the start)."""
        wanted = (self._closing,) if self._closing else (*TAGS, *(() if self._seen_tag else _CLOSINGS))
        if self._assumed_open and not self._seen_tag:
            wanted = (*wanted, *TAGS)  # started inside by assumption: an opening tag says where it really starts
        found = [(text.find(tag), tag) for tag in wanted]
        hits = [(at, tag) for at, tag in found if at >= 0]
        return min(hits) if hits else (-1, None)

    def _switch(self, tag: str) -> None:
        if tag in TAGS:
            self._closing = TAGS[tag]
        elif self._closing:
            self._closing = ""
        else:
            self.lone_close = True
        self.closed = tag not in TAGS
        self._seen_tag = True


def _partial_tag_at_end(text: str) -> int:
    """How many characters at the end of `text` could be the start of a tag still arriving."""
    start = text.rfind("<", max(0, len(text) - _LONGEST))
    if start < 0:
        return 0
    tail = text[start:]
    return len(tail) if any(tag.startswith(tail) and tag != tail for tag in _ALL) else 0
