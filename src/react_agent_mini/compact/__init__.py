"""Compaction: what each model request carries of the history, and the LLM summary that rewrites it when it must.

"The seed" is the article this project was created from (`../shared/seed/compact-2.0-article.txt`, beside the
repository): it describes compact 2.0, the v4 pipeline of the upstream TypeScript react-agent-mini — ① cut any
oversized tool result, ② over a threshold clear old regenerable results, ③ still over it, drop the oldest turns —
each stage a pure function over an outbound copy of the history, the second injected through the loop's deps.
`COMPACT_PROFILE=seed` is that pipeline exactly (its constants, placeholder, trace lines, and characters counted
as JavaScript counts them); the code calls it "the v4 pipeline", and the design the article replaces "v3". The
default profile, `v2` (this project's, newer than both), shapes each result for its tool, sizes it to the model's
window, and makes room rarely and deeply so the provider's prompt cache keeps serving the prefix.

- `pipeline.py` runs the stages, each the profile's own; `options.py` holds their knobs, the two profiles and the
  environment's say.
- The v4 pipeline: `budget.py` ①, `micro.py` ②, `retain.py` ③, `lowwater.py` (its cache-friendly option),
  `estimate.py` (its size measure).
- Profile v2, built on the v4 pipeline's cuts and placeholders: `shape.py` ① (per-tool shaping), `economy.py`
  ② and ③ (demote, clear, drop).
- `tokens.py` (token estimates, context windows), `meter.py` (how full the next request is), `common.py` (what
  the stages share); they compute once per object through `../memo.py`, which the providers use too.
- `hook_context.py`: how much of a hook's text may enter the history, and the hook context messages v2's stages
  shrink as they shrink tool results.
- The summary: `autocompact.py`, driven by `controller.py` (the session's side); `filling.py` says what fills a
  request the model refused and nothing could shrink.
"""
