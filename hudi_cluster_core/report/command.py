"""The ``report`` subcommand: arguments checked, reports built, printed and charted."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping

from ..errors import ConfigError
from ..table import load_table
from ..table.checks import check_timeline
from .layout_report import build_report, report_text


def _columns(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise ConfigError(f"--columns {value!r}: expected comma-separated column names, e.g. --columns a,b")
    return names


def run_report(args: argparse.Namespace, storage_keys: Mapping[str, str] | None = None) -> int:
    """``storage_keys``: the store's settings (an object store's endpoint, credentials), for both tables."""
    columns = _columns(args.columns)
    if args.plot:
        from .plots import require_matplotlib

        require_matplotlib()  # before any work: a missing library is said first, in one line
    table = load_table(args.base_path, storage_keys)
    check_timeline(table)
    report = build_report(table, columns, args.source)
    before = None
    if args.before:
        if args.compare:
            raise ConfigError("--before and --compare: give one of them (an instant of this table, or another table)")
        if args.before not in {i.time for i in table.timeline.completed()}:
            raise ConfigError(f"--before {args.before}: not a completed instant of the table's active timeline")
        before = build_report(table, columns, args.source, as_of=args.before)
    after = report
    if args.compare:
        other = load_table(args.compare, storage_keys)
        check_timeline(other)
        before, after = report, build_report(other, columns, args.source)
    print(json.dumps(report.to_json(), indent=2) if args.json else report_text(after, before))
    if args.plot:
        from .plots import write_charts

        for chart in write_charts(after, before, args.plot):
            if not args.json:
                print(f"wrote {chart.path} ({chart.width}x{chart.height})")
    return 0
