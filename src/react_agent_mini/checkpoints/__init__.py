"""Checkpoints and rewind: what the agent changed in each turn, and going back to the state after an earlier turn.

Before a turn's first change to a file the file's content is snapshotted (`tracker.py`): Write and Edit always;
Bash commands that are not read-only when the workspace is in a git repository (`git.py` snapshots the workspace
into git's object store through a private index, never the user's index, branches or stash). The snapshots live
in a store beside the session's transcript (`store.py`). `plan.py` works out what going back to the state after
turn N means — which files, which contents, and which of them someone changed since the agent did —, `restore.py`
puts the files back, and `conversation.py` cuts the conversation there. `/rewind` in the REPL (`ui/rewind.py`) and
`ram rewind` (`cli.py`) drive them.
"""
