"""The core's imports go one way: foundation → table (view last) → write, plan → sort → run → commit → driver → entry.

Every ``import`` and ``from … import`` of ``hudi_cluster_core`` is read with ``ast`` (those inside functions and
``TYPE_CHECKING`` blocks included: a lazy import reaching back up is still a cycle in the design). Nothing is
imported, so the test also holds for modules that need Spark.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.test_import_cycles import modules_of

PACKAGE = "hudi_cluster_core"
REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / PACKAGE

# A module may import modules of its own rank or below, never above.
FOUNDATION, TABLE, WRITE, PLAN, SORT, RUN, COMMIT, DRIVER, ENTRY = range(9)
RANKS = {
    "errors": FOUNDATION, "failpoints": FOUNDATION, "interrupts": FOUNDATION, "javaprops": FOUNDATION,
    "config": FOUNDATION, "hookspecs": FOUNDATION, "avro": FOUNDATION, "io": FOUNDATION, "layout": FOUNDATION,
    "clock": FOUNDATION, "hook_trace": FOUNDATION,
    "byte_units": FOUNDATION,  # sizes for people to read: every printed size, from the config reference up
    "process_exit": FOUNDATION,  # the command line's exit without the interpreter's teardown: no imports of ours
    "process_phases": FOUNDATION,  # when the process started and the command line's start-up steps: no imports
    "hashing": FOUNDATION,  # the footer bloom filter and the rewrite check's row codes: hashes, no files
    "plugins": PLAN,  # discovery and the one way hooks are called; the core defaults (plan.defaults) are a plugin
    "protocols": PLAN,  # the strategy interfaces, whose optional hooks are the plan defaults
    "table": TABLE,
    "write": WRITE,  # the clustering's file writer: base files, log files, markers; rows out, no plans
    "mdt": WRITE,  # the metadata table's HFile, log blocks, records and deltacommit: table-level writes, no plans
    "writer": WRITE,  # our own table writers (append, upsert) and their commits: rows in, no plans, no clustering
    "writer.ingest": ENTRY,  # the writers' entry point: the update strategies' hooks, then inline clustering
    # reading the metadata table is reading the table: the view lists a table through its MDT's files partition
    "mdt.hfile": TABLE, "mdt.log_block": TABLE, "mdt.records": TABLE, "mdt.encoded": TABLE,
    "mdt.partition_reader": TABLE, "mdt.files_listing": TABLE,
    "plan": PLAN,
    "report": PLAN,  # reads the table's files and index, models queries; the plan strategies score groups with it
    "sort": SORT,  # sort keys, key ranges and the out-of-core sort of a group: what a task runs, no Spark
    "run": RUN,
    "run.commit": COMMIT,
    "run.execute": DRIVER,  # runs the tasks, then commits
    "run.slice_reader": RUN,  # a task's input slices read (pyarrow, hudi-rs's merge), in the table's latest schema
    "api": ENTRY, "cli": ENTRY, "demo": ENTRY, "show": ENTRY, "testing": ENTRY, "sdk": ENTRY, "service": ENTRY,
    "run_metrics": ENTRY,
    "cluster_result": ENTRY,  # what cluster() returns: a plan's predicted effect, a run's measured one
    "": ENTRY,
}  # fmt: skip
# Our writers are not part of the clustering: no module of the clustering engine imports writer/. Only these
# may, each for a stated reason.
WRITER_USERS = {
    "": "the package's public names append and upsert",
    "cli": "the append and upsert commands",
    "demo": "writes the demo's table",
    "testing": "the strategy kit writes the tables it tests on",
}
# The sort keys and key ranges depend on a row's values alone: they know no table, file, plan or task.
SORT_KEYS = ("sort.curves", "sort.curve_bits", "sort.curve_values", "sort.key_ranges", "sort.spill")
# The only upward imports, each for a stated reason (none left: config learns the plugins' keys through
# config.strategy_params, where plugins.py adds its loader).
EXCEPTIONS: dict[tuple[str, str], str] = {}
# The hook contract names the objects hooks receive, from every layer, for type checkers only.
TYPE_ONLY_SEAMS = ("hookspecs", "protocols")
# Within table/: the modules the view is built on import neither the view nor the HudiTable facade.
BELOW_VIEW = ("table.naming", "table.timeline", "table.properties", "table.archive", "table.ownership",
              "table.metadata_table", "table.markers", "table.lock_provider", "table.storage_lock", "table.listing",
              "mdt.partition_reader", "mdt.files_listing")  # fmt: skip


MODULES = modules_of(ROOT)


def _imports(name: str, path: Path) -> set[str]:
    """Core modules ``name`` imports (relative to the package; ``""`` is the package itself)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = [p for p in package if p]
    found = set()
    tree = ast.parse(path.read_text(), str(path))
    type_only = set()
    if name in TYPE_ONLY_SEAMS:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                type_only.update(id(child) for child in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                targets = [".".join([PACKAGE, *base, node.module])]
            else:  # from . import x: x is a module or a name of the package
                targets = [".".join([PACKAGE, *base, a.name]) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            targets = [node.module or ""]
        else:
            continue
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                relative = target[len(PACKAGE) + 1 :]
                while relative and relative not in MODULES:  # a name imported from a package
                    relative = relative.rpartition(".")[0]
                found.add(relative)
    return found


def rank(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), -1, -1):
        key = ".".join(parts[:n])
        if key in RANKS:
            return RANKS[key]
    raise AssertionError(f"{PACKAGE}.{module} has no layer in tests/test_layering.py: add it to RANKS")


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_the_graph_is_read():
    assert "table.schema" in GRAPH["plan.schedule"] and "run.commit" in GRAPH["run.execute"]
    assert "write.base_file" in GRAPH["run.task"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module):
    upward = sorted(t for t in GRAPH[module] if rank(t) > rank(module) and (module, t) not in EXCEPTIONS)
    assert not upward, f"{PACKAGE}.{module} (layer {rank(module)}) imports higher layers: {upward}"


def test_the_clustering_never_imports_the_writers():
    found = sorted((m, t) for m, targets in GRAPH.items() for t in targets
                   if t.split(".")[0] == "writer" and m.split(".")[0] not in ("writer", *WRITER_USERS))  # fmt: skip
    assert not found, f"the clustering imports our writers: {found}"
    assert "writer.append" in GRAPH["demo"] and "writer.instant" in GRAPH["writer.upsert"]  # the check reads them


def test_sort_keys_depend_on_values_alone():
    for module in SORT_KEYS:
        beyond = sorted(t for t in GRAPH[module] if rank(t) != FOUNDATION and not t.startswith("sort."))
        assert not beyond, f"{module} imports {beyond}"


def test_plan_and_write_are_independent():
    crossing = [(m, t) for m, targets in GRAPH.items() for t in targets
                if {m.split(".")[0], t.split(".")[0]} == {"plan", "write"}]  # fmt: skip
    assert not crossing


def test_table_modules_below_the_view_do_not_import_it():
    for module in BELOW_VIEW:
        assert not GRAPH[module] & {"table", "table.view"}, f"{module} imports the view or the HudiTable facade"


def test_nothing_but_the_driver_imports_the_driver_or_the_commit():
    for module, targets in GRAPH.items():
        if "run.execute" in targets:
            assert rank(module) >= DRIVER, module
        if "run.commit" in targets:
            assert rank(module) >= COMMIT, module


def test_removed_pass_throughs_stay_removed():
    assert "run.sorting" not in MODULES and "io.base_file" not in MODULES
    # issue 21: configuration lives in config/ (one catalogue), not in keys / config_keys / params beside it
    assert not {"keys", "config_keys", "params"} & set(MODULES)
    # issue 21: the sort engine lives in sort/, the hashes in hashing/, our writers in writer/, not where they were
    moved = {"io.curves", "io.curve_bits", "io.curve_values", "run.ranges", "run.outofcore", "run.spill", "io.bloom",
             "io.row_hash", "ingest", *(f"write.{m}" for m in ("upsert", "bucket_upsert", "append", "workload",
                                                                "bloom_index", "instant"))}  # fmt: skip
    assert not moved & set(MODULES)


# Issue 20: only the storage backends and the scheme table name a store; everything else asks ``Storage`` (its
# capabilities, ``same_store``, ``qualified``...). A string naming a scheme (``s3a://``, ``"file"``, ``file:``) or a
# store's own keys (``fs.s3a.*``, ``hoodie.aws.*``, ``AWS_*``) anywhere else is a scheme check in disguise.
SCHEME_HOMES = ("io.registry", "io.local_store", "io.s3_store", "io.s3_settings", "io.s3_credentials", "io.gcs_store",
                "io.gcs_settings", "io.gcs_credentials", "io.azure_store", "io.azure_settings")  # fmt: skip
_SCHEMES = r"s3[an]?|gs|gcs|file|hdfs|viewfs|abfss?|wasbs?|adls?|az|oss|cosn?"
SCHEME_LITERAL = re.compile(rf"(?i)(?<![\w.-])({_SCHEMES}):(/|$)|fs\.s3a\.|hoodie\.aws\.|\bAWS_[A-Z]")
SCHEME_NAME = re.compile(rf"(?i)({_SCHEMES})")


def _string_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant but docstrings (which document, not decide), with its line."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]  # fmt: skip


def scheme_literals(module: str) -> list[str]:
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    return [f"{PACKAGE}.{module}:{line}: {text!r}" for line, text in _string_literals(tree)
            if SCHEME_LITERAL.search(text) or SCHEME_NAME.fullmatch(text)]  # fmt: skip


def test_the_scheme_check_finds_scheme_literals():
    found = [text for _, text in _string_literals(ast.parse('"""s3:// here is fine"""\nx = "s3a://b"\ny = x == "file"\n'))]
    assert found == ["s3a://b", "file"]
    assert SCHEME_LITERAL.search("fs.s3a.endpoint") and SCHEME_LITERAL.search("AWS_REGION")
    assert SCHEME_LITERAL.search("-Dx=file:") and SCHEME_LITERAL.search("gs://b")
    assert not SCHEME_LITERAL.search("hoodie.file.index") and not SCHEME_LITERAL.search("a log file: corrupt")


def test_no_module_outside_the_storage_backends_names_a_scheme():
    found = [hit for module in sorted(MODULES) if module not in SCHEME_HOMES for hit in scheme_literals(module)]
    assert found == [], "scheme checks outside io/ backends:\n" + "\n".join(found)


def test_storage_backends_are_only_reached_through_the_seam():
    """Above ``io/`` nothing imports a backend: the registry picks it (by name, on first use), ``io.storage``
    holds it; the interface (``io.store``) knows neither the facade, the table nor any backend."""
    backends = {"io.local_store", "io.s3_store", "io.s3_settings", "io.s3_credentials", "io.obstore_fs", "io.backend_fs",
                "io.bucket_store", "io.store_settings", *SCHEME_HOMES[5:]}  # fmt: skip
    for module, targets in GRAPH.items():
        if not module.startswith("io."):
            assert not targets & backends, f"{module} imports a storage backend: {sorted(targets & backends)}"
    assert not GRAPH["io.storage"] & backends, GRAPH["io.storage"]
    assert not GRAPH["io.store"] & (backends | {"io.storage", "io.registry"}), GRAPH["io.store"]


def test_parameters_flow_by_name():
    """Issue 21: a call passes its parameters on by name, never as ``dict(locals())`` (which hides the flow from a
    reader and from tools following a parameter from the public call)."""
    calls = [(name, node.lineno) for name, path in MODULES.items() for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "locals"]  # fmt: skip
    assert not calls


# Issue 21: the SDK is the only door. A bundled plugin's package imports nothing of the core but
# ``hudi_cluster_core.sdk`` (its tests may reach further).
PLUGIN_PACKAGES = sorted(init.parent for d in ("plugins", "contrib")
                         for init in (REPO / d).glob("*/hudi_cluster_*/__init__.py"))


def core_imports(path: Path) -> list[str]:
    """``hudi_cluster_core...`` modules a plugin's file imports (from inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == PACKAGE:
            found += [node.module] if node.module != PACKAGE else [f"{PACKAGE}.{a.name}" for a in node.names]
    return found


def test_the_plugin_import_check_reads_imports():
    assert len(PLUGIN_PACKAGES) >= 8
    assert core_imports(ROOT / "sdk.py") == [] and "hudi_cluster_core.sdk" in core_imports(PLUGIN_PACKAGES[0] / "__init__.py")


@pytest.mark.parametrize("package", PLUGIN_PACKAGES, ids=lambda p: p.parent.name)
def test_bundled_plugins_import_only_the_sdk(package):
    beyond = sorted({f"{path.relative_to(REPO)}: {module}" for path in package.rglob("*.py")
                     for module in core_imports(path) if module != f"{PACKAGE}.sdk"})  # fmt: skip
    assert beyond == [], "plugins import the core through hudi_cluster_core.sdk only; extend the SDK instead:\n" + "\n".join(beyond)
