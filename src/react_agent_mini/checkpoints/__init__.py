"""Checkpoints and rewind: what the agent changed in each turn, and going back to the state after an earlier turn.

Before a turn's first change to a file the file's content is snapshotted (`tracker.py`): Write and Edit always;
Bash commands that are not read-only when the workspace is in a git repository (`git.py` snapshots the workspace
through ram's private repository, never the user's index, branches or stash; `commands.py` records the snapshot
before a command starts, so one ram was killed during is rewound too). The snapshots live in a store beside the
session's transcript (`store.py`). `plan.py` works out what going back to the state after turn N means — which
files, which contents, and which of them someone changed since the agent did —, `restore.py` puts the files back,
and `conversation.py` cuts the conversation there; `rewind.py` runs a rewind and words it, and never cuts the
conversation when the code is not all back. `/rewind` in the REPL (`ui/rewind.py`) and `ram rewind` (`cli.py`)
drive them.
"""
