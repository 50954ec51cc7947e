"""Programs that are never read-only, listed for what else the permission check must know about them: what they
run (wrappers, shells, `eval`), what they touch (writers that work on whole trees), whether they reach the network,
and how wide an "always" rule for them is (`cargo test`, `uv run pytest`, `python -m pytest`)."""

from __future__ import annotations

from ..spec import Spec


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _many(names: str, **fields: object) -> tuple[Spec, ...]:
    """One spec per name, all alike (the names are different programs, so each is its own entry)."""
    return tuple(Spec(name, read_only=False, **fields) for name in names.split())  # type: ignore[arg-type]


_WRAPPERS = (
    "env command builtin exec nohup time sudo doas su nice ionice timeout xargs stdbuf setsid unbuffer flock chrt "
    "taskset watch strace ltrace chroot parallel ssh runuser systemd-run firejail nsenter unshare prlimit cgexec "
    "setpriv fakeroot busybox capsh sg catchsegv valgrind torsocks proxychains coproc"
)
"""Programs that run a command given in their arguments. Their options are too varied to parse, so a deny rule is
checked against every tail of their arguments (`env -u X rm f` is seen as `rm f`), and each argument with a blank
in it as a command line (`su -c 'rm f'`, `watch 'rm f'`)."""

_SUBCOMMAND_TOOLS: tuple[Spec, ...] = (
    Spec("npm", read_only=False, prefix="subcommand", groups=("run", "run-script"), runners=("exec",)),
    Spec("pnpm", read_only=False, prefix="subcommand", groups=("run",), runners=("exec", "dlx")),
    Spec("yarn", read_only=False, prefix="subcommand", groups=("run", "workspace"), runners=("dlx", "exec")),
    Spec("bun", read_only=False, prefix="subcommand", groups=("run",), runners=("x",)),
    Spec("go", read_only=False, prefix="subcommand", groups=("mod", "work", "tool")),
    Spec(
        "docker",
        read_only=False,
        prefix="subcommand",
        groups=_words(
            "compose container image volume network system buildx builder context plugin manifest trust swarm node "
            "service stack secret config"
        ),
    ),
    Spec(
        "podman",
        read_only=False,
        prefix="subcommand",
        groups=_words("compose container image volume network system pod machine"),
    ),
    Spec("kubectl", read_only=False, prefix="subcommand", groups=("config", "rollout", "auth", "certificate")),
    Spec("uv", read_only=False, prefix="subcommand", groups=_words("pip tool python cache self"), runners=("run",)),
    Spec("poetry", read_only=False, prefix="subcommand", groups=("env", "self", "cache", "source"), runners=("run",)),
    Spec(
        "gh",
        read_only=False,
        prefix="subcommand",
        effects="network",
        groups=_words(
            "pr issue repo release run workflow gist label secret variable ssh-key gpg-key auth config extension "
            "codespace project cache ruleset org attestation alias search"
        ),
    ),
    Spec("conda", read_only=False, prefix="subcommand", groups=("env",)),
    Spec("pdm hatch", read_only=False, prefix="subcommand", runners=("run",)),
    *_many("cargo pip pip3 brew helm terraform rustup dotnet deno", prefix="subcommand"),
)

SPECS: tuple[Spec, ...] = (
    *_many(_WRAPPERS.replace("env ", "").replace("xargs ", "").replace("parallel ", ""), runs="argv", prefix="exact"),
    *_many("xargs parallel", runs="argv", prefix="exact", effects="names"),  # the files come from stdin
    *_many("trap script", runs="script", prefix="exact"),
    # they make a name run another program from then on (`hash -p /bin/rm ls; ls`, `alias ls=/bin/rm`)
    *_many("hash alias enable", effects="hidden", prefix="exact"),
    *_many("sh bash zsh dash ksh", runs="shell", prefix="interpreter"),
    Spec("fish", read_only=False, runs="shell", prefix="interpreter"),
    Spec("eval", read_only=False, runs="eval", prefix="exact"),
    Spec("source .", read_only=False, runs="source", prefix="exact"),
    *_many("python python3 python2 pypy pypy3 node nodejs ruby perl php lua", prefix="interpreter"),
    *_many("npx bunx pnpx uvx pipx", prefix="runner"),
    *_SUBCOMMAND_TOOLS,
    # writers that work on whole trees: a Read or Edit deny rule covering anything below what they name applies
    *_many("tar rsync 7z cpio patch unzip", effects="tree links"),
    *_many("zip", effects="tree"),
    *_many("scp", effects="tree network"),
    Spec(
        "cp",
        read_only=False,
        inert=True,
        options=(  # copying a tree copies its links as links (`-s` makes them)
            "-r -R --recursive +recursive +links",
            "-a --archive +recursive +links",
            "-s --symbolic-link +links",
            "-d -P --no-dereference +links",
        ),
    ),
    # writers that run nothing their words name (and, with -r, work on whole trees)
    Spec("rm", read_only=False, inert=True, options=("-r -R --recursive +recursive",)),
    Spec("chmod chown chgrp", read_only=False, inert=True, options=("-R --recursive +recursive",)),
    Spec("mv", read_only=False, inert=True, effects="recursive links"),
    Spec("ln", read_only=False, inert=True, effects="links"),
    *_many("rmdir mkdir touch truncate install mktemp", inert=True),
    # the network
    *_many("curl wget nc ncat netcat telnet sftp ftp ping dig nslookup host whois", effects="network"),
)
