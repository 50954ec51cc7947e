"""`ram batch TASKS --out DIR`: many tasks at once, each in its own workspace and session, on a local process pool
or a Ray cluster.

Read it in this order: `tasks.py` (the JSONL file), `workspace.py` (a clone at the base commit, the setup and test
commands, the patch, and the lock that lets a dead worker's clone be swept), `worker.py` (one task from start to
finish), `results.py` (what DIR holds), `disk.py` (a disk that refuses ram's writes stops the batch), `run.py`
(the driver: what to run, the budget, Ctrl+C, the summary), then an engine — `pool.py` with `child.py` (worker
processes on this machine) or `ray_engine.py` — and `limiter.py` (429 backoff shared by every worker).

Nothing here is imported unless `ram batch` runs; `ray` only with `--ray`.
"""
