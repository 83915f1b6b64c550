"""Every citation of the format reference resolves: ``docs/format.md#<section>`` names a file and a section that exist.

The code cites the on-disk facts it relies on as ``docs/<file>.md#<anchor>`` (several sections of one file as
``docs/format.md#a, #b``). Anchors are GitHub's: the heading in lower case, punctuation dropped, spaces as ``-``,
a repeated heading numbered ``-1``, ``-2``. A citation in code must name a section of the format reference, and the old citations of notes
kept outside the repository ("format notes 14.1") must not come back.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CODE_DIRS = ("hudi_cluster_core", "plugins", "tests", "contrib", "bench", "scripts", "bin")
THIS_FILE = Path(__file__).resolve()
FORMAT_DOC = REPO / "docs" / "format.md"

CITATION = re.compile(r"docs/((?:[\w-]+/)*[\w.-]+\.md)((?:#[\w-]+)(?:(?:\s*,\s*|\s+and\s+)#[\w-]+)*)?")
ANCHOR = re.compile(r"#([\w-]+)")
# Built from pieces, so that this file does not match itself.
STALE = re.compile(r"\bformat" + r"\s+(?:notes|doc)\b|hudi-" + r"format\b", re.I)
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")


def code_files() -> list[Path]:
    files = []
    for top in CODE_DIRS:
        for path in sorted((REPO / top).rglob("*")):
            parts = path.relative_to(REPO).parts
            if path.is_file() and path.resolve() != THIS_FILE and path.suffix in {".py", ".sh", ""} \
                    and "fixtures" not in parts \
                    and not any(p.startswith(".") or p in {"__pycache__", "build", "out"} for p in parts):
                files.append(path)
    return files


def github_slug(heading: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def anchors_of(doc: Path) -> frozenset[str]:
    anchors, seen, fenced = set(), {}, False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        anchors.update(EXPLICIT_ANCHOR.findall(line))
        if match := HEADING.match(line):
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(anchors)


def citations(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, cited file under docs/, anchors) for every citation in ``text``."""
    found = []
    for match in CITATION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, match.group(1), ANCHOR.findall(match.group(2) or "")))
    return found


def citation_problems(name: str, text: str, *, anchor_required: bool) -> list[str]:
    problems = []
    for line, cited, anchors in citations(text):
        doc = REPO / "docs" / cited
        if not doc.is_file():
            problems.append(f"{name}:{line}: docs/{cited} does not exist")
            continue
        if not anchors and anchor_required and doc == FORMAT_DOC:
            problems.append(f"{name}:{line}: docs/{cited} cited without a section (#anchor)")
        problems += [f"{name}:{line}: docs/{cited} has no section #{anchor} (sections: see its headings)"
                     for anchor in anchors if anchor not in anchors_of(doc)]  # fmt: skip
    for number, line in enumerate(text.splitlines(), start=1):
        if STALE.search(line):
            problems.append(f"{name}:{number}: a citation of notes outside the repository; cite docs/format.md#...: "
                            f"{line.strip()}")  # fmt: skip
    return problems


def test_every_citation_in_the_code_resolves():
    problems, cited = [], 0
    for path in code_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        cited += len(citations(text))
        problems += citation_problems(str(path.relative_to(REPO)), text, anchor_required=True)
    assert not problems, "citations that do not resolve:\n" + "\n".join(problems)
    assert cited >= 40, f"only {cited} citations of docs/ found: has the citation form changed?"


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md", "docs/format.md", "tests/fixtures/README.md"])
def test_citations_in_the_docs_resolve(doc):
    path = REPO / doc
    assert not citation_problems(doc, path.read_text(encoding="utf-8"), anchor_required=False)


def test_the_format_reference_links_to_its_own_sections():
    text = FORMAT_DOC.read_text(encoding="utf-8")
    links = re.findall(r"\]\(#([\w-]+)\)", text)
    assert links and not [link for link in links if link not in anchors_of(FORMAT_DOC)]


def test_every_section_names_its_sources():
    """Each section of the reference (a heading with body text) says where its facts come from."""
    sections = re.split(r"^#{2,3} ", FORMAT_DOC.read_text(encoding="utf-8"), flags=re.M)[1:]
    unsourced = [s.splitlines()[0] for s in sections
                 if len(s.strip().splitlines()) > 3 and "Sources:" not in s and not s.startswith("Conventions")]
    assert not unsourced, f"sections without a Sources: line: {unsourced}"


def test_the_tests_the_reference_names_exist():
    named = set(re.findall(r"`((?:tests|plugins)/[\w./-]+\.py)`", FORMAT_DOC.read_text(encoding="utf-8")))
    assert named and not [path for path in named if not (REPO / path).is_file()]


def test_the_check_catches_what_it_is_for():
    good = "Order (docs/format.md#mdt-commit-order, #commit-point-and-atomicity)"
    assert not citation_problems("m.py", good, anchor_required=True)
    assert citation_problems("m.py", "see docs/format.md#no-such-section", anchor_required=True)
    assert citation_problems("m.py", "see docs/format.md#locks, #no-such-section", anchor_required=True)
    assert citation_problems("m.py", "see docs/no-such-file.md#locks", anchor_required=True)
    assert citation_problems("m.py", "see docs/format.md for it", anchor_required=True)
    assert citation_problems("m.py", "(format " + "notes 14.1.4)", anchor_required=True)
    assert github_slug("MDT `files` records") == "mdt-files-records"
    assert github_slug("Commit point and atomicity") == "commit-point-and-atomicity"
