"""Tests for the Bash read-only analysis: a hostile corpus that must never be judged read-only, a corpus that must,
the structure of the analysis, and the "always allow" rule prefixes."""

from __future__ import annotations

import subprocess
import sys

import msgspec
import pytest

from react_agent_mini.permissions.bash.analysis import (
    MAX_COMMAND_CHARS,
    ShellAnalysis,
    SimpleCommand,
    analyze,
    is_read_only_command,
)
from react_agent_mini.permissions.bash.prefix import rule_prefix

# (command, a fragment the reason must contain, case-insensitively)
HOSTILE: list[tuple[str, str]] = [
    # chaining, pipes, background
    ("git status; rm -rf x", "rm"),
    ("ls && rm -rf /", "rm"),
    ("ls || rm x", "rm"),
    ("ls | xargs rm", "xargs"),
    ("ls & rm x", "rm"),
    ("ls\nrm x", "rm"),
    ("ls |& sh", "sh"),
    ("! rm x", "rm"),
    # substitutions
    ("ls $(touch x)", "touch"),
    ("ls `touch x`", "touch"),
    ("cat <(rm x)", "rm"),
    ("tee >(rm x)", "tee"),
    ("echo $(echo $(rm x))", "rm"),
    ('echo "$(rm x)"', "rm"),
    ("ls <<< $(rm x)", "rm"),
    ("for f in $(rm x); do ls; done", "rm"),
    # redirections
    ("echo hi > f", "writes to f"),
    ("echo hi >> f", "writes to f"),
    ("cat a >| b", "writes to b"),
    ("ls &> out", "writes to out"),
    ("ls &>> out", "writes to out"),
    ("ls 2> err.log", "writes to err.log"),
    ("ls >& out", "writes to out"),
    ("{ ls; } > f", "writes to f"),
    ("(ls) >> f", "writes to f"),
    ("ls > /dev/null2", "/dev/null2"),
    ("cat < /dev/tcp/example.com/80", "network"),
    # find / sed
    ("find . -delete", "-delete"),
    ("find . -exec rm {} \\;", "-exec"),
    ("find . -execdir sh -c x \\;", "-execdir"),
    ("find . -ok rm {} \\;", "-ok"),
    ("find . -fprint out", "-fprint"),
    ('find "$dir" -name x', "could expand"),
    ("sed -i s/a/b/ f", "sed -i edits"),
    ("sed -ni p f", "sed -i edits"),
    ("sed --in-place=.bak p f", "sed -i edits"),
    ("sed --in=bak p f", "sed -i edits"),
    ("sed 's/a/b/w out' f", "s///w writes a file"),
    ("sed 's/a/b/gw out' f", "s///w writes a file"),
    ("sed -n '/x/p;w out' f", "sed w writes a file"),
    ("sed -e p -e 'w out' f", "sed w writes a file"),
    ("sed 'W out' f", "sed W writes a file"),
    ("sed 's/x/y/e' f", "s///e runs a command"),
    ("sed '1e id' f", "sed e runs a command"),
    ("sed -f script.sed f", "sed -f reads"),
    ("sed -n p *", "could expand to an option"),
    ("sed $'-i' p f", "could expand to an option"),
    ('sed -n "$script" f', "not a literal"),
    # git
    ("git -c core.pager='rm x' log", "-c"),
    ("git -C /tmp/other status", "-C"),
    ("git --git-dir=/tmp/x/.git log", "--git-dir"),
    ("git --exec-path=/tmp log", "--exec-path"),
    ("git -p log", "-p"),
    ("git branch -D main", "-D"),
    ("git branch --delete main", "--delete"),
    ("git branch -m old new", "-m"),
    ("git branch newbranch", "creates a branch"),
    ("git tag v1.0", "creates a tag"),
    ("git tag -d v1.0", "-d"),
    ("git config user.name x", "config"),
    ("git config --unset user.name", "--unset"),
    ("git config --edit", "--edit"),
    ("git remote add origin url", "add"),
    ("git remote set-url origin url", "set-url"),
    ("git remote show origin", "without -n"),  # it connects to the remote (it was SAFE before issue 15)
    ("git reflog expire --all", "expire"),
    ("git stash", "stash"),
    ("git stash drop", "drop"),
    ("git log --output=/tmp/x", "--output"),
    ("git diff --out=/tmp/x", "--output"),
    ("git diff --ext-diff", "--ext-diff"),
    ("git grep -O foo", "-O"),
    ("git grep --open-files-in-pager=vim foo", "--open-files-in-pager"),
    ("git log $(cat revs)", "could expand to an option"),
    ("git push", "push"),
    ("git commit -m x", "commit"),
    ("git checkout .", "checkout"),
    ("git", "subcommand"),
    # environment and command tricks
    ("PAGER='rm x' git log", "PAGER"),
    ("GIT_EXTERNAL_DIFF=x git diff", "GIT_EXTERNAL_DIFF"),
    ("LD_PRELOAD=x.so ls", "LD_PRELOAD"),
    ("PATH=/tmp/evil; ls", "PATH"),
    ("env rm x", "env runs"),
    ("env -i bash", "env runs"),
    ("env -u X rm x", "env runs"),
    ('eval "rm x"', "eval"),
    ("exec rm x", "exec"),
    ("source evil.sh", "source"),
    (". evil.sh", ". is not a known read-only command"),
    ("sudo ls", "sudo"),
    ("command rm x", "command"),
    ("builtin echo x", "builtin"),
    ("nohup ls", "nohup"),
    ("timeout 5 ls", "timeout"),
    ("nice ls", "nice"),
    ("bash -c 'rm x'", "bash"),
    ("sh -c ls", "sh"),
    ("xargs", "xargs"),
    ("$CMD", "not a literal"),
    ('"$(echo rm)" x', "not a literal"),
    ('"r""m" x', "rm"),
    ("/bin/rm x", "path"),
    ("./ls", "path"),
    ("let x=1", "let"),
    ("((x=1))", "assigns x"),
    ("time ls", "time"),
    ("coproc ls", "coproc"),
    ("export PATH=/tmp/evil", "export"),
    ("declare -p", "declare"),
    ("local x=1", "local"),
    ("readonly x", "readonly"),
    ("unset PATH", "unset"),
    # words tree-sitter attaches to a redirection are the command's arguments
    ("git branch >/dev/null newbranch", "creates a branch"),
    ("git branch 2>&- newbranch", "creates a branch"),
    ("git tag <<< x v1", "creates a tag"),
    ("git branch <<EOF newbranch\nx\nEOF", "creates a branch"),
    # functions and compound commands
    ("ls; f() { rm x; }; f", "function"),
    ("function ls { rm x; }", "function"),
    ("if true; then rm x; fi", "rm"),
    ("if rm x; then ls; fi", "rm"),
    ("while true; do rm x; done", "rm"),
    ("until false; do rm x; done", "rm"),
    ("for f in *; do rm $f; done", "rm"),
    ("(cd / && rm -rf x)", "rm"),
    ("{ ls; rm x; }", "rm"),
    ("case x in x) rm y;; esac", "rm"),
    ("case $x in a) ls;; *) rm y;; esac", "rm"),
    ("case $(rm y) in a) ls;; esac", "rm"),
    ("select f in *; do rm $f; done", "rm"),
    ("f() { ls; } > out", "function"),
    ("(( 1 )) > f", "writes to f"),
    ("echo $((1 + 2)) > f", "writes to f"),
    # tests
    ("[ -f x ] && rm y", "rm"),
    ("[[ -v x ]]", "-v"),
    ("[[ -R x ]]", "-R"),
    ("! [[ -v x ]]", "-v"),
    ("[[ $x -eq 1 ]]", "arithmetic"),
    ("[[ n -gt 0 ]]", "arithmetic"),
    ("[[ -f x ]] > out", "writes to out"),
    ("[[ -n $(rm x) ]]", "rm"),
    ("[[ x == $(rm x) ]]", "rm"),
    ("[[ x =~ $(rm x) ]]", "rm"),
    # here-documents
    ("cat <<'EOF' > out\nx\nEOF", "writes to out"),
    ("cat <<EOF | rm x\nx\nEOF", "rm"),
    ("cat <<EOF && rm x\nx\nEOF", "rm"),
    # other commands
    ("sort -o out in", "-o"),
    ("sort -uo out in", "-o"),
    ("sort --output=out in", "--output"),
    ("sort --compress-program=sh in", "--compress-program"),
    ("sort *", "could expand to an option"),
    ("uniq in out", "second operand"),
    ("uniq src/*.txt", "several words"),
    ("tree -o out", "-o"),
    ("tree -R", "-R"),
    ("file -C -m magic", "-C"),
    ("rg --pre cat pattern", "--pre"),
    ("rg --hostname-bin=sh x", "--hostname-bin"),
    ("printf -v PATH /tmp/evil", "-v"),
    ("date -s '2020-01-01'", "clock"),
    ("date 010112002020", "clock"),
    ("test -v 'a[$(rm x)]'", "-v"),
    ("[ -v x ]", "-v"),
    ('test "$a" "$b"', "could expand"),
    ("tee out", "tee"),
    ("cp a b", "cp"),
    ("mv a b", "mv"),
    ("rm -rf x", "rm"),
    ("curl -o x https://example.com", "curl"),
    ("wget https://example.com", "wget"),
    ("python -c 'print(1)'", "python"),
    ("awk '{print}' f", "awk"),
    ("less f", "less"),
    ("npm test", "npm"),
]

UNPARSEABLE: list[str] = [
    'ls "unterminated',
    "ls )",
    "ls &&",
    "ls;;",
    "",
    "   ",
    "# just a comment",
    "ls 1<>f",  # tree-sitter-bash has no `<>`
    "{fd}>f ls",
    'echo $"x"',
    "echo `echo \\`rm x\\``",
    'echo "`echo \\"hi\\"`"',
    "echo ${x:-$(rm y)}",
    "echo ${a[$(rm y)]}",
    "echo ${x:=/tmp/evil}",
    "echo ${!name}",
    "echo ${x@P}",
    "cat <<EOF\n$(rm x)\nEOF",
    "cat <<EOF\n`rm x`\nEOF",
    "for PATH in /tmp/evil; do ls; done",
    "for http_proxy in evil:8080; do ls; done",
    "select PATH in /tmp/evil; do ls; done",
    # where tree-sitter and bash disagree
    "ls \\ -la",  # tree-sitter skips `\ `; bash passes the word ` -la`
    "ls\rrm x",
    "echo a\\\nb",  # one word to bash
    'echo "$\\\n(rm x)"',  # a command substitution to bash
    "[ -f x && rm y ]",  # `[ -f x` && `rm y ]` to bash
    "[ a > b ]",  # writes to b
    "[ ( -f x ) ]",
    "ls;;",
    "cat a.txt | grep foo | wc -l\ngrep x f && 2>&1",  # tree-sitter reads `wc -l<newline>grep x f` as one command
    '[ "$a" = "$b"\n ]',
    "find . -name x\\\n 2>&-",  # tree-sitter reads the descriptor as an argument
    "sed -n p f -i<<EOF\nx\nEOF",  # tree-sitter reads `-i<<` as the `<<` token, hiding `-i`
    "ls >#x",
    "sed <& -ni p f",  # to bash: `<&-` and the argument `ni`
    # arithmetic on anything but numbers, arrays
    "echo $((x + 1))",
    "echo $((a[$(rm y)]))",
    "echo $[x]",
    "((x++))",
    "for ((i = 0; i < 3; i++)); do ls; done",
    "a=(1 $(rm x))",
    "a[$(rm x)]=1",
    # here-documents whose end bash would see elsewhere
    "cat <<EOF\nEO\\\nF\nrm x\nEOF",  # bash joins the lines into the terminator
    "cat <<EOF\n  EOF\nrm x\nEOF",  # tree-sitter accepts the indented terminator, bash does not
    "cat <<EOF \\\nrm x\nbody\nEOF",  # the body starts after `rm x` for bash
    "echo $(cat <<EOF\nx\nEOF)\nrm x\nEOF\n)",
    "cat <<A && cat <<B\na\nA\nb\nB",
    "cat <<EOF\n$\\\n(rm x)\nEOF",
]

SAFE: list[str] = [
    "ls -la",
    "git status",
    "git diff --stat HEAD~1",
    "git log --oneline -5 | head -3",
    "cat a.txt | grep foo | wc -l",
    "find . -name '*.py' -type f",
    "rg TODO src",
    "echo hi > /dev/null",
    "grep x f 2>&1",
    "cd src && ls",
    "ls 2>/dev/null",
    "head -n 5 f; tail -n 5 f",
    "wc -l $(ls)",
    "sed -n 1,5p f",
    # more of the same kind
    "ls &> /dev/null",
    "ls >&2",
    "ls 2>&-",
    'ls > "/dev/null"',
    "echo hi >/dev/stderr",
    "ls < input.txt",
    "cat <<EOF\nhello $USER\nEOF",
    "grep -rn 'def ' src | sort | uniq -c | sort -rn | head",
    "ls # ; rm x",
    "echo 'a; rm x'",
    'echo "$(ls)"',
    "diff <(ls a) <(ls b)",
    "ls ~/src",
    "cat *",
    "echo $'\\x41'",
    "for f in *.py; do wc -l $f; done",
    "if [ -f x ]; then cat x; else echo none; fi",
    '[ -f "$f" ] && cat "$f"',
    '[ "$a" = "$b" ]',
    "test -d src",
    "true && false || echo x",
    "(cd src; ls)",
    "{ ls; pwd; }",
    "find src -name '*.py' -newer setup.py -print0",
    "rg --pre-glob '*.pdf' x",
    "sort -k2 -t, -n data.csv",
    "uniq -c data.txt",
    "tree -L 2",
    "file -b x",
    "printf '%s\\n' a b",
    "date +%Y-%m-%d",
    "date -d '-3 days' +%s",
    "env",
    "env -0",
    "printenv HOME",
    "jq '.name' package.json",
    "stat -c %s f",
    "du -sh .",
    "realpath ../x",
    # sed scripts
    "sed 's/a/b/g' f",
    "sed -n '/error/p' log",
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "sed 'y/abc/xyz/' f",
    "sed '1!G;h;$!d' f",
    "sed -n '$p' f",
    "sed 's|/usr|/opt|g' f",
    "sed -n '/a/,/b/{p}' f",
    "sed -E 's/(a|b)+/x/2g' f",
    "sed 10q f",
    "sed '$a appended text; w not-a-command' f",
    "sed -e 's/a/b/' -e 's/c/d/' f",
    "sed -s -n -e p -- -i",
    # git
    "git --no-pager log -p",
    "git log --format='%H %s' -- $(ls)",
    "git show HEAD:README.md",
    "git blame -L 1,10 README.md",
    "git branch",
    "git branch -a -vv",
    "git branch --list 'feat*'",
    "git branch --contains HEAD",
    "git branch --show-current",
    "git tag",
    "git tag -l 'v*'",
    "git tag -n5",
    "git rev-parse --abbrev-ref HEAD",
    "git ls-files -m",
    "git ls-tree -r HEAD",
    "git grep -n TODO",
    "git describe --tags",
    "git shortlog -sn",
    "git remote -v",
    "git remote show -n origin",  # without -n it asks the remote: network (a HOSTILE case now)
    "git remote get-url origin",
    "git config --get user.name",
    "git config -l",
    "git config --list --show-origin",
    "git config get user.email",
    "git cat-file -p HEAD",
    "git reflog",
    "git reflog show HEAD",
    "git stash list",
    "git stash show -p",
    "git diff HEAD@{1}",
    "git --version",
    # what a real parser makes analysable
    "echo $((1 + 2))",
    "echo $(( $# + 1 )) $[2*3]",
    "(( 1 < 2 )) && ls",
    "[[ -f x ]] && cat x",
    "[[ $x == *.py || -d $x ]]",
    '[[ -n "$(git status --porcelain)" ]] && git diff',
    "[[ $# -gt 0 ]]",
    "[[ $a =~ ^v[0-9]+$ ]]",
    "[[ ! -e x ]]",
    "case $x in a|b) ls;; *.py) cat $x;; *) pwd;; esac",
    "select x in a b; do echo $x; done",
    "while false; do ls; done",
    "cat <<'EOF'\nhello\nEOF",
    "cat <<'EOF' | grep x\nhello $(rm x)\nEOF",
    'cat <<-"EOF"\n\tline `rm x`\n\tEOF',
    "grep x <<\\EOF\n${x:=1}\nEOF",
    'echo "$(cat <<EOF\nx\nEOF\n)"',
    "ls -la \\\n  src",
    "echo 'héllo wörld' | grep ö > /dev/null",
]


@pytest.mark.parametrize(("command", "fragment"), HOSTILE)
def test_hostile_commands_are_not_read_only(command: str, fragment: str) -> None:
    analysis = analyze(command)
    assert not analysis.read_only
    assert analysis.reason, "a refusal must say why"
    assert "\n" not in analysis.reason
    assert fragment.lower() in analysis.reason.lower()


@pytest.mark.parametrize("command", UNPARSEABLE)
def test_unanalysable_commands_are_not_parsed(command: str) -> None:
    analysis = analyze(command)
    assert not analysis.parsed
    assert not analysis.read_only
    assert analysis.reason


@pytest.mark.parametrize("command", SAFE)
def test_safe_commands_are_read_only(command: str) -> None:
    analysis = analyze(command)
    assert analysis.parsed, analysis.reason
    assert analysis.read_only, analysis.reason
    assert not analysis.writes
    assert analysis.reason == ""
    assert analysis.commands


@pytest.mark.parametrize("command", [c for c, _ in HOSTILE] + SAFE)
def test_is_read_only_command_agrees_with_analyze(command: str) -> None:
    analysis = analyze(command)
    if not analysis.parsed:
        return
    every = all(is_read_only_command(c) for c in analysis.commands)
    # Compound-level problems (a `{ } > f` redirect, a function definition) are not any simple command's.
    if analysis.read_only:
        assert every
    elif every:
        assert analysis.writes or "function" in analysis.reason


def test_redirect_target_substitution_writes_and_is_analysed() -> None:
    analysis = analyze("ls > $(echo out)")
    assert analysis.parsed
    assert analysis.writes
    assert not analysis.read_only
    assert "expansion" in analysis.reason
    assert [c.argv for c in analysis.commands] == [("ls",), ("echo", "out")]

    nested = analyze("ls > $(rm x)")
    assert nested.writes and not nested.read_only
    assert ("rm", "x") in [c.argv for c in nested.commands]

    quoted = analyze('ls 2> "$(pwd)/log"')
    assert quoted.writes and not quoted.read_only


def test_writes_flag_only_for_file_writes() -> None:
    assert analyze("echo hi > f").writes
    assert not analyze("rm x").writes
    assert not analyze("ls 2>&1 >/dev/null").writes
    assert analyze("ls 2>&1 > f").writes


def test_commands_are_listed_in_source_order_including_nested() -> None:
    analysis = analyze("echo $(echo $(rm x)) | grep `id -u` && wc -l <(ls)")
    assert [c.argv for c in analysis.commands] == [
        ("echo", "$(echo $(rm x))"),
        ("echo", "$(rm x)"),
        ("rm", "x"),
        ("grep", "`id -u`"),
        ("id", "-u"),
        ("wc", "-l", "<(ls)"),
        ("ls",),
    ]
    assert [c.text for c in analysis.commands][:3] == ["echo $(echo $(rm x))", "echo $(rm x)", "rm x"]


def test_commands_inside_compound_commands_and_functions_are_listed() -> None:
    analysis = analyze("if true; then ls; fi; for f in a; do cat $f; done; g() { pwd; }")
    assert [c.argv[0] for c in analysis.commands] == ["true", "ls", "cat", "pwd"]
    assert not analysis.read_only  # the function definition


def test_argv_has_quotes_removed_and_assignments_split_off() -> None:
    analysis = analyze("A=1 B='x y' grep -e 'a'\\''b' \"c d\" e\\ f")
    (command,) = analysis.commands
    assert command.assignments == ("A=1", "B=x y")
    assert command.argv == ("grep", "-e", "a'b", "c d", "e f")
    assert command.text == "A=1 B='x y' grep -e 'a'\\''b' \"c d\" e\\ f"
    assert "sets A, B" in analysis.reason


def test_bare_assignment_is_not_read_only() -> None:
    analysis = analyze("PATH=/tmp/evil; git status")
    assert not analysis.read_only
    assert analysis.commands[0].argv == ()
    assert analysis.commands[0].assignments == ("PATH=/tmp/evil",)
    assert not is_read_only_command(analysis.commands[0])
    assert is_read_only_command(analysis.commands[1])


def test_refusals_keep_the_commands_they_saw_but_are_unparsed() -> None:
    analysis = analyze("git diff ${x:-$(rm -rf ~)}")
    assert not analysis.parsed
    assert "parameter expansion" in analysis.reason
    assert analysis.commands[0].argv[0] == "git"
    assert not is_read_only_command(analysis.commands[0])


def test_too_long_and_too_deep_commands_are_refused_without_raising() -> None:
    long = analyze("echo " + "x" * MAX_COMMAND_CHARS)
    assert not long.parsed and "longer" in long.reason
    deep = analyze("echo " + "$(echo " * 400 + "x" + ")" * 400)
    assert not deep.parsed and not deep.read_only


def test_is_read_only_command_judges_the_text() -> None:
    assert is_read_only_command(SimpleCommand(argv=("git", "status"), text="git status"))
    assert not is_read_only_command(SimpleCommand(argv=("git", "push"), text="git push"))
    # argv that disagrees with what would run
    assert not is_read_only_command(SimpleCommand(argv=("ls",), text="rm -rf x"))
    # more than one command in the text
    assert not is_read_only_command(SimpleCommand(argv=("ls",), text="ls; rm x"))
    assert not is_read_only_command(SimpleCommand(argv=("ls",), text="ls | rm x"))
    assert not is_read_only_command(SimpleCommand(argv=("ls",), text="! ls"))
    assert not is_read_only_command(SimpleCommand(argv=("ls",), text="(ls)"))
    assert not is_read_only_command(SimpleCommand(argv=("echo", "hi"), text="echo hi > f"))
    assert not is_read_only_command(SimpleCommand(argv=(), text=""))
    # the text of a command with a here-document has no body
    (cat,) = analyze("cat <<EOF\nhi\nEOF").commands
    assert cat.text == "cat <<EOF"
    assert is_read_only_command(cat)


def test_results_are_frozen_msgspec_structs() -> None:
    analysis = analyze("ls | wc -l")
    decoded = msgspec.json.decode(msgspec.json.encode(analysis), type=ShellAnalysis)
    assert decoded == analysis
    with pytest.raises(AttributeError):
        analysis.read_only = False  # type: ignore[misc]


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git diff --stat HEAD", "git diff"),
        ("npm run test -- -x", "npm run test"),
        ("npm test", "npm test"),
        ("pytest -q tests", "pytest"),
        ("make build", "make"),
        ("ls -la", "ls"),
        ("cargo test --all", "cargo test"),
        ("go mod tidy", "go mod tidy"),
        ("gh pr list --json title", "gh pr list"),
        ("docker compose up -d", "docker compose up"),
        ("kubectl get pods", "kubectl get"),
        ("git stash list", "git stash list"),
        ("uv run pytest -q", "uv run pytest"),
        ("poetry run python -m pytest -x", "poetry run python -m pytest"),
        ("npx eslint .", "npx eslint"),
        ("python -m pytest -q", "python -m pytest"),
        ("python3 -m pip install x", "python3 -m pip install"),
        ("python script.py --flag", "python script.py"),
        ("./run_tests.sh -v", "./run_tests.sh"),
        ("FOO=1 npm test", "npm test"),
        # no prefix is safe: the exact command
        ("python -c 'print(1)'", "python -c 'print(1)'"),
        ("bash -c 'rm x'", "bash -c 'rm x'"),
        ("sudo rm -rf x", "sudo rm -rf x"),
        ("env FOO=1 make", "env FOO=1 make"),
        ("xargs rm", "xargs rm"),
        ("git -C /tmp status", "git -C /tmp status"),
        ("uv run --with x pytest", "uv run --with x pytest"),
        ('"$CMD" x', '"$CMD" x'),
        ("A=1", "A=1"),
    ],
)
def test_rule_prefix(command: str, prefix: str) -> None:
    analysis = analyze(command)
    assert rule_prefix(analysis.commands[0]) == prefix


def test_rule_prefix_quotes_words_that_need_it() -> None:
    assert rule_prefix(SimpleCommand(argv=("npm", "run", "my script"), text="npm run 'my script'")) == (
        "npm run 'my script'"
    )


def test_input_the_parser_skips_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from react_agent_mini.permissions.bash import syntax

    real = syntax._parse

    def first_line_only(data: bytes) -> object:
        head, newline, rest = data.partition(b"\n")
        return real(head + b" " * (len(newline) + len(rest)))

    monkeypatch.setattr(syntax, "_parse", first_line_only)
    analysis = analyze("ls\nrm -rf x")
    assert not analysis.parsed
    assert not analysis.read_only
    assert "skipped" in analysis.reason


def test_text_tree_sitter_skips_is_refused() -> None:
    # tree-sitter-bash treats `\ ` as blank space; to bash it is an escaped space inside a word.
    analysis = analyze("ls \\ -la")
    assert not analysis.parsed and "skipped" in analysis.reason


def test_words_after_a_redirection_are_arguments() -> None:
    (ls,) = analyze("ls > /dev/null -la 2>&- src").commands
    assert ls.argv == ("ls", "-la", "src")
    assert ls.text == "ls > /dev/null -la 2>&- src"
    (cat,) = analyze("cat <<EOF -n\nx\nEOF").commands
    assert cat.argv == ("cat", "-n")
    assert is_read_only_command(cat)


def test_redirections_tree_sitter_hangs_on_a_list_belong_to_its_last_command() -> None:
    analysis = analyze("ls && echo x | grep x y > /dev/null")
    assert [c.text for c in analysis.commands] == ["ls", "echo x", "grep x y > /dev/null"]
    assert analysis.read_only
    writes = analyze("ls | grep x > out")
    assert writes.writes and "`grep x > out`: writes to out" in writes.reason


def test_tests_and_substitutions_of_a_file_are_commands() -> None:
    analysis = analyze('[[ -f x && $(wc -l < x) ]] && echo "$(< x)"')
    assert analysis.read_only, analysis.reason
    assert [c.argv for c in analysis.commands] == [
        ("[[", "-f", "x", "&&", "$(wc -l < x)", "]]"),
        ("wc", "-l"),
        ("echo", "$(< x)"),
        (),
    ]
    assert all(is_read_only_command(c) for c in analysis.commands)


def test_here_documents() -> None:
    analysis = analyze("cat <<'EOF' | grep x\n$(rm x)\nEOF\nwc -l <<EOF2\nhi $USER\nEOF2")
    assert analysis.read_only, analysis.reason
    assert [c.text for c in analysis.commands] == ["cat <<'EOF'", "grep x", "wc -l <<EOF2"]
    assert all(is_read_only_command(c) for c in analysis.commands)
    # an unquoted delimiter expands the body
    refused = analyze("cat <<EOF\n$(rm x)\nEOF")
    assert not refused.parsed and "substitutions" in refused.reason
    # a text with a body is judged with it
    assert not is_read_only_command(SimpleCommand(argv=("cat",), text="cat <<EOF\nrm x"))
    assert not is_read_only_command(SimpleCommand(argv=("cat",), text="cat <<EOF\nx\nEOF\nrm x"))


def test_non_ascii_text_keeps_its_offsets() -> None:
    analysis = analyze("echo 'héllo' | grep ö > /dev/null; cat ünï.txt")
    assert analysis.read_only
    assert [c.text for c in analysis.commands] == ["echo 'héllo'", "grep ö > /dev/null", "cat ünï.txt"]
    assert [c.argv for c in analysis.commands] == [("echo", "héllo"), ("grep", "ö"), ("cat", "ünï.txt")]


def test_the_parser_is_imported_on_first_use() -> None:
    code = (
        "import sys\n"
        "from react_agent_mini.permissions.bash import analysis\n"
        "assert 'tree_sitter' not in sys.modules\n"
        "assert analysis.analyze('ls | wc -l').read_only\n"
        "assert 'tree_sitter' in sys.modules and 'bashlex' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_parser_means_asking(monkeypatch: pytest.MonkeyPatch) -> None:
    from react_agent_mini.permissions.bash import tree

    monkeypatch.setattr(tree, "_parser", None)
    monkeypatch.setitem(sys.modules, "tree_sitter_bash", None)
    analysis = analyze("ls")
    assert not analysis.parsed and not analysis.read_only
    assert "unavailable" in analysis.reason
    assert not is_read_only_command(SimpleCommand(argv=("ls",), text="ls"))
