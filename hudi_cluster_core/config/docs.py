"""``docs/configuration.md``, generated from the :mod:`.catalogue`.

``make docs`` (``python -m hudi_cluster_core.config.docs --write``) rewrites the file; without ``--write`` the text
goes to stdout. tests/test_config_docs.py fails while the file differs from what the catalogue generates.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..byte_units import in_iec_units
from .catalogue import SECTIONS, Key

DOCS_FILE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

_INTRO = """\
# Configuration

<!-- Generated from hudi_cluster_core/config/catalogue.py by `make docs`: edit the catalogue, not this file. -->

Every key hudi-cluster reads, with its type, default and the values it accepts. A job takes them as Apache
Hudi's `HoodieClusteringJob` does, lowest precedence first: `hudi-defaults.conf` (in `/etc/hudi/conf`, then in
`$HUDI_CONF_DIR`), the `--props` file, `--hoodie-conf key=value`, then the `options` of `api.cluster()`. An alias
is an older name Hudi also reads; the main name wins when both are set. A bad value stops the run before anything
is written, with one line naming the key, the value and what is accepted (exit code 2). A strategy's own keys
(`hoodie.clustering.plan.strategy.<its name>.*`, see CONTRIBUTING.md) come with the strategy.
"""


def _default(spec: Key) -> str:
    if spec.default is None:
        return "(not set)"
    text = f"`{spec.to_hoodie(spec.default)}`"
    if spec.kind == "bytes" and spec.default >= 1024:
        size, unit = in_iec_units(spec.default)
        text += f" ({size:g} {unit})"  # exact, unlike a run's one decimal: a default is a round figure
    return text


def _row(spec: Key) -> str:
    name = f"`{spec.key}`" + "".join(f"<br>alias `{alias}`" for alias in spec.aliases)
    return f"| {name} | {spec.kind} | {_default(spec)} | {spec.accepted()} | {spec.doc} |"


def markdown() -> str:
    """The whole of ``docs/configuration.md``."""
    parts = [_INTRO]
    for section in SECTIONS:
        rows = "\n".join(_row(spec) for spec in section.entries)
        parts.append(f"## {section.title}\n\n{section.about}\n\n| key | type | default | accepts | meaning |\n"
                     f"| --- | --- | --- | --- | --- |\n{rows}\n")  # fmt: skip
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        DOCS_FILE.write_text(markdown())
        print(f"wrote {DOCS_FILE}")
        return 0
    if argv:
        print("usage: python -m hudi_cluster_core.config.docs [--write]", file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
