"""git: global options, every subcommand git has (an unknown one may be an alias that runs anything), and the
options of the read-only ones.

What git prints decides what a Read deny rule must see: `+contents` marks options that make it print the
contents of files anywhere in the repository (a patch, a blob, a grep, a pickaxe search); `shows="named"` marks
subcommands that print the contents of what their operands name, and so of the whole repository when they name
no file (`git show`, `git diff`), unless an option chooses an output without contents (`+nocontents`: `--stat`).
Log-style subcommands (`log`, `show`, `diff`, `reflog`) take no abbreviated options; the parse-options ones do.
"""

from __future__ import annotations

from ..spec import Spec
from .git_options import (
    BLAME_OPTIONS,
    BRANCH_LISTING,
    CAT_FILE_OPTIONS,
    CONFIG_OPTIONS,
    DESCRIBE_OPTIONS,
    DIFF,
    FOR_EACH_REF_OPTIONS,
    GLOBAL,
    GREP_OPTIONS,
    LOG,
    LS_FILES_OPTIONS,
    LS_TREE_OPTIONS,
    REF_FILTERS,
    REV_LIST_OPTIONS,
    REV_PARSE_OPTIONS,
    SHORTLOG_OPTIONS,
    STATUS_OPTIONS,
)


def _writers(names: str, effects: str = "") -> tuple[Spec, ...]:
    return tuple(Spec(name, read_only=False, effects=effects) for name in names.split())


_NOT_READ_ONLY = (
    *_writers(
        "checkout restore reset apply am merge rebase cherry-pick revert clean switch mv rm checkout-index read-tree",
        "contents links",
    ),
    *_writers("pull", "contents network links"),
    *_writers("fetch push clone ls-remote", "network"),
    # they print or package the contents of any file of the repository
    *_writers(
        "archive bundle format-patch diff-files diff-index diff-tree difftool range-diff fast-export", "contents"
    ),
    *_writers(
        "add bisect check-attr cherry commit commit-tree fsck gc hash-object help init "
        "mergetool notes repack replace show-branch "
        "sparse-checkout submodule symbolic-ref update-index update-ref verify-commit verify-tag worktree "
        "write-tree maintenance lfs var"
    ),
)

SPECS: tuple[Spec, ...] = (
    Spec(
        "git",
        style="posix",
        options=GLOBAL,
        aliases=True,
        prefix="subcommand",
        groups=(
            "stash",
            "remote",
            "worktree",
            "submodule",
            "notes",
            "bisect",
            "sparse-checkout",
            "reflog",
            "lfs",
            "maintenance",
        ),
        examples=("git status", "git --no-pager log -p", "git --version", "git log --oneline -5"),
        counterexamples=("git", "git -c core.pager=x log", "git -C /tmp status", "git push", "git zz"),
        subcommands=(
            *_NOT_READ_ONLY,
            Spec(
                "status",
                abbrev=True,
                options=STATUS_OPTIONS,
                operands="path*",
                examples=("git status --short", "git status -uno"),
            ),
            Spec(
                "diff",
                options=(
                    *DIFF,
                    "--cached --staged",
                    "--merge-base",
                    "--no-index",
                    "--base -1",
                    "--ours -2",
                    "--theirs -3",
                    "-0",
                ),
                operands="path*",
                shows="named",
                examples=("git diff --stat HEAD~1", "git diff HEAD@{1}", "git diff -- src/app.py"),
                counterexamples=("git diff --output=/tmp/x", "git diff --ext-diff", "git diff --out=/tmp/x"),
            ),
            Spec("show", options=LOG, operands="path*", shows="named", examples=("git show HEAD:README.md",)),
            Spec(
                "log whatchanged",
                numeric=True,
                options=LOG,
                operands="path*",
                examples=("git log --format='%H %s' -- $(ls)", "git log --oneline -5", "git log -p"),
                counterexamples=("git log --output=/tmp/x", "git log $(cat revs)", "git log --unif=1"),
            ),
            Spec(
                "shortlog",
                abbrev=True,
                numeric=True,
                options=SHORTLOG_OPTIONS,
                operands="path*",
                examples=("git shortlog -sn",),
            ),
            Spec(
                "blame annotate",
                abbrev=True,
                options=BLAME_OPTIONS,
                operands="path*",
                shows="paths",
                examples=("git blame -L 1,10 README.md",),
            ),
            Spec(
                "rev-parse",
                options=REV_PARSE_OPTIONS,
                operands="text*",
                examples=("git rev-parse --abbrev-ref HEAD", "git rev-parse --show-toplevel"),
            ),
            Spec(
                "ls-files",
                abbrev=True,
                options=LS_FILES_OPTIONS,
                operands="path*",
                examples=("git ls-files -m",),
            ),
            Spec(
                "ls-tree",
                abbrev=True,
                options=LS_TREE_OPTIONS,
                operands="text path*",
                examples=("git ls-tree -r HEAD",),
            ),
            Spec(
                "describe",
                abbrev=True,
                options=DESCRIBE_OPTIONS,
                operands="text*",
                examples=("git describe --tags",),
            ),
            Spec(
                "cat-file",
                abbrev=True,
                options=CAT_FILE_OPTIONS,
                operands="path*",
                shows="objects",
                examples=("git cat-file -p HEAD", "git cat-file -t HEAD"),
            ),
            Spec(
                "grep",
                abbrev=True,
                numeric=True,
                options=GREP_OPTIONS,
                operands="pattern path*",
                shows="named",
                examples=("git grep -n TODO",),
                counterexamples=("git grep -O foo", "git grep --open=vim foo"),
            ),
            Spec(
                "branch",
                abbrev=True,
                check="listing",
                options=(
                    *REF_FILTERS,
                    *BRANCH_LISTING,
                    "-t --track ?text +writes # sets up tracking",
                    "-u --set-upstream-to =text +writes # changes the upstream",
                    "--unset-upstream +writes",
                    "-d --delete +writes # deletes a branch",
                    "-D +writes # deletes a branch",
                    "-m --move +writes # renames a branch",
                    "-M +writes # renames a branch",
                    "-c --copy +writes # copies a branch",
                    "-C +writes # copies a branch",
                    "--create-reflog +writes",
                    "--edit-description +writes # opens an editor",
                    "-f --force +writes",
                    "--recurse-submodules +writes",
                ),
                operands="text*",
                examples=(
                    "git branch",
                    "git branch -a -vv",
                    "git branch --list 'feat*'",
                    "git branch --contains HEAD",
                    "git branch --show-current",
                ),
                counterexamples=("git branch newbranch", "git branch -D main", "git branch --delete main"),
            ),
            Spec(
                "tag",
                abbrev=True,
                check="listing",
                options=(
                    *REF_FILTERS,
                    "-n ?n",
                    "-d --delete +writes # deletes a tag",
                    "-v --verify +runs # runs gpg",
                    "-a --annotate +writes",
                    "-m --message =text +writes",
                    "-F --file =file +writes",
                    "-e --edit +writes # opens an editor",
                    "-s --sign +writes",
                    "--cleanup =text +writes",
                    "-u --local-user =text +writes",
                    "-f --force +writes",
                    "--create-reflog +writes",
                ),
                operands="text*",
                examples=("git tag", "git tag -l 'v*'", "git tag -n5"),
                counterexamples=("git tag v1.0", "git tag -d v1.0"),
            ),
            Spec(
                "config",
                abbrev=True,
                options=CONFIG_OPTIONS,
                requires=(
                    "--get",
                    "--get-all",
                    "--get-regexp",
                    "--get-urlmatch",
                    "--get-color",
                    "--get-colorbool",
                    "-l",
                    "get",
                    "list",
                ),
                operands="text*",
                examples=(
                    "git config --get user.name",
                    "git config -l",
                    "git config --list --show-origin",
                    "git config get user.email",
                ),
                counterexamples=("git config user.name x", "git config --unset user.name", "git config --edit"),
            ),
            Spec(
                "remote",
                style="posix",
                options=("-v --verbose",),
                default="(list)",
                subcommands=(
                    Spec("(list)", operands=""),
                    Spec("show", options=("-n",), operands="text*", requires=("-n",)),
                    Spec("get-url", abbrev=True, options=("--push", "--all"), operands="text"),
                ),
                examples=("git remote -v", "git remote get-url origin", "git remote show -n origin"),
                counterexamples=(
                    "git remote show origin",
                    "git remote show http://example.com/x",
                    "git remote add origin url",
                ),
            ),
            Spec(
                "reflog",
                default="show",
                style="posix",
                subcommands=(
                    Spec("show", numeric=True, options=LOG, operands="path*"),
                    Spec("exists", operands="text"),
                ),
                examples=("git reflog", "git reflog show HEAD"),
                counterexamples=("git reflog expire --all", "git reflog HEAD"),
            ),
            Spec(
                "stash",
                style="posix",
                default="push",
                subcommands=(
                    Spec("push", read_only=False, effects="contents links"),
                    *_writers("pop apply branch save", "contents links"),
                    *_writers("drop clear create store", "contents"),
                    Spec("list", options=LOG, operands=""),
                    Spec(
                        "show",
                        options=(*DIFF, "--include-untracked", "--only-untracked"),
                        operands="text?",
                        shows="named",
                    ),
                ),
                examples=("git stash list", "git stash show --stat"),
                counterexamples=("git stash", "git stash drop", "git stash -u"),
            ),
            Spec("version", options=("--build-options",), operands=""),
            Spec(
                "rev-list",
                numeric=True,
                options=REV_LIST_OPTIONS,
                operands="path*",
                examples=("git rev-list --count HEAD", "git rev-list --max-count=3 --objects HEAD"),
                counterexamples=("git rev-list --output=x HEAD", "git rev-list --show-signature HEAD"),
            ),
            Spec(
                "merge-base",
                options=("-a --all", "--octopus", "--independent", "--is-ancestor", "--fork-point"),
                operands="text*",
                examples=("git merge-base HEAD main", "git merge-base --is-ancestor HEAD main"),
            ),
            Spec(
                "show-ref",
                options=(
                    "--head",
                    "--verify",
                    "--exists",
                    "-d --dereference",
                    "-s --hash ?n",
                    "--abbrev ?n",
                    "-q --quiet",
                    "--tags",
                    "--heads",
                    "--branches",
                    "--exclude-existing ?text",
                ),
                operands="text*",
                examples=("git show-ref --heads", "git show-ref -s HEAD"),
            ),
            Spec(
                "count-objects",
                options=("-v --verbose", "-H --human-readable"),
                operands="",
                examples=("git count-objects -vH",),
            ),
            Spec(
                "check-ignore",
                options=("-q --quiet", "-v --verbose", "--stdin", "-z", "-n --non-matching", "--no-index"),
                operands="text*",
                examples=("git check-ignore -v build/x",),
            ),
            Spec(
                "name-rev",
                options=(
                    "--tags",
                    "--refs =text",
                    "--exclude =text",
                    "--all",
                    "--annotate-stdin",
                    "--stdin",
                    "--name-only",
                    "--no-undefined",
                    "--always",
                ),
                operands="text*",
                examples=("git name-rev HEAD",),
            ),
            Spec(
                "for-each-ref",
                options=FOR_EACH_REF_OPTIONS,
                operands="text*",
                examples=("git for-each-ref --count=1 refs/heads", "git for-each-ref --sort=-committerdate"),
                counterexamples=("git for-each-ref --format=%(signature)",),
            ),
        ),
    ),
)
