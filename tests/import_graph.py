"""The package's import graph, read from its import statements, and the cycles in it.

Every module of `src/react_agent_mini` is parsed (never imported). Each import of one of the package's own modules
is an edge of one of three kinds, by where the statement sits:

* module — at the top of the module (inside `if`, `try` and class bodies too): it runs when the module is imported;
* function — inside a function: it runs when the function is first called (the package's lazy imports);
* type — under `if TYPE_CHECKING:`: it never runs, only the type checker follows it.

`from .pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`; in a folder without an
`__init__.py` (`permissions/bash/`), `from . import name` is an edge to the module `name`. Importing `a.b.c` also
runs the `__init__` of `a` and `a.b`, so those packages are targets too — except the importer's own packages, which
are already being imported when it runs (a folder without `__init__.py` has none to run). Imports by name at run
time (`importlib.import_module`, as the package's own lazy exports do) are not statements and are not seen.

Cycles are the strongly connected components of the graph: first of the module-level edges alone (what can fail
with a half-initialised module at import time), then of module and function edges together, listing only the
cycles a function-level edge closes, then with type-only edges too. Last, the same module-level edges between the
package's top-level parts (`tools`, `permissions`, `cli`, ...), and the module and function edges between them: two
parts that import each other are one part in all but name, even when no two modules do.

`.venv/bin/python -m tests.import_graph` prints the report; `tests/test_import_graph.py` asserts that the
module-level graph has no cycle, and that every cycle of the whole graph and between the parts is one it lists
(`simple_cycles`: each cycle one by one, so that a new one shows even inside a knot that already had some).
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal

Kind = Literal["module", "function", "type"]
PACKAGE = "react_agent_mini"
SOURCE = Path(__file__).resolve().parent.parent / "src" / PACKAGE
Graph = dict[str, set[str]]


def module_names(root: Path = SOURCE) -> dict[str, Path]:
    """Dotted module name → file, for every module of the package (`pkg/__init__.py` is `pkg`)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, Kind]]:
    """Every import statement of a module with its kind."""

    def walk(node: ast.AST, kind: Kind) -> Iterator[tuple[ast.Import | ast.ImportFrom, Kind]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, kind
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, "type" if kind == "type" else "function")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), "type")
                for statement in child.orelse:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), kind)
            else:
                yield from walk(child, kind)

    return walk(tree, "module")


def _targets(
    importer: str, is_package: bool, node: ast.Import | ast.ImportFrom, modules: Mapping[str, Path]
) -> set[str]:
    """The package's modules one import statement names (before adding the packages they sit in)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    # `from . import x` in a folder without `__init__.py` (a namespace package, as `permissions/bash/`): the folder
    # is no module, yet `x` is one.
    named = {f"{prefix}.{a.name}" for a in node.names if f"{prefix}.{a.name}" in modules}
    if prefix not in modules:
        return named
    return named | ({prefix} if len(named) < len(node.names) else set())


def _with_packages(importer: str, targets: Iterable[str]) -> set[str]:
    """`targets` and the packages whose `__init__` importing them runs, less the importer's own packages."""
    own = {".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 2)}
    out: set[str] = set()
    for target in targets:
        parts = target.split(".")
        out.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return out - own


def import_graph(root: Path = SOURCE) -> dict[Kind, Graph]:
    """For each kind of edge, module → the package's modules it imports that way."""
    modules = module_names(root)
    graphs: dict[Kind, Graph] = {"module": {}, "function": {}, "type": {}}
    for name, path in modules.items():
        for graph in graphs.values():
            graph.setdefault(name, set())
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, kind in _imports(tree):
            targets = _targets(name, path.name == "__init__.py", node, modules)
            graphs[kind][name] |= (_with_packages(name, targets) & modules.keys()) - {name}
    return graphs


def components(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    member = ""
                    component: list[str] = []
                    while member != node:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def shortest_cycle(graph: Mapping[str, set[str]], members: list[str]) -> list[str]:
    """One shortest cycle through the first module of a component, as `[a, b, ..., a]` (breadth-first)."""
    inside = set(members)
    start = members[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node] & inside):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    return [start]


MAX_ENUMERATED = 12
"""A component with more modules than this is not taken apart into its cycles (their number grows fast)."""


def simple_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every cycle of `graph`, each once, as `[a, b, ..., z]` for `a -> b -> ... -> z -> a`, starting at its smallest
    module; sorted. A component of more than MAX_ENUMERATED modules is one entry, its members, so it still shows."""
    found: list[list[str]] = []
    for members in components(graph):
        if len(members) > MAX_ENUMERATED:
            found.append(members)
            continue
        inside = set(members)
        for start in members:
            # Depth first through modules after `start` only: each cycle is found once, from its smallest module.
            work: list[list[str]] = [[start]]
            while work:
                path = work.pop()
                for target in sorted(graph.get(path[-1], set()) & inside, reverse=True):
                    if target == start:
                        found.append(path)
                    elif target > start and target not in path:
                        work.append([*path, target])
    return sorted(found)


def part_graph(graph: Mapping[str, set[str]]) -> Graph:
    """`graph` between the package's top-level parts: `react_agent_mini.tools.builtin.grep` belongs to `tools`."""

    def part(name: str) -> str:
        return ".".join(name.split(".")[:2])

    out: Graph = {}
    for source, targets in graph.items():
        out.setdefault(part(source), set()).update(part(t) for t in targets if part(t) != part(source))
    return out


def _short(name: str) -> str:
    return name.removeprefix(PACKAGE + ".")


def report(graphs: Mapping[Kind, Graph]) -> str:
    """The cycles of the module-level graph, then those only function-level (or type-only) imports close."""
    module = graphs["module"]
    lines = [
        f"{len(module)} modules; edges: " + ", ".join(f"{k} {sum(map(len, g.values()))}" for k, g in graphs.items())
    ]
    seen: set[frozenset[str]] = set()
    layers: list[tuple[str, Graph]] = [
        ("module-level imports", module),
        ("module- and function-level imports", {m: module[m] | graphs["function"][m] for m in module}),
        (
            "module-, function-level and type-only imports",
            {m: module[m] | graphs["function"][m] | graphs["type"][m] for m in module},
        ),
    ]
    for title, graph in layers:
        new = [c for c in components(graph) if frozenset(c) not in seen]
        lines.append(f"cycles among {title}: {len(new)} new" if seen else f"cycles among {title}: {len(new)}")
        for members in new:
            seen.add(frozenset(members))
            cycle = " -> ".join(map(_short, shortest_cycle(graph, members)))
            lines.append(f"  {len(members)} modules: {', '.join(map(_short, members))}")
            lines.append(f"    e.g. {cycle}")
    for title, graph in layers[:2]:
        parts = part_graph(graph)
        between = components(parts)
        lines.append(f"cycles between the package's {len(parts)} top-level parts ({title}): {len(between)}")
        lines += _part_cycles(module, graph, parts, between)
    return "\n".join(lines)


def _part_cycles(module: Graph, graph: Graph, parts: Graph, between: list[list[str]]) -> list[str]:
    """Each knot of parts, one cycle through it, and for each edge between two of its parts the imports that make
    it (`(function)` after those only a function makes)."""
    lines: list[str] = []
    for members in between:
        lines.append(f"  {', '.join(map(_short, members))}")
        lines.append(f"    e.g. {' -> '.join(map(_short, shortest_cycle(parts, members)))}")
        for source in members:
            for target in sorted(parts[source] & set(members)):
                edges = [
                    (m, t)
                    for m, ts in graph.items()
                    if m.startswith(source + ".") or m == source
                    for t in ts
                    if t.startswith(target + ".") or t == target
                ]
                if any(t != target for _, t in edges):  # a package's own `__init__`, run on the way, adds nothing
                    edges = [(m, t) for m, t in edges if t != target]
                why = sorted(
                    f"{_short(m)} -> {_short(t)}" + ("" if t in module[m] else " (function)") for m, t in edges
                )
                lines.append(f"    {_short(source)} -> {_short(target)}: {', '.join(why)}")
    return lines


if __name__ == "__main__":
    print(report(import_graph(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE)))
