"""What ram does when the model misbehaves, so that a weak or misconfigured model costs a clear line, not a crash
or a silent wrong result.

- `text_tool_calls.py` — tool calls the server sent as answer text (its tool-call parser is off): read, run as
  usual, and the user told which server flag to set;
- `empty_answer.py` — an answer with nothing in it: asked for once more, then an error;
- `cut_calls.py` — a call the output token limit cut: never run, and the model told to send it smaller;
- `doom_loop.py` — the same call again and again: asked about in the REPL, else the run stops (exit 1 headless);
- `watch.py` — the per-run state the loop holds, and the order these checks run in.

Unknown tools and arguments that do not fit a tool are the runner's to answer (`tools/call_errors.py`).
"""
