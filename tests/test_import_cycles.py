"""No import cycles among the modules of ``hudi_cluster_core``, nor among those of each plugin package.

A cycle means two modules can't be understood (or loaded) one without the other, and it forces imports into
function bodies or below the definitions they need. Every ``import`` and ``from … import`` is read with ``ast``:
those inside functions and ``TYPE_CHECKING`` blocks count (a lazy or type-only import reaching back is still a
cycle in the design). A module is a node; ``from .pkg import name`` is an edge to ``pkg.name`` when that is a
module, else to the package ``pkg`` (its ``__init__``). Nothing is imported, so this also holds for modules that
need Spark.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

def _packages() -> dict[str, Path]:
    """Top-level package name -> its directory: the core, and each plugin's (and contrib's) package."""
    found = {"hudi_cluster_core": REPO / "hudi_cluster_core"}
    for parent in ("plugins", "contrib"):
        for init in sorted((REPO / parent).glob("*/*/__init__.py")):
            if init.parent.parent.name != "template" and init.parent.name != "tests":
                found[init.parent.name] = init.parent
    return found


PACKAGES = _packages()


def modules_of(root: Path) -> dict[str, Path]:
    """Module name relative to the package (``""`` is the package itself) -> its file."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports_of(package: str, modules: dict[str, Path], name: str) -> set[str]:
    """Modules of ``package`` that module ``name`` imports (names relative to the package)."""
    path = modules[name]
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    here = [p for p in here if p]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = [package, *here[: len(here) - (node.level - 1)]]
            else:
                base = []
            if node.module:
                base.append(node.module)
            # ``from X import y``: y is the module X.y when there is one, else a name of X
            targets = [".".join([*base, a.name]) for a in node.names]
        else:
            continue
        for target in targets:
            if target == package or target.startswith(package + "."):
                relative = target[len(package) + 1 :]
                while relative and relative not in modules:
                    relative = relative.rpartition(".")[0]
                if relative != name:
                    found.add(relative)
    return found


def graph_of(package: str) -> dict[str, set[str]]:
    modules = modules_of(PACKAGES[package])
    return {name: imports_of(package, modules, name) for name in modules}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (each sorted), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative: the graph is deep enough to matter for recursion limits
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"x": {"y"}, "y": set()}) == []


def test_the_graph_is_read():
    core = graph_of("hudi_cluster_core")
    assert {"table.schema"} <= core["plan.schedule"] and "run.commit" in core["run.execute"]
    assert "mdt.records" in core["mdt.log_block"]  # from .records import X
    assert "io.bloom" in core["mdt.bloom_filters"]  # from ..io.bloom import X as Y
    assert {"hudi_cluster_consistent_bucket", "hudi_cluster_core"} <= set(PACKAGES)
    assert "hashing" in graph_of("hudi_cluster_consistent_bucket")["routing"]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles(package):
    found = cycles(graph_of(package))  # the core circle (config, hookspecs, plugins, plan, run) too: broken, issue 21
    assert not found, f"import cycles among the modules of {package}:\n" + "\n".join(" <-> ".join(c) for c in found)
