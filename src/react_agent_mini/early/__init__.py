"""The first model request of a headless run, put on the wire before the agent's heavy modules are imported.

`ram "task"` spends most of its start importing: asyncio, httpx, msgspec, the tools, the permission checker. None
of that changes what the first request says when the run uses nothing but the defaults — the system prompt (built
by the same `context/` code the session uses), the built-in tools' schemas (prebuilt data, `tools.json`, checked
against the tools by a test), the task. So `lane.send_early` builds that request with the standard library alone,
sends it over a plain socket (TLS as httpx would set it up), and lets the rest of ram import while the model reads.

The request waits in `providers/first_call.py`. When the session makes its first model call, `adopt.matches`
compares what it would send (URL, the provider's
headers, the body's bytes) with what went early: the same, and the early answer is read as if httpx had sent the
request (same time limits, same errors, same retries); different — or anything in doubt before — and the early
connection is closed before anything is read, so the call goes out as always. The early lane is only taken when
nothing that can change the first request is configured: no settings, MCP or agent files, no skills, no flags
but the task, model, provider, output and turn limits, no proxy (`lane.py` lists what it checks).
"""
