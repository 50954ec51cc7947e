"""git's options, in groups several subcommands share: the global ones, the diff options (`+contents` marks those
that make it print file contents, `+nocontents` the output formats without them), the revision options of the
log-style subcommands, and the ref filters of `branch` and `tag`. Their subcommands are in `git.py`."""

from __future__ import annotations

GLOBAL = (
    "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
    "--icase-pathspecs", "--no-replace-objects", "--no-advice", "--version +standalone",
    "-c =text +hidden # can change configuration, which can run programs",
    "--config-env =text +hidden # can change configuration, which can run programs",
    "-C =file +unsafe # works in another repository, whose configuration can run programs",
    "--git-dir =file +unsafe # works in another repository, whose configuration can run programs",
    "--work-tree =file +unsafe # works in another repository, whose configuration can run programs",
    "--exec-path ?file +unsafe # runs git programs from another directory", "--namespace =text +unsafe",
    "--super-prefix =text +unsafe", "--bare +unsafe", "-p --paginate +unsafe # runs a pager",
    "--help +unsafe # opens a manual page", "--html-path", "--man-path", "--info-path",
)  # fmt: skip

DIFF_NEUTRAL = (
    "--full-index", "--abbrev ?n", "--no-abbrev", "-R", "-B --break-rewrites ?text", "-M --find-renames ?text",
    "-C --find-copies ?text", "--find-copies-harder", "-D --irreversible-delete", "-l =n", "--diff-filter =text",
    "-O =file", "--rotate-to =text", "--skip-to =text", "--relative ?text", "--no-relative", "-a --text",
    "--ignore-cr-at-eol", "--ignore-space-at-eol", "-b --ignore-space-change", "-w --ignore-all-space",
    "--ignore-blank-lines", "-I --ignore-matching-lines =text", "--inter-hunk-context =n", "--minimal",
    "--patience", "--histogram", "--anchored =text", "--diff-algorithm =text", "--indent-heuristic",
    "--no-indent-heuristic", "--color ?text", "--no-color", "--color-moved ?text", "--no-color-moved",
    "--color-moved-ws =text", "--no-color-moved-ws", "--src-prefix =text", "--dst-prefix =text", "--no-prefix",
    "--default-prefix", "--line-prefix =text", "--ita-invisible-in-index", "--ita-visible-in-index",
    "--ignore-submodules ?text", "--submodule ?text", "--no-renames", "--rename-empty", "--no-rename-empty",
    "--no-ext-diff", "--no-textconv", "--exit-code", "--quiet", "-z", "--stat-width =n", "--stat-name-width =n",
    "--stat-graph-width =n", "--stat-count =n", "--output-indicator-new =text", "--output-indicator-old =text",
    "--output-indicator-context =text",
)  # fmt: skip
DIFF_NO_CONTENTS = (
    "--stat ?text +nocontents", "--numstat +nocontents", "--shortstat +nocontents", "--dirstat -X ?text +nocontents",
    "--cumulative +nocontents", "--dirstat-by-file ?text +nocontents", "--summary +nocontents",
    "--name-only +nocontents", "--name-status +nocontents", "--raw +nocontents", "-s --no-patch +nocontents",
    "--compact-summary +nocontents",
)  # fmt: skip
DIFF_CONTENTS = (
    "-p -u --patch +contents", "-U ?n +contents", "--unified =n +contents", "-W --function-context +contents",
    "--patch-with-stat +contents", "--patch-with-raw +contents", "--binary +contents", "--cc +contents",
    "-c +contents", "--dd +contents", "-m +contents", "--remerge-diff +contents", "--diff-merges =text +contents",
    "--combined-all-paths +contents", "--word-diff ?text +contents", "--word-diff-regex =text +contents",
    "--color-words ?text +contents", "--check +contents", "--full-diff +contents", "--textconv +contents",
    "-G =text +contents", "-S =text +contents", "--pickaxe-regex +contents", "--pickaxe-all +contents",
    "--find-object =text +contents", "-L =text +contents",
    "--ext-diff +runs # runs an external diff program", "--output =file +writes # writes its output to a file",
)  # fmt: skip
DIFF = (*DIFF_NEUTRAL, *DIFF_NO_CONTENTS, *DIFF_CONTENTS)

REV = (
    "-n --max-count =n", "--skip =n", "--since --after --since-as-filter =text", "--until --before =text",
    "--author =text", "--committer =text", "--grep =text", "--grep-reflog =text", "--all-match", "--invert-grep",
    "-i --regexp-ignore-case", "--basic-regexp", "-E --extended-regexp", "-F --fixed-strings", "-P --perl-regexp",
    "--remove-empty", "--merges", "--no-merges", "--min-parents =n", "--max-parents =n", "--no-min-parents",
    "--no-max-parents", "--first-parent", "--exclude-first-parent-only", "--not", "--all", "--branches ?text",
    "--tags ?text", "--remotes ?text", "--glob =text", "--exclude =text", "--reflog", "--alternate-refs",
    "--single-worktree", "--ignore-missing", "--bisect", "--cherry-mark", "--cherry-pick", "--left-only",
    "--right-only", "--cherry", "-g --walk-reflogs", "--merge", "--boundary", "--simplify-by-decoration",
    "--show-pulls", "--full-history", "--dense", "--sparse", "--simplify-merges", "--ancestry-path ?text",
    "--date-order", "--author-date-order", "--topo-order", "--reverse", "--no-walk ?text", "--do-walk",
    "--pretty ?format", "--format =format", "--abbrev-commit", "--no-abbrev-commit", "--oneline", "--encoding =text",
    "--expand-tabs ?n", "--no-expand-tabs", "--notes ?text", "--no-notes", "--show-notes ?text", "--standard-notes",
    "--no-standard-notes", "--relative-date", "--date =text", "--parents", "--children", "--left-right", "--graph",
    "--show-linear-break ?text", "--decorate ?text", "--no-decorate", "--decorate-refs =text",
    "--decorate-refs-exclude =text", "--clear-decorations", "--source", "--mailmap", "--use-mailmap",
    "--no-mailmap", "--log-size", "--follow", "--show-signature +runs # runs gpg to check signatures",
)  # fmt: skip
LOG = (*REV, *DIFF)
REV_LIST_OPTIONS = (
    *REV, "--count", "--objects", "--objects-edge", "--objects-edge-aggressive", "--unpacked", "--object-names",
    "--no-object-names", "--filter =text", "--no-filter", "--filter-print-omitted", "--missing =text",
    "--exclude-promisor-objects", "--header", "--timestamp", "--quiet", "--disk-usage ?text", "--in-commit-order",
    "--use-bitmap-index", "--stdin",
)  # fmt: skip
"""`git rev-list`: the revision options and its own (it prints object names, never file contents)."""

REF_FILTERS = (
    "-l --list +list", "--color ?text", "--no-color", "--contains ~rev", "--no-contains ~rev", "--merged ~rev",
    "--no-merged ~rev", "--column ?text", "--no-column", "--sort =text", "--points-at ~rev", "-i --ignore-case",
    "--omit-empty", "--format =format",
)  # fmt: skip
FOR_EACH_REF_OPTIONS = (
    "--count =n", "--shell", "--perl", "--python", "--tcl", "--sort =text", "--format =format", "--color ?text",
    "--points-at ~rev", "--merged ~rev", "--no-merged ~rev", "--contains ~rev", "--no-contains ~rev",
    "--ignore-case", "--omit-empty", "--exclude =text", "--include-root-refs", "--stdin",
)  # fmt: skip
BRANCH_LISTING = ("-v --verbose", "-q --quiet", "-r --remotes", "-a --all", "--show-current", "--abbrev ?n",
                   "--no-abbrev")  # fmt: skip

STATUS_OPTIONS = (
    "-v --verbose +contents", "-s --short", "-b --branch", "--show-stash", "--ahead-behind", "--no-ahead-behind",
    "--porcelain ?text", "--long", "-z --null", "-u --untracked-files ?text", "--ignored ?text",
    "--ignore-submodules ?text", "--column ?text", "--no-column", "--renames", "--no-renames",
    "-M --find-renames ?text",
)  # fmt: skip

SHORTLOG_OPTIONS = (
    "-c --committer", "-n --numbered", "-s --summary", "-e --email", "-w ?text", "--group =text", "--format =format",
    "--all", "--since --after =text", "--until --before =text", "--author =text", "--no-merges", "--merges",
    "--first-parent", "--reverse", "--max-count =n", "--grep =text",
)  # fmt: skip

BLAME_OPTIONS = (
    "--incremental", "-b", "--root", "--show-stats", "--progress", "--no-progress", "--score-debug",
    "-f --show-name", "-n --show-number", "-p --porcelain", "--line-porcelain", "-c", "-t", "-l", "-s",
    "-e --show-email", "-w", "--ignore-rev =rev", "--ignore-revs-file =file", "--color-lines", "--color-by-age",
    "--minimal", "-S =file", "--contents =file", "-C ?n", "-M ?n", "-L =text", "--abbrev ?n", "--reverse =rev",
    "--first-parent", "--since =text", "--date =text", "--encoding =text",
)  # fmt: skip

REV_PARSE_OPTIONS = (
    "--abbrev-ref ?text", "--symbolic", "--symbolic-full-name", "--verify", "-q --quiet", "--short ?n",
    "--show-toplevel", "--show-prefix", "--show-cdup", "--git-dir", "--git-common-dir", "--absolute-git-dir",
    "--is-inside-work-tree", "--is-inside-git-dir", "--is-bare-repository", "--is-shallow-repository",
    "--show-superproject-working-tree", "--shared-index-path", "--show-object-format ?text", "--show-ref-format",
    "--resolve-git-dir =file", "--git-path =text", "--all", "--branches ?text", "--tags ?text", "--remotes ?text",
    "--glob =text", "--exclude =text", "--disambiguate =text", "--since --after =text", "--until --before =text",
    "--default =text", "--prefix =text", "--revs-only", "--no-revs", "--flags", "--no-flags", "--not",
    "--local-env-vars", "--path-format =text",
)  # fmt: skip

LS_FILES_OPTIONS = (
    "-z", "-t", "-v", "-f", "-c --cached", "-d --deleted", "-m --modified", "-o --others", "-i --ignored",
    "-s --stage", "-k --killed", "--directory", "--no-empty-directory", "--eol", "--empty-directory",
    "-u --unmerged", "--resolve-undo", "-x --exclude =text", "-X --exclude-from =file",
    "--exclude-per-directory =text", "--exclude-standard", "--full-name", "--recurse-submodules", "--error-unmatch",
    "--with-tree =rev", "--abbrev ?n", "--debug", "--deduplicate", "--sparse", "--format =format",
)  # fmt: skip

LS_TREE_OPTIONS = (
    "-d", "-r", "-t", "-z", "-l --long", "--name-only --name-status", "--object-only", "--full-name", "--full-tree",
    "--format =format", "--abbrev ?n",
)  # fmt: skip

DESCRIBE_OPTIONS = (
    "--contains", "--debug", "--all", "--tags", "--long", "--first-parent", "--abbrev ?n", "--exact-match",
    "--candidates =n", "--match =text", "--exclude =text", "--always", "--dirty ?text", "--broken ?text",
)  # fmt: skip

CAT_FILE_OPTIONS = (
    "-e +nocontents", "-p", "-t +nocontents", "-s +nocontents", "--allow-unknown-type", "--use-mailmap --mailmap",
    "--no-mailmap", "--batch ?format +contents", "--batch-check ?format +nocontents",
    "--batch-command ?format +contents", "--batch-all-objects", "--buffer", "--follow-symlinks", "--unordered",
    "--textconv", "--filters", "--path =text", "-z",
)  # fmt: skip

GREP_OPTIONS = (
    "--cached", "--no-index", "--untracked", "--exclude-standard", "--no-exclude-standard", "--recurse-submodules",
    "-v --invert-match", "-i --ignore-case", "-w --word-regexp", "-a --text", "-I", "--textconv", "--no-textconv",
    "-r --recursive", "--no-recursive", "--max-depth =n", "-E --extended-regexp", "-G --basic-regexp",
    "-F --fixed-strings", "-P --perl-regexp", "-n --line-number", "--column", "-h", "-H", "--full-name",
    "-l --files-with-matches --name-only", "-L --files-without-match", "-z --null", "-o --only-matching",
    "-c --count", "--color ?text", "--no-color", "--break", "--heading", "-C --context =n", "-B --before-context =n",
    "-A --after-context =n", "--threads =n", "-p --show-function", "-W --function-context", "-f =file +pattern",
    "-e =text +pattern", "--and", "--or", "--not", "-q --quiet", "--all-match",
    "-O --open-files-in-pager ?text +runs # opens the files in a pager", "--ext-grep", "-m --max-count =n",
)  # fmt: skip

CONFIG_OPTIONS = (
    "--global", "--system", "--local", "--worktree", "-f --file =file", "--blob =rev +contents", "--get",
    "--get-all", "--get-regexp", "--get-urlmatch", "--replace-all +writes", "--add +writes", "--unset +writes",
    "--unset-all +writes", "--rename-section +writes", "--remove-section +writes", "-l --list", "--fixed-value",
    "-e --edit +writes # opens an editor", "--get-color", "--get-colorbool", "-t --type =text", "--no-type",
    "--bool", "--int", "--bool-or-int", "--bool-or-str", "--path", "--expiry-date", "-z --null", "--name-only",
    "--includes", "--no-includes", "--show-origin", "--show-scope", "--default =text",
)  # fmt: skip
