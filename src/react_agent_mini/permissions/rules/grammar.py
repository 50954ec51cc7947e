"""Permission rules in Claude Code's syntax: what a rule string means and how it is matched against one thing.

A rule is `Tool` (every use of the tool) or `Tool(specifier)`:
- `Bash(npm run test:*)` a prefix, `Bash(git status)` an exact command, `Bash(git * main)` a wildcard, compared word
  by word against each simple command of a Bash call (`ruleset.py` says which forms of a command a rule sees).
- `Read(...)`, `Edit(...)`, `Write(...)`: a gitignore-style path pattern, matched against the RESOLVED path (`..`
  and symlinks followed), so a rule cannot be dodged by `a/../secrets/x` or a link. Read rules also govern the
  other tools whose family reads (`read` and `search`, `tools.declared`: Glob, Grep); Edit rules govern every tool
  of the `edit` family (Write included).
- `mcp__server` / `mcp__server__*` every tool of an MCP server, `mcp__server__tool` one tool.
- `WebFetch(domain:docs.example.com)`: fetches from that host. An allow rule means that host exactly (a narrow
  grant, as Claude Code's), `domain:*.example.com` any host below example.com, `domain:*` every host; a deny or ask
  rule also covers the hosts below the one it names, so denying `domain:example.com` blocks `api.example.com`.
  Hosts are compared in one spelling (`127.1` is `127.0.0.1`), and a deny or ask rule naming an address or this
  machine also covers the names that resolve there (`Domain`).
  `WebSearch` takes no specifier.

A rule string that does not parse is a `RuleError` (a warning, for allow rules; see `settings.py`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypeAlias

import msgspec

from ...permission_modes import PERMISSION_MODES as PERMISSION_MODES
from ...permission_modes import PermissionMode as PermissionMode
from ...tools.declared import READING, Family

RuleKind: TypeAlias = Literal["allow", "ask", "deny"]
Verdict: TypeAlias = RuleKind
RULE_KINDS: tuple[RuleKind, ...] = ("allow", "ask", "deny")

PATH_RULE_TOOLS: dict[str, frozenset[Family]] = {"Read": READING, "Edit": frozenset({"edit"}), "Write": frozenset()}
"""The rules that take a path pattern, and the tool families each governs besides the tool of its own name."""
_TOOL_NAME = re.compile(r"^(?:mcp__[A-Za-z0-9_.-]+?(?:__\*)?|[A-Za-z][A-Za-z0-9_-]*)$")
_PROBE = "\x00probe"
"""A child name no literal pattern matches: "does this rule cover everything inside a directory?"."""


class RuleError(ValueError):
    """A rule string that does not parse; the message says why."""


class Rule(msgspec.Struct, frozen=True):
    """One parsed rule."""

    tool: str
    """Tool name or MCP server pattern: `Bash`, `Edit`, `mcp__github`, `mcp__github__*`."""
    specifier: str | None = None
    """The text inside the parentheses; None when the rule covers every use of the tool."""
    source: str = "session"
    """Where the rule came from: a settings file path, "cli" or "session"."""
    project_root: str | None = None
    """Base of `/path` patterns (the project the settings file belongs to); None: the workspace."""

    @property
    def text(self) -> str:
        """The rule as written in settings: `Tool` or `Tool(specifier)`."""
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


class RuleMatch(msgspec.Struct, frozen=True):
    """The verdict the rules give a call, and the rule that gave it."""

    verdict: Verdict
    """deny, ask or allow."""
    rule: Rule
    """The deciding rule (for allow: the first rule that contributed)."""


def parse_rule(text: str, source: str = "session", project_root: Path | None = None) -> Rule:
    """The rule `text` denotes, or RuleError."""
    text = text.strip()
    if not text:
        raise RuleError("empty rule")
    tool, specifier = text, None
    if "(" in text or ")" in text:
        open_at = text.find("(")
        if open_at <= 0 or not text.endswith(")"):
            raise RuleError("expected Tool or Tool(specifier)")
        tool, specifier = text[:open_at].strip(), text[open_at + 1 : -1].strip()
        if not specifier:
            raise RuleError("empty specifier; write the bare tool name to cover every use")
        if specifier in ("*", ":*"):
            specifier = None
    if not _TOOL_NAME.match(tool):
        raise RuleError(f"invalid tool name {tool!r}")
    rule = Rule(tool, specifier, source, str(project_root) if project_root else None)
    compile_rule(rule)  # the specifier's own errors surface now, not at the first call
    return rule


def split_rule_list(value: str) -> list[str]:
    """Rules in a CLI value, separated by commas or whitespace outside parentheses: `"Bash(git diff:*),Edit"`."""
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (char == "," or char.isspace()):
            if "".join(current).strip():
                rules.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if "".join(current).strip():
        rules.append("".join(current).strip())
    return rules


def escape_pattern(path: str) -> str:
    """`path` as a pattern matching only itself (glob characters escaped)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", path)


class PathPattern:
    """A compiled gitignore-style pattern with the base it is relative to."""

    __slots__ = ("base", "regex")

    def __init__(self, spec: str) -> None:
        pattern = spec
        if pattern.startswith("//"):
            self.base, pattern = "abs", pattern[2:]
        elif pattern == "~" or pattern.startswith("~/"):
            self.base, pattern = "home", pattern[2:]
        elif pattern.startswith("/"):
            self.base, pattern = "project", pattern[1:]
        else:
            self.base = "workspace"
        # gitignore: a pattern with no slash (other than a trailing one) matches at any depth
        anchored = self.base != "workspace" or "/" in pattern.rstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/")
        if pattern in ("", "."):
            pattern = "**"
        if ".." in pattern.split("/"):
            raise RuleError("'..' is not allowed in a path pattern; write //absolute/path instead")
        body = _glob_regex(pattern)
        self.regex = re.compile(body if anchored else f"(?:.*/)?{body}", re.DOTALL)

    def anchor(self, workspace: Path, project_root: str | None) -> Path:
        """The directory the pattern is relative to: nothing outside it matches."""
        if self.base == "abs":
            return Path("/")
        if self.base == "home":
            return Path.home().resolve()
        if self.base == "project" and project_root:
            return Path(project_root).resolve()
        return workspace.resolve()

    def matches(self, path: Path, directory: bool, workspace: Path, project_root: str | None) -> bool:
        """True when the pattern covers `path` (or an ancestor of it, like gitignore)."""
        base = self.anchor(workspace, project_root)
        try:
            parts = path.relative_to(base).parts
        except ValueError:
            return False
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))] or [""]
        if directory:
            candidates.append("/".join((*parts, _PROBE)))
        return any(self.regex.fullmatch(c) for c in candidates)


def _glob_regex(pattern: str) -> str:
    """Regex for a slash-separated glob: `**` any depth, `*` `?` `[..]` within one name, `\\x` literal."""
    segments = pattern.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:.*/)?")
            continue
        out.append(_segment_regex(segment))
        if not last:
            out.append("/")
    return "".join(out)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (close := segment.find("]", i + 2)) != -1:
            body = segment[i + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = close + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


class BashPattern:
    """`prefix:*` (or `prefix *`), an exact command, or a wildcard pattern, compared word by word."""

    __slots__ = ("exact", "kind", "regex", "words")

    def __init__(self, spec: str) -> None:
        self.exact = spec
        self.regex: re.Pattern[str] | None = None
        if spec.endswith(":*") or (spec.endswith(" *") and "*" not in spec[:-2]):
            self.kind, body = "prefix", spec[:-2].rstrip()
            if "*" in body or ":*" in body:
                raise RuleError("use either a trailing :* or * wildcards, not both")
        elif "*" in spec:
            self.kind, body = "glob", spec
            if ":*" in spec:
                raise RuleError(":* is only allowed at the end")
            parts = " ".join(spec.split()).split("*")
            self.regex = re.compile(".*".join(re.escape(p) for p in parts), re.DOTALL)
        else:
            self.kind, body = "exact", spec
        try:
            self.words = tuple(shlex.split(body)) if self.kind != "glob" else ()
        except ValueError as exc:
            raise RuleError(f"cannot split the command: {exc}") from None
        if self.kind != "glob" and not self.words:
            raise RuleError("empty command")

    def matches(self, words: Sequence[str]) -> bool:
        """True when the simple command `words` (assignments first) fits."""
        if self.kind == "exact":
            return tuple(words) == self.words
        if self.kind == "prefix":
            return tuple(words[: len(self.words)]) == self.words
        return self.regex is not None and self.regex.fullmatch(" ".join(words)) is not None

    def mentioned_in(self, text: str) -> bool:
        """Loose check for a command that did not parse: do the rule's words appear anywhere in it?"""
        if self.regex is not None:
            return self.regex.search(text) is not None
        words = r"\s+".join(re.escape(w) for w in self.words)
        return re.search(rf"(?<![\w./-]){words}(?![\w./-])", text) is not None


class Domain:
    """`domain:<host>`, `domain:*.<host>` or `domain:*`, matched against the host WebFetch connects to.

    Both sides are compared in their one spelling (`web.hosts.normalize_host`): `127.1`, `0x7f000001` and
    `127。0。0。1` are `127.0.0.1`, `LOCALHOST.` is `localhost`, `[::ffff:10.0.0.5]` is `10.0.0.5`. An allow rule
    grants the host it names and no other (`grants`), whatever the host resolves to. A deny or ask rule covers
    (`covers`) the host and the names below it — and, when it names an address or this machine, every name that
    resolves there: `domain:10.0.0.5` covers a name whose addresses include 10.0.0.5, and `domain:localhost`,
    `domain:127.0.0.1`, `domain:::1` or `domain:0.0.0.0` cover all of this machine (loopback names and addresses,
    `0.0.0.0`, and names resolving to them)."""

    __slots__ = ("address", "host", "local", "wildcard")

    def __init__(self, spec: str) -> None:
        from ...web.hosts import BadHost, is_ip, is_local, normalize_host

        if not spec.startswith("domain:") or not spec[7:].strip():
            raise RuleError("WebFetch takes domain:<host>, e.g. WebFetch(domain:docs.python.org)")
        written = spec[7:].strip()
        self.wildcard = written == "*" or written.startswith("*.")
        body = written.removeprefix("*").removeprefix(".")
        bare = body.strip("[]")
        if "/" in body or "*" in body or (":" in bare and not _ipv6(bare)):
            raise RuleError("domain: takes a host name only (no scheme, port, path or inner *)")
        try:
            self.host = normalize_host(body) if body else ""
        except BadHost as exc:
            raise RuleError(f"domain: {exc}") from None
        self.address = is_ip(self.host)
        """The rule names an IP address (it also covers names that resolve to it)."""
        if self.wildcard and self.address:
            raise RuleError("domain:*. takes a name, not an address")
        self.local = bool(self.host) and is_local(self.host)
        """The rule names this machine (it covers every loopback name and address)."""

    @property
    def needs_addresses(self) -> bool:
        """True when covering a host may depend on what the host resolves to."""
        return self.address or self.local

    def grants(self, target: FetchTarget) -> bool:
        """Allow: the target's host is the rule's (a `*.` rule: a host below it; `*`: any host)."""
        host = target.host
        if host is None:
            return False
        if self.wildcard and not self.host:
            return True
        if host == self.host:
            return not self.wildcard
        return self.wildcard and host.endswith("." + self.host)

    def covers(self, target: FetchTarget) -> bool:
        """Deny and ask: the target's host is the rule's or below it, or it reaches the address (or the machine)
        the rule names."""
        from ...web.hosts import is_local, is_local_address

        host = target.host
        if host is None:
            return False
        if self.wildcard and not self.host:
            return True
        if host == self.host or (not self.address and host.endswith("." + self.host)):
            return True
        if not self.needs_addresses:
            return False
        if self.local and is_local(host):
            return True
        return any(a == self.host or (self.local and is_local_address(a)) for a in target.addresses())


class FetchTarget:
    """The host a WebFetch call connects to (`web.urls.fetched_host`: None when the fetch would refuse the URL) and,
    only when a rule asks for them, the addresses it resolves to (`web.hosts.addresses_to_check`), resolved once
    per check. `pin` records them for the fetch, which then connects to those and no others."""

    __slots__ = ("_addresses", "host")

    def __init__(self, url: object) -> None:
        from ...web.urls import fetched_host

        self.host = fetched_host(url)
        self._addresses: tuple[str, ...] | None = None

    def addresses(self) -> tuple[str, ...]:
        if self._addresses is None:
            from ...web.hosts import addresses_to_check

            self._addresses = addresses_to_check(self.host) if self.host else ()
        return self._addresses

    def pin(self) -> None:
        """The check lets the call through: its fetch connects to the addresses judged (if any were)."""
        from ...web.hosts import is_ip, pin

        if self._addresses is not None and self.host and not is_ip(self.host):
            pin(self.host, self._addresses)


def _ipv6(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


Matcher: TypeAlias = "PathPattern | BashPattern | Domain | None"


def compile_rule(rule: Rule) -> Matcher:
    spec = rule.specifier
    if spec is None:
        return None
    if rule.tool == "Bash":
        return BashPattern(spec)
    if rule.tool in PATH_RULE_TOOLS:
        return PathPattern(spec)
    if rule.tool == "WebFetch":
        return Domain(spec)
    raise RuleError(f"{rule.tool} rules take no specifier; write just {rule.tool}")


def governs(rule_tool: str, tool: str, family: Family = "other") -> bool:
    """Does a rule written for `rule_tool` apply to calls of `tool` (a tool of `family`)?"""
    if rule_tool == tool or family in PATH_RULE_TOOLS.get(rule_tool, ()):
        return True
    if rule_tool.startswith("mcp__"):
        server = rule_tool.removesuffix("__*")
        # `mcp__server` names a whole server; `mcp__server__tool` (no wildcard) names one tool
        whole_server = rule_tool.endswith("__*") or "__" not in rule_tool[5:]
        return whole_server and tool.startswith(server + "__")
    return False
