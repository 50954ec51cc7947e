"""`ram view`: a session, or a `ram batch` out folder, as one self-contained HTML file to open offline or send.

A session's page holds its conversation (tool calls folded, Edit and Write as diffs, Bash output), a timeline of
every model call — the context it carried by part, as its call record measured it (call_record.py), with the
summaries, clears (microcompact) and dropped turns (retain) marked where the transcript says they happened, the
prefix-cache share and the cost — and the same totals `ram usage` gives. A batch's page has a row per task
linking to a page per task, written beside it.

Modules: `reading.py` (a transcript into the story to show), `chart.py` (the SVG timeline), `conversation.py`
(messages as HTML), `session_page.py` and `batch_page.py` (the pages), `html.py` (escaping, the page shell and its
Content-Security-Policy), `cli.py`. No JavaScript, no request: the policy forbids loading anything at all, and
every text from a transcript is escaped.
"""
