"""The OS sandbox Bash commands run in: bubblewrap (`bwrap`) on Linux, under the permission rules.

The permission checker decides what a command may do from its text; what a program does once started (a script
file, `python -c`, `make`) it cannot see. The sandbox is the wall underneath: whatever the checker let through —
in every permission mode, bypassPermissions included — runs where it can change only what it was given.

What a sandboxed command gets (`--sandbox workspace-write`, the default where it works):
- the whole filesystem, read-only, as it is on the host: it can read what you can, outside the workspace too,
  except the paths below;
- writable: the workspace, each `--add-dir`, and a private temp dir that is its `/tmp` (TMPDIR=/tmp) for the
  whole session (the host's `/tmp` is not visible; the private one is removed when ram exits);
- read-only even inside the workspace: `.git/config`, `.git/config.worktree`, `.git/hooks` and the directory
  `core.hooksPath` names (an empty one when it is missing), the same files of the submodules and worktrees kept in
  `.git` (`modules/*`, `worktrees/*`; `.git` itself is a mount point: it cannot be renamed or replaced),
  `.mcp.json`, `.envrc`, `.agents/settings*.json`, `.claude/settings*.json` — what would make git or a later session
  run programs. Such a file that did not exist and that a command creates is moved aside to `NAME.sandbox-blocked`
  when it ends; and every path an Edit or Write deny rule covers, looked up afresh before each command;
- hidden (an empty, unreadable stand-in): every path a Read deny rule covers, looked up afresh before each
  command (`masks`), in the workspace and elsewhere (`Read(~/.aws/**)`);
- a fresh minimal `/dev` (null, zero, full, random, urandom, tty, a private pts and shm), so `mv x /dev/null` can
  replace nothing; a fresh `/proc` of its own PID namespace (it sees and signals only its own processes); an empty
  `/run` (no D-Bus, systemd, docker or ssh-agent sockets);
- no network: a network namespace with only its own loopback (the host's 127.0.0.1 listeners are out of reach)
  unless `--sandbox-network` or the user settings allow the network;
- its own IPC namespace; as root, no capabilities (it cannot mount, remount or unmount its way out); bwrap's
  no_new_privs (setuid programs gain nothing).
`--sandbox read-only`: the same, but the workspace and `--add-dir`s are read-only too (only the private /tmp is
writable). `--sandbox off`: commands run as they would without ram's sandbox.

What it does not do:
- it does not keep a command from reading files outside the workspace that no Read deny rule covers (like Codex's
  sandbox, reading is open): `~/.ssh`, `~/.aws` and the like stay readable unless you deny them, e.g.
  `{"permissions": {"deny": ["Read(~/.ssh/**)", "Read(~/.aws/**)"]}}`, and what a command reads goes to the model
  (in acceptEdits mode, where sandboxed commands that name no path outside the workspace run unasked, a program
  the checker cannot see into — `python -c`, a script — reads outside unasked);
- it does not hide a file a hard link gives another name to, nor, during a command, a file that command itself
  creates under a denied name (it is hidden from the next command on); nor what git keeps of a denied file: once
  it was committed or staged, its contents are in `.git/objects`, which stay readable (the permission rules still
  deny the git commands that print it, but not a program that reads the objects itself);
- without the network, a command can still connect to a Unix socket it can see in the filesystem outside `/run`
  and `/tmp` (one a process of yours listens on in the workspace, `~/.gnupg/S.gpg-agent` on some systems);
- with the network allowed, it does not limit where commands connect (the host's loopback and abstract Unix
  sockets included);
- it protects only those few files inside the workspace: anything else there that you later run yourself (a
  Makefile, `package.json` scripts, a `.venv`) a command may change; a workspace that holds your shell's
  start-up files (your home directory) leaves them writable;
- it does not limit CPU, memory, disk use or time (the Bash tool's timeout does that last);
- it does not confine ram itself, its other tools (Read, Write, Edit, Glob, Grep: the permission rules govern
  them) or MCP servers;
- Linux only: elsewhere, or without bwrap and user namespaces, commands run as without it (with one warning line,
  or, when the sandbox was asked for explicitly, not at all: exit 2).

Modules: `settings` (which sandbox flags and settings files ask for; light, read at startup), `handle` (what the
session holds until the first command), `bwrap` (which binary, the probe, namespaces), `masks` (deny rules → paths),
`layout` (the mounts), `runtime` (per session and per command).
"""
