"""The repository stands alone: no file in it reaches outside it.

A clone and the README's two commands must be all it takes, so no tracked file (code, tests, scripts, docs,
Makefile, CI) may name a path outside the checkout: a sibling folder (``../<name>``), a machine's own absolute
folders, or a Python file climbing above the repository root from ``__file__``. The fixture tables the tests read
live in ``tests/fixtures`` (``tests/fixtures/README.md``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent

# Built from pieces, so that this file does not match itself.
_SHARED = "sha" + "red"
OUTSIDE = [
    (re.compile(r"\.\./+" + _SHARED + r"\b"), "a sibling folder of the checkout"),
    (re.compile(_SHARED + r"/fixtures"), "the fixture tables outside the checkout (they are in tests/fixtures)"),
    (re.compile(r"(?<![\w.~-])/" + "wo" + r"rk(?:/|\b)"), "an absolute path of one machine"),
    (re.compile(r"(?<![\w.~-])/(?:ho" + r"me|ro" + r"ot|Us" + r"ers)/\w"), "a home folder of one machine"),
    (re.compile(r"hudi-" + r"format\.md"), "notes kept outside the checkout (the format reference is in the docs folder)"),
]
# Path(__file__)[.resolve()|.absolute()] followed by .parent / .parents[k] steps
PATH_CLIMB = re.compile(r"Path\(__file__\)(?:\.(?:resolve|absolute)\(\))?((?:\.parent(?!s)|\.parents\[\d+\])+)")
# NAME = Path(__file__)...: a folder inside the checkout, then climbed from by name (NAME.parent...)
NAMED_FOLDER = re.compile(r"^\s*(\w+)\s*(?::\s*\w+\s*)?=\s*" + PATH_CLIMB.pattern)
STEPS = r"((?:\.parent(?!s)|\.parents\[\d+\])+)"
# os.path.dirname(... os.path.dirname([os.path.abspath(|realpath(]__file__ ...
DIRNAME_CLIMB = re.compile(r"((?:os\.path\.dirname\(\s*)+)(?:os\.path\.(?:abspath|realpath)\(\s*)?__file__")
IGNORED_DIRS = {".git", ".venv", ".cache", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", "build",
                "dist", "bench/out", "spark-warehouse", "metastore_db", "demo-table"}  # fmt: skip


def repository_files() -> list[str]:
    """Every file git tracks, plus new files not ignored (so a file is checked before its first commit); without
    git (an exported tree), every file outside the ignored folders."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                                capture_output=True, check=True, timeout=60).stdout  # fmt: skip
        return sorted({name for name in listed.decode().split("\0") if name and (REPO / name).is_file()})
    except (OSError, subprocess.CalledProcessError):
        found = []
        for root, dirs, names in os.walk(REPO):
            relative = Path(root).relative_to(REPO).as_posix()
            dirs[:] = [d for d in dirs if d not in IGNORED_DIRS and f"{relative}/{d}".lstrip("./") not in IGNORED_DIRS]
            found += [str(Path(root, name).relative_to(REPO).as_posix()) for name in names]
        return sorted(found)


def text_of(name: str) -> str | None:
    """A file's text, or None for binary data (parquet, Avro, HFile-bearing logs of the fixture tables)."""
    data = (REPO / name).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def climbs(steps: str) -> int:
    return sum(int(k) + 1 for k in re.findall(r"\[(\d+)\]", steps)) + len(re.findall(r"\.parent(?!s)", steps))


def outside_references(name: str, text: str) -> list[str]:
    found = []
    depth = len(PurePosixPath(name).parts)  # climbing more than this many steps from the file leaves the checkout
    folders = {}  # name -> how many steps it may still climb
    if name.endswith(".py"):
        for line in text.splitlines():
            if (match := NAMED_FOLDER.match(line)) and climbs(match.group(2)) <= depth:
                folders[match.group(1)] = depth - climbs(match.group(2))
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern, what in OUTSIDE:
            if pattern.search(line):
                found.append(f"{name}:{number}: {what}: {line.strip()}")
        if name.endswith(".py"):
            for match in PATH_CLIMB.finditer(line):
                if climbs(match.group(1)) > depth:
                    found.append(f"{name}:{number}: climbs above the repository from __file__: {line.strip()}")
            for folder, room in folders.items():
                for match in re.finditer(r"\b" + folder + r"(?:\.resolve\(\))?" + STEPS, line):
                    if climbs(match.group(1)) > room:
                        found.append(f"{name}:{number}: climbs above the repository from {folder}: {line.strip()}")
            for match in DIRNAME_CLIMB.finditer(line):
                if match.group(1).count("dirname(") > depth:
                    found.append(f"{name}:{number}: climbs above the repository from __file__: {line.strip()}")
    return found


def test_no_file_reaches_outside_the_repository():
    files = repository_files()
    assert "README.md" in files and "Makefile" in files and any(f.startswith("tests/fixtures/") for f in files)
    problems = [problem for name in files if (text := text_of(name)) is not None
                for problem in outside_references(name, text)]  # fmt: skip
    assert not problems, "files that reach outside the repository:\n" + "\n".join(problems)


def test_the_check_catches_what_it_is_for():
    file = "__fi" + "le__"  # pieces again: these lines must not flag this file
    lines = {
        "tests/test_x.py": 'FIXTURES = Path(' + file + ').resolve().parents[1].parent / "' + _SHARED + '" / "fixtures"',
        "tests/test_y.py": "FIXTURES = os.environ.get('X', '/" + "work/" + _SHARED + "/fixtures')",
        "hudi_cluster_core/m.py": "# see ../" + _SHARED + "/hudi-" + "format.md section 4",
        "tests/conftest.py": "REPO_ROOT = Path(" + file + ").resolve().parent.parent\nSIBLING = REPO_ROOT.parent / 'x'",
        "tests/support/z.py": "ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(" + file + "))))",
        "Makefile": "\tcp -r /" + "home/someone/tables tests/",
    }
    for name, line in lines.items():
        assert outside_references(name, line), name
    inside = {
        "tests/test_x.py": 'FIXTURES = Path(' + file + ').resolve().parent / "fixtures"',
        "tests/support/z.py": "REPO = Path(" + file + ").resolve().parents[2]\nGUIDE = REPO / 'CONTRIBUTING.md'",
        "tests/test_z.py": "HERE = Path(" + file + ").resolve().parent\nREPO = HERE.parent",
        "bench/common.py": '"""A private copy of ``source`` under ``bench/out/' + 'work/``."""',
        "CONTRIBUTING.md": "scripts/new-strategy my-strategy ../hudi-cluster-my-strategy",
    }
    for name, line in inside.items():
        assert not outside_references(name, line), name


def test_the_fixture_tables_are_in_the_repository():
    fixtures = REPO / "tests" / "fixtures"
    for name in ("README.md", "LICENSE", "NOTICE", "MANIFEST.json"):
        assert (fixtures / name).is_file(), name
    readme = (fixtures / "README.md").read_text(encoding="utf-8")
    assert "Apache License" in readme and "apache/hudi-rs" in readme
