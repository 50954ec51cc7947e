"""Programs that search: grep, ripgrep, find, sed (printing), jq."""

from __future__ import annotations

from ..spec import Spec

_GREP = (
    "--help", "-V --version", "-E --extended-regexp", "-F --fixed-strings", "-G --basic-regexp", "-P --perl-regexp",
    "-e --regexp =text +pattern", "-f --file =file +pattern", "-i -y --ignore-case", "--no-ignore-case",
    "-v --invert-match", "-w --word-regexp", "-x --line-regexp", "-c --count", "--color --colour ?text",
    "-L --files-without-match", "-l --files-with-matches", "-m --max-count =n", "-o --only-matching",
    "-q --quiet --silent", "-s --no-messages", "-b --byte-offset", "-H --with-filename", "-h --no-filename",
    "--label =text", "-n --line-number", "-T --initial-tab", "-Z --null", "-A --after-context =n",
    "-B --before-context =n", "-C --context =n", "--group-separator =text", "--no-group-separator", "-a --text",
    "--binary-files =binary|text|without-match", "-D --devices =read|skip",
    "-d --directories =read|skip|recurse+recursive", "--exclude =text", "--exclude-from =file",
    "--exclude-dir =text", "-I", "--include =text", "-r --recursive +recursive",
    "-R --dereference-recursive +recursive +follows", "--line-buffered", "-U --binary", "-z --null-data",
)  # fmt: skip

_RG = (
    "-h --help", "-V --version", "-e --regexp =text +pattern", "-f --file =file +pattern", "-A --after-context =n",
    "-B --before-context =n", "-C --context =n", "--binary", "--no-binary", "--block-buffered", "--line-buffered",
    "-b --byte-offset", "-s --case-sensitive", "--color =text", "--colors =text", "--column", "--no-column",
    "--context-separator =text", "--no-context-separator", "-c --count", "--count-matches", "--crlf", "--no-crlf",
    "--debug", "--trace", "--dfa-size-limit =text", "-E --encoding =text", "--no-encoding", "--engine =text",
    "--field-context-separator =text", "--field-match-separator =text", "--files +pattern",
    "-l --files-with-matches", "--files-without-match", "-F --fixed-strings", "--no-fixed-strings",
    "-L --follow +follows", "--no-follow", "--generate =text +pattern", "-g --glob =text", "--glob-case-insensitive",
    "--no-glob-case-insensitive", "--heading", "--no-heading", "-. --hidden", "--no-hidden",
    "--iglob =text", "-i --ignore-case", "--ignore-file =file", "--ignore-file-case-insensitive",
    "--no-ignore-file-case-insensitive", "--include-zero", "--no-include-zero", "-v --invert-match",
    "--no-invert-match", "--json", "--no-json", "-M --max-columns =n", "--max-columns-preview",
    "--no-max-columns-preview", "-m --max-count =n", "-d --max-depth --maxdepth =n", "--max-filesize =text",
    "--mmap", "--no-mmap", "-U --multiline", "--no-multiline", "--multiline-dotall", "--no-multiline-dotall",
    "--no-config", "--no-ignore", "--ignore", "--no-ignore-dot", "--ignore-dot", "--no-ignore-exclude",
    "--ignore-exclude", "--no-ignore-files", "--ignore-files", "--no-ignore-global", "--ignore-global",
    "--no-ignore-messages", "--ignore-messages", "--no-ignore-parent", "--ignore-parent", "--no-ignore-vcs",
    "--ignore-vcs", "--no-messages", "--messages", "--no-require-git", "--require-git", "--no-unicode", "--unicode",
    "-0 --null", "--null-data", "--one-file-system", "--no-one-file-system", "-o --only-matching",
    "--path-separator =text", "--passthru", "-P --pcre2", "--no-pcre2", "--pcre2-version", "-p --pretty",
    "-q --quiet", "--regex-size-limit =text", "-r --replace =text",
    "-z --search-zip +runs # runs decompression programs",
    "--no-search-zip", "-S --smart-case", "--sort =text", "--sortr =text", "--stats", "--no-stats",
    "--stop-on-nonmatch", "-a --text", "--no-text", "-j --threads =n", "--trim", "--no-trim", "-t --type =text",
    "-T --type-not =text", "--type-add =text", "--type-clear =text", "--type-list +pattern", "-u --unrestricted",
    "--vimgrep", "-H --with-filename", "-I --no-filename", "-w --word-regexp", "-x --line-regexp",
    "-n --line-number", "-N --no-line-number", "--auto-hybrid-regex", "--no-auto-hybrid-regex",
    "--pre =cmd +runs # runs a program on every file", "--pre-glob =text", "--no-pre",
    "--hostname-bin =cmd +runs # runs a program", "--hyperlink-format =text", "--sort-files", "--no-sort-files",
)  # fmt: skip

_FIND = (
    # options before the starting points, and options among the primaries
    "-H", "-L -follow +follows", "-P", "-D =text", "-O3", "-O0", "-O1", "-O2", "-d -depth", "-maxdepth =n",
    "-mindepth =n", "-mount -xdev", "-noleaf", "-daystart", "-ignore_readdir_race", "-noignore_readdir_race",
    "-regextype =text", "-warn", "-nowarn", "-help --help", "-version --version",
    # tests
    "-name =text", "-iname =text", "-path -wholename =text", "-ipath -iwholename =text", "-regex =text",
    "-iregex =text", "-lname =text", "-ilname =text", "-type =text", "-xtype =text", "-user =text", "-group =text",
    "-uid =n", "-gid =n", "-perm =text", "-size =text", "-newer =file", "-anewer =file", "-cnewer =file",
    "-newermt =text", "-newerct =text", "-newerat =text", "-newerBt =text", "-samefile =file", "-mtime =text",
    "-atime =text", "-ctime =text", "-mmin =text", "-amin =text", "-cmin =text", "-used =text", "-links =text",
    "-inum =text", "-fstype =text", "-context =text", "-empty", "-executable", "-readable", "-writable", "-nouser",
    "-nogroup", "-true", "-false",
    # operators and actions
    "-a -and", "-o -or", "-not", "-print", "-print0", "-printf =text", "-ls", "-prune", "-quit",
    "-exec =argv +runs +recursive # runs a command on what it finds",
    "-execdir =argv +runs +recursive # runs a command on what it finds",
    "-ok =argv +runs +recursive # runs a command on what it finds",
    "-okdir =argv +runs +recursive # runs a command on what it finds",
    "-delete +writes +recursive # deletes what it finds", "-fprint =file +writes # writes a file",
    "-fprint0 =file +writes # writes a file", "-fls =file +writes # writes a file",
    "-fprintf =file =text +writes # writes a file",
)  # fmt: skip

SPECS: tuple[Spec, ...] = (
    Spec(
        "grep egrep fgrep",
        abbrev=True,
        numeric=True,
        options=_GREP,
        operands="pattern file*",
        examples=("grep -rn 'def ' src", "grep -e a -e b f", "grep -C3 x f", "grep --color=auto -i x f"),
        counterexamples=("grep --frobnicate x f", "grep --d=rec x ."),
    ),
    Spec(
        "rg",
        options=_RG,
        operands="pattern file*",
        effects="recursive",
        examples=("rg TODO src", "rg --pre-glob '*.pdf' x", "rg -n init", "rg --context 1 --heading foo", "rg --files"),
        counterexamples=("rg --pre cat x", "rg --hostname-bin=sh x", "rg -z x", "rg --search-zip x"),
    ),
    Spec(
        "find",
        style="find",
        options=_FIND,
        examples=("find . -name '*.py' -type f", "find src -name '*.py' -newer setup.py -print0", "find . ! -name x"),
        counterexamples=("find . -delete", "find . -exec rm {} ;", "find . -fprint out", "find . -frobnicate"),
    ),
    Spec(
        "sed",
        abbrev=True,
        options=(
            "--help", "--version", "-n --quiet --silent", "--debug", "-e --expression =script +pattern",
            "-f --file =file +pattern +hidden # reads its script from a file we cannot check",
            "--follow-symlinks", "-i --in-place ?text +writes # edits files in place", "-l --line-length =n",
            "--posix", "-E -r --regexp-extended", "-s --separate", "--sandbox", "-u --unbuffered",
            "-z --null-data --zero-terminated", "-b --binary",
        ),
        operands="pattern file*",
        check="sed",
        examples=("sed -n 1,5p f", "sed 's/a/b/g' f", "sed -e 's/a/b/' -e 's/c/d/' f", "sed -n '122,202p' f"),
        counterexamples=("sed -i s/a/b/ f", "sed --in=bak p f", "sed 's/y/echo hi/e' f", "sed -f s.sed f"),
    ),
    Spec(
        "jq",
        options=(
            "-h --help", "-V --version", "--build-configuration", "-n --null-input", "-R --raw-input",
            "-s --slurp", "-r --raw-output", "--raw-output0", "-j --join-output", "-a --ascii-output",
            "-c --compact-output", "-C --color-output", "-M --monochrome-output", "-S --sort-keys", "--tab",
            "--indent =n", "--unbuffered", "--stream", "--stream-errors", "--seq", "-e --exit-status",
            "--arg =text =text", "--argjson =text =text", "--slurpfile =text =file", "--rawfile =text =file",
            "--args", "--jsonargs", "-f --from-file =file +pattern", "-L --library-path =file",
        ),
        operands="pattern file*",
        check="jq",
        examples=("jq '.name' package.json", "jq -r '.[]' f", "jq --arg x 1 '.a' f"),
    ),
)  # fmt: skip
