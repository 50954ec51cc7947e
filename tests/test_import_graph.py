"""The package's import cycles, read from its import statements (tests/import_graph.py). The lists below held the
known ones, each with what would remove it, while they stayed; they are empty, so any cycle between modules fails.

Three graphs are checked:

* every import of one module by another — at module level, inside functions, and under `TYPE_CHECKING` (which
  issue 17 counts: `ui/repl.py` <-> `ui/slash.py` was an import cycle only the type checker followed), cycle by
  cycle (`simple_cycles`);
* the module-level imports between the package's top-level parts (`tools`, `permissions`, ...; issue 17's
  `tools/runner.py` <-> `permissions` is a cycle between two packages, not between two modules), cycle by cycle;
* the module- and function-level imports between the parts: no cycle once the function-level edges of
  FUNCTION_LEVEL_EXCEPTIONS are taken out (each is an import inside a function from a part that sits below the one
  it imports; each says why, and the test fails when one is no longer needed).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.import_graph import PACKAGE, Graph, Kind, components, import_graph, part_graph, report, simple_cycles

NAMED_IN_ISSUE_17: dict[str, list[list[str]]] = {
    # None: item 2's `ui.repl` <-> `ui.slash` went. Slash commands see the REPL through `slash.SlashHost`, and
    # slash.py imports nothing of repl.py; no cycle within `ui/` may come back (see the test below).
    "modules": [],
    # None: item 3's `permissions` <-> `tools` went. The runner's question and its answers (`CanUseTool`, `Allow`,
    # `Deny`, `ToolCallInfo`) live in tools/approval.py, and the runner is handed its answerer: `permissions`
    # imports `tools`, never the other way (see the test below).
    "parts": [],
}
"""The cycles issue 17 names, left for the work its items are (none left)."""

PRESENT_AT_88E1BB7: dict[str, list[list[str]]] = {
    # None: the cycles among `permissions.bash.checks` and `permissions.bash.options`, and among the `sandbox.*`
    # modules and `tools.builtin.bash`, went. The state a check reads (`Parse`) lives in parse_state.py, below both; the
    # runtime sees its sandbox through `runtime.Owner` and is told whether the command printed anything;
    # `unavailable_message` lives in settings.py. A tool uses the sandbox, never the other way.
    "modules": [],
    # None: compact's cycles with loop and providers went (CallModel is in providers/base.py, memo.py at the top).
    "parts": [],
}
"""Cycles issue 17 does not name, present when it was filed (commit 88e1bb7), listed while they stayed (none
left): any cycle at all now fails."""


FUNCTION_LEVEL_EXCEPTIONS: dict[tuple[str, str], str] = {
    # None. Knot 1, {config, mcp, permissions, providers, tools, web} with compact, hooks, trust and custom_commands,
    # went: WebFetch and WebSearch live in `web/` (they are clients of the tool kit, known by name in
    # `builtin_tools`), the MCP servers' credential variables reach the shell scrub as data (`app`), the settings
    # files' paths are `settings_files`, below `permissions` and `web`, and the trust inventory is `trust_review/`,
    # above the loaders it runs. Knot 2, {headless, output, stream_json}, went too: the session-host kit (kit/)
    # holds what they shared.
}
"""Edges between top-level parts made by function-level imports only, each closing a cycle between the parts, with
why it is there. Any other cycle between parts fails, and so does an entry that no longer closes one."""


def _part(name: str) -> str:
    return ".".join(name.split(".")[:2])


def _run_time(graphs: Mapping[Kind, Graph]) -> Graph:
    module, function = graphs["module"], graphs["function"]
    return {name: module[name] | function[name] for name in module}


def unexplained_part_cycles(graphs: Mapping[Kind, Graph], exceptions: Mapping[tuple[str, str], str]) -> list[list[str]]:
    """The cycles between top-level parts, through module- and function-level imports, once the function-level
    edges between the parts `exceptions` names are left out (a module-level edge is never left out)."""
    excepted = {(f"{PACKAGE}.{a}", f"{PACKAGE}.{b}") for a, b in exceptions}
    graph: Graph = {
        source: {t for t in targets if (_part(source), _part(t)) not in excepted or t in graphs["module"][source]}
        for source, targets in _run_time(graphs).items()
    }
    return _short(simple_cycles(part_graph(graph)))


def stale_exceptions(graphs: Mapping[Kind, Graph], exceptions: Mapping[tuple[str, str], str]) -> list[tuple[str, str]]:
    """The entries of `exceptions` that are no function-level edge between two parts, or that no cycle needs: the
    others leave no cycle without them."""
    function_only = {
        (_part(source), _part(target))
        for source, targets in graphs["function"].items()
        for target in targets - graphs["module"][source]
    }
    stale: list[tuple[str, str]] = []
    for entry in exceptions:
        others = {key: why for key, why in exceptions.items() if key != entry}
        edge = (f"{PACKAGE}.{entry[0]}", f"{PACKAGE}.{entry[1]}")
        if edge not in function_only or not unexplained_part_cycles(graphs, others):
            stale.append(entry)
    return stale


def _short(cycles: list[list[str]]) -> list[list[str]]:
    return [[name.removeprefix(PACKAGE + ".") for name in cycle] for cycle in cycles]


def _expected(layer: str) -> list[list[str]]:
    return sorted(NAMED_IN_ISSUE_17[layer] + PRESENT_AT_88E1BB7[layer])


def _whole(graphs: Mapping[Kind, Graph]) -> Graph:
    module, function, kind = graphs["module"], graphs["function"], graphs["type"]
    return {name: module[name] | function[name] | kind[name] for name in module}


def test_the_module_level_import_graph_has_no_cycle() -> None:
    graphs = import_graph()
    assert len(graphs["module"]) > 100  # the whole package was read
    assert components(graphs["module"]) == [], report(graphs)


def test_every_import_cycle_between_modules_is_a_known_one() -> None:
    graphs = import_graph()
    found = _short(simple_cycles(_whole(graphs)))
    new = [cycle for cycle in found if cycle not in _expected("modules")]
    gone = [cycle for cycle in _expected("modules") if cycle not in found]
    assert not new, f"new import cycles: {new}\n{report(graphs)}"
    assert not gone, f"cycles listed as known are gone (remove them from the lists): {gone}"


def test_every_cycle_between_the_packages_parts_is_a_known_one() -> None:
    graphs = import_graph()
    found = _short(simple_cycles(part_graph(graphs["module"])))
    new = [cycle for cycle in found if cycle not in _expected("parts")]
    gone = [cycle for cycle in _expected("parts") if cycle not in found]
    assert not new, f"new cycles between top-level parts: {new}\n{report(graphs)}"
    assert not gone, f"cycles listed as known are gone (remove them from the lists): {gone}"


def test_every_cycle_between_parts_through_functions_is_an_explained_exception() -> None:
    graphs = import_graph()
    assert unexplained_part_cycles(graphs, FUNCTION_LEVEL_EXCEPTIONS) == [], report(graphs)
    assert stale_exceptions(graphs, FUNCTION_LEVEL_EXCEPTIONS) == [], "no longer needed: remove from the list"


def test_a_planted_function_level_cycle_between_parts_fails(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/base.py": "def f():\n    from ..high.top import g\n",  # low -> high, inside a function only
        "high/__init__.py": "",
        "high/top.py": "from ..low.base import f\n",  # high -> low at module level
        "ns/a.py": "from . import b\n",  # a folder without __init__.py: a <-> b
        "ns/b.py": "def f():\n    from . import a\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graphs = import_graph(tmp_path)
    assert components(graphs["module"]) == []
    assert unexplained_part_cycles(graphs, {}) == [["high", "low"]]
    assert _short(simple_cycles(_whole(graphs))) == [["high.top", "low.base"], ["ns.a", "ns.b"]]
    explained = {("low", "high"): "planted"}
    assert unexplained_part_cycles(graphs, explained) == []
    assert stale_exceptions(graphs, explained) == []
    assert stale_exceptions(graphs, {("high", "low"): "a module-level edge", ("low", "ns"): "no edge"}) == [
        ("high", "low"),
        ("low", "ns"),
    ]
    # An exception never hides a module-level edge: the same cycle made at import time still fails.
    (tmp_path / "low/base.py").write_text("from ..high import top\n")
    assert unexplained_part_cycles(import_graph(tmp_path), explained) == [["high", "low"]]


def test_the_tools_import_nothing_of_the_permissions() -> None:
    # Permission is a layer over the tools (issue 17, item 3): not even a lazy or type-only import goes back up.
    graphs = import_graph()
    tools, permissions = f"{PACKAGE}.tools", f"{PACKAGE}.permissions"
    upward = sorted(
        f"{importer} -> {target}"
        for kind in ("module", "function", "type")
        for importer, targets in graphs[kind].items()
        if importer.startswith(tools + ".")
        for target in targets
        if target == permissions or target.startswith(permissions + ".")
    )
    assert upward == []


BUILT_ON: dict[str, set[str]] = {
    # The tool kit: WebFetch and WebSearch (web/), MCP tools (mcp/), providers that put tool specs on the wire, the
    # settings a provider is chosen from (config) are its clients, as are the permission and trust layers.
    "tools": {"config", "custom_commands", "hooks", "mcp", "permissions", "providers", "trust", "web"},
    # The trust gate: every loader of project configuration asks it (trust_review/ runs them, above them all).
    "trust": {"custom_commands", "hooks", "mcp", "permissions", "trust_review"},
    # The search settings read the settings files' paths (settings_files), not the permission loader.
    "web": {"permissions", "trust", "hooks"},
}
"""For a part, the parts built on it: it imports none of them, at module level or inside a function (issue 27's
knot: each of these edges was a function-level import closing a cycle)."""


def test_the_parts_below_import_nothing_of_the_parts_built_on_them() -> None:
    graphs = import_graph()
    upward = sorted(
        f"{importer} -> {target}"
        for kind in ("module", "function")
        for importer, targets in graphs[kind].items()
        for target in targets
        if (low := _part(importer).removeprefix(PACKAGE + ".")) in BUILT_ON
        and _part(target).removeprefix(PACKAGE + ".") in BUILT_ON[low]
    )
    assert upward == []


def test_the_ui_has_no_import_cycle() -> None:
    # The REPL's parts (issue 17, item 2): no cycle among ui/ modules or through them, however the import is made.
    graphs = import_graph()
    found = _short(simple_cycles(_whole(graphs)))
    assert [cycle for cycle in found if any(name.startswith("ui.") for name in cycle)] == []
    slash = {f"{PACKAGE}.ui.slash", f"{PACKAGE}.ui.slash_text"}
    assert not any(
        f"{PACKAGE}.ui.repl" in graphs[kind][name] for kind in ("module", "function", "type") for name in slash
    )


def test_cycles_are_found_by_kind(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "from .a import thing\n",  # a <-> b at module level
        "c.py": "def f():\n    from . import d\n",
        "d.py": "import react_agent_mini.c\n",  # c <-> d only through a function
        "e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .f import F\n",
        "f.py": "from .e import E\n",  # e <-> f only for the type checker
        "pkg/__init__.py": "from .inner import x\n",
        "pkg/inner.py": "from ..g import y\n",
        "g.py": "from .pkg.inner import z\n",  # g <-> pkg.inner, and g -> pkg (its __init__ runs first) -> g
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graphs = import_graph(tmp_path)
    assert components(graphs["module"]) == [
        ["react_agent_mini.a", "react_agent_mini.b"],
        ["react_agent_mini.g", "react_agent_mini.pkg", "react_agent_mini.pkg.inner"],
    ]
    assert graphs["function"]["react_agent_mini.c"] == {"react_agent_mini.d"}
    assert graphs["type"]["react_agent_mini.e"] == {"react_agent_mini.f"}
    text = report(graphs)
    assert "cycles among module-level imports: 2" in text
    assert "c -> d -> c" in text and "e -> f -> e" in text


def test_simple_cycles_lists_each_cycle_of_a_knot_once() -> None:
    # a -> b -> a, and a -> b -> c -> a: one component, two cycles; d -> d is no cycle between modules.
    graph: Graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"a"}, "d": set()}
    assert simple_cycles(graph) == [["a", "b"], ["a", "b", "c"]]
    ring = {f"m{i:02}": {f"m{(i + 1) % 13:02}"} for i in range(13)}  # over MAX_ENUMERATED: reported whole
    assert simple_cycles(ring) == [sorted(ring)]
