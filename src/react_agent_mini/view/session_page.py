"""A session's page: its facts and totals (the numbers `ram usage` gives for it), the timeline, a table of every
model call, the conversation, and each subagent's own calls and conversation.

The totals are a `usage.totals.Tally` over every call of the session and its subagents, priced the way `ram
usage` prices them, so the two always agree. Each call's row carries its numbers as `data-` attributes too, for a
program reading the page.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..pricing import cost_usd
from ..usage.totals import Tally
from .chart import timeline
from .conversation import Limits, conversation, limits_for
from .html import dollars, esc, number, page, share, span, when
from .reading import Call, CompactItem, MessageItem, Story


def tally_of(story: Story) -> Tally:
    """Every call of the session and of its subagents, as `ram usage` counts them."""
    tally = Tally()
    for part in (story, *story.subagents):
        fallback = str(part.meta.get("model") or "")
        for call in part.calls:
            tally.add(call.record.usage, call.record.model or fallback, story.session_id, "", "")
    return tally


def session_page(story: Story, *, back: tuple[str, str] | None = None, before: str = "", title: str = "") -> str:
    """The whole HTML page for `story`; `back`: (href, text) of a link up (a batch's index), `before`: HTML to put
    after the facts (a batch task's result and patch)."""
    limits = limits_for(story)
    meta = story.meta
    sid = story.session_id
    heading = title or f"Session {sid[:8]}"
    up = f'<p class="note"><a href="{esc(back[0])}">← {esc(back[1])}</a></p>' if back else ""
    where = esc(meta.get("cwd") or "")
    sub = f'<p class="sub">{where} · {esc(sid)} · transcript {esc(story.path)}</p>'
    body = [up, f"<h1>{esc(heading)}</h1>", sub, _facts(story), before]
    if story.broken:
        body.append(f'<p class="note">{story.broken} line(s) of the transcript could not be read and are left out.</p>')
    body.append('<h2 id="timeline">Timeline</h2>')
    body.append(timeline(story.calls, _summaries(story)))
    body.append('<h2 id="calls">Model calls</h2>')
    body.append(_calls_table(story.calls, str(meta.get("model") or "")))
    agent_links = {str(s.meta.get("parent_tool_use_id") or ""): f"agent-{i}" for i, s in enumerate(story.subagents, 1)}
    body.append('<h2 id="conversation">Conversation</h2>')
    body.append(f'<div id="messages">{conversation(story, limits, agent_links)}</div>')
    if story.subagents:
        body.append('<h2 id="subagents">Subagents</h2>')
        body += [_subagent(i, s, limits) for i, s in enumerate(story.subagents, 1)]
    return page(f"{heading} — ram view", "\n".join(b for b in body if b))


def _summaries(story: Story) -> list[int]:
    return [item.after_call for item in story.items if isinstance(item, CompactItem)]


def _facts(story: Story) -> str:
    tally = tally_of(story)
    cost, unpriced = tally.cost()
    calls = story.all_calls()
    stamps = [c.record.ts for c in calls if c.record.ts] + [
        i.ts for i in story.items if isinstance(i, MessageItem) and i.ts
    ]
    started = float(story.meta.get("started") or (min(stamps) if stamps else 0.0))
    ended = max(stamps) if stamps else started
    messages = sum(1 for i in story.items if isinstance(i, MessageItem))
    tools = sum(len(i.message.tool_uses) for i in story.items if isinstance(i, MessageItem))
    events = [e for c in story.calls for e in c.events]
    models = ", ".join(m or "(unknown)" for m in tally.models) or str(story.meta.get("model") or "")
    priced = dollars(cost) + (f" (+{unpriced} unpriced)" if unpriced else "")
    facts = [
        ("model calls", number(tally.calls)),
        ("model", models),
        ("tokens read", number(tally.input_tokens + tally.cache_read_tokens + tally.cache_write_tokens)),
        ("plain input", number(tally.input_tokens)),
        ("cache reads", number(tally.cache_read_tokens)),
        ("cache writes", number(tally.cache_write_tokens)),
        ("output", number(tally.output_tokens)),
        ("prefix-cache share", share(tally.cache_share)),
        ("cost (list price)", priced),
        ("messages", number(messages)),
        ("tool calls", number(tools)),
        ("started", when(started)),
        ("lasted", span(ended - started) if stamps else "—"),
        (
            "summaries · clears · drops",
            f"{len(_summaries(story))} · {events.count('micro')} · {events.count('retain')}",
        ),
    ]
    if story.subagents:
        facts.insert(1, ("of them subagents'", number(sum(len(s.calls) for s in story.subagents))))
    cells = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in facts)
    data = (
        f'data-calls="{tally.calls}" data-input-tokens="{tally.input_tokens}" '
        f'data-output-tokens="{tally.output_tokens}" data-cache-creation-input-tokens="{tally.cache_write_tokens}" '
        f'data-cache-read-input-tokens="{tally.cache_read_tokens}" '
        f'data-cost-usd="{"" if cost is None else repr(cost)}" data-unpriced-calls="{unpriced}"'
    )
    return f'<dl class="facts" id="totals" {data}>{cells}</dl>'


def _calls_table(calls: Sequence[Call], fallback_model: str, prefix: str = "") -> str:
    if not calls:
        return '<p class="note">No model call was recorded.</p>'
    head = (
        "<tr><th>#</th><th class=l>time</th><th class=l>kind</th><th class=l>model</th><th>context (est.)</th>"
        "<th>read</th><th>cache read</th><th>cache write</th><th>output</th><th>cached</th><th>cost</th>"
        "<th>sent</th><th>dropped</th><th class=l>events</th></tr>"
    )
    rows = [_call_row(call, fallback_model, prefix) for call in calls]
    return f'<div class="scroll"><table class="calls"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'


def _call_row(call: Call, fallback_model: str, prefix: str) -> str:
    record = call.record
    usage = record.usage
    model = record.model or fallback_model
    cost = cost_usd(model, usage.usage())
    context = record.context
    sent = record.sent
    tags = "".join(f'<span class="tag {e}">{e}</span>' for e in call.events)
    link = f'<a href="#{prefix}m-{call.message}">{call.number}</a>' if call.message is not None else str(call.number)
    data = (
        f'id="{prefix}call-{call.number}" data-call="{call.number}" data-kind="{esc(record.kind)}" '
        f'data-model="{esc(model)}" '
        f'data-input-tokens="{usage.input_tokens}" data-output-tokens="{usage.output_tokens}" '
        f'data-cache-read-input-tokens="{usage.cache_read_input_tokens}" '
        f'data-cache-creation-input-tokens="{usage.cache_creation_input_tokens}" '
        f'data-cost-usd="{"" if cost is None else repr(cost)}" data-events="{" ".join(call.events)}" '
        f'data-dropped="{call.dropped}" data-cleared="{sent.cleared if sent else 0}"'
    )
    return (
        f"<tr {data}><td>{link}</td><td class=l>{esc(when(record.ts)[11:])}</td><td class=l>{esc(record.kind)}</td>"
        f"<td class=l>{esc(model)}</td><td>{number(context.total) if context else '—'}</td>"
        f"<td>{number(call.read)}</td><td>{number(usage.cache_read_input_tokens)}</td>"
        f"<td>{number(usage.cache_creation_input_tokens)}</td><td>{number(usage.output_tokens)}</td>"
        f"<td>{share(call.cache_share)}</td><td>{dollars(cost)}</td>"
        f"<td>{number(sent.messages) if sent else '—'}</td><td>{number(call.dropped) if sent else '—'}</td>"
        f"<td class=l>{tags}</td></tr>"
    )


def _subagent(number_: int, story: Story, limits: Limits) -> str:
    meta = story.meta
    kind = esc(meta.get("agent_type") or "agent")
    what = esc(meta.get("description") or "")
    tally = Tally()
    for call in story.calls:
        tally.add(call.record.usage, call.record.model or str(meta.get("model") or ""), "", "", "")
    cost, _unpriced = tally.cost()
    prefix = f"a{number_}-"
    return (
        f'<section id="agent-{number_}" class="agent"><h3>{kind}: {what}</h3>'
        f'<p class="note">{number(tally.calls)} calls · read '
        f"{number(tally.input_tokens + tally.cache_read_tokens + tally.cache_write_tokens)} · out "
        f"{number(tally.output_tokens)} · {dollars(cost)} · transcript {esc(story.path)}</p>"
        f"{timeline(story.calls, _summaries(story), prefix)}"
        f"{_calls_table(story.calls, str(meta.get('model') or ''), prefix)}"
        f"<details><summary>Its conversation</summary>{conversation(story, limits, prefix=prefix)}</details>"
        "</section>"
    )
