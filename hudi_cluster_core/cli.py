"""The ``hudi-cluster`` command line. Errors caused by input exit 2 with one line, no stack trace."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from .errors import HudiClusterError
from .failpoints import arm_driver


def _add_run(sub) -> None:
    run = sub.add_parser("run", help="schedule and/or execute clustering (flags of Hudi's HoodieClusteringJob)")
    run.add_argument("--base-path", required=True)
    run.add_argument("--mode", default="scheduleAndExecute", choices=["schedule", "execute", "scheduleAndExecute"])
    run.add_argument("--instant-time")
    run.add_argument("--props", help="a Hudi properties file (e.g. clusteringjob.properties)")
    run.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    run.add_argument("--parallelism", type=int)
    run.add_argument("--spark-master")
    run.add_argument("--spark-memory", help="accepted for HoodieClusteringJob compatibility; set memory via spark-submit")
    run.add_argument("--retry", type=int, default=0, help="accepted for HoodieClusteringJob compatibility")
    run.add_argument("--table-name", help="accepted for HoodieClusteringJob compatibility")
    run.add_argument("--retry-last-failed-clustering-job", action="store_true")
    run.add_argument("--job-max-processing-time-ms", type=int, default=0)
    run.add_argument("--dry-run", action="store_true", help="print the plan and its effect; write nothing")
    run.add_argument("--json", action="store_true")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hudi-cluster", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="a table's file groups and table services")
    show.add_argument("base_path")
    show.add_argument("--json", action="store_true")
    plugins = sub.add_parser("plugins", help="installed strategy plugins and the hooks they implement")
    plugins.add_argument("--json", action="store_true")
    _add_run(sub)
    append = sub.add_parser("append", help="append a parquet file's rows to a COW table as new file groups (one commit)")
    append.add_argument("--base-path", required=True)
    append.add_argument("--input", required=True, help="a parquet file of rows to insert")
    append.add_argument("--table-name")
    append.add_argument("--record-key", default=None)
    append.add_argument("--partition-field", default=None)
    append.add_argument("--precombine-field", default=None)
    append.add_argument("--table-version", type=int, default=9, choices=[6, 9])
    append.add_argument("--json", action="store_true")
    demo = sub.add_parser("demo", help="write a table of many small commits, cluster it, check the rows")
    demo.add_argument("--base-path", default="demo-table")
    demo.add_argument("--table-version", type=int, default=9, choices=[6, 9])
    demo.add_argument("--batches", type=int, default=40)
    demo.add_argument("--rows-per-batch", type=int, default=2500)
    return parser


def _cmd_show(args) -> int:
    from .show import table_layout, table_summary
    from .table import load_table

    table = load_table(args.base_path)
    print(json.dumps(table_layout(table), indent=2) if args.json else table_summary(table))
    return 0


def _cmd_plugins(args) -> int:
    from .plugins import default_registry

    infos = default_registry().infos()
    if args.json:
        by_dist: dict[str, dict] = {}
        for info in infos:
            entry = by_dist.setdefault(info.distribution, {"distribution": info.distribution, "version": info.version, "strategies": []})
            entry["strategies"].append(info.to_json())
        print(json.dumps(list(by_dist.values()), indent=2))
        return 0
    if not infos:
        print("no strategy plugins installed (pip install plugins/size-based)")
    current = None
    for info in infos:
        if info.distribution != current:
            current = info.distribution
            print(f"{info.distribution} {info.version}")
        print(f"  {info.kind:<10} {info.name:<28} hooks: {', '.join(info.hooks)}")
        for alias in info.java_class_names:
            print(f"  {'':<10} {'':<28} alias: {alias}")
    return 0


def _cmd_run(args) -> int:
    from .api import cluster

    result = cluster(
        args.base_path, args.mode, instant_time=args.instant_time, props_file=args.props,
        hoodie_conf=args.hoodie_conf, parallelism=args.parallelism, spark_master=args.spark_master,
        retry_last_failed_clustering_job=args.retry_last_failed_clustering_job,
        job_max_processing_time_ms=args.job_max_processing_time_ms, dry_run=args.dry_run,
    )  # fmt: skip
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        from .show import human_size

        print(f"{result.mode}: {result.message}" + (f" (instant {result.instant_time})" if result.instant_time else ""))
        for effect in result.partitions:
            print(f"  {effect.partition or '(none)':<30} files {effect.files_before} -> {effect.files_after}, "
                  f"rewrites {human_size(effect.bytes_to_rewrite)}")  # fmt: skip
        if result.groups:
            print(f"  total: {result.input_file_groups} file group(s) -> {result.output_files} file(s), "
                  f"{human_size(result.bytes_rewritten)}")  # fmt: skip
    return 0


def _cmd_append(args) -> int:
    from .write.append import append_file

    result = append_file(
        args.base_path, args.input, table_name=args.table_name, record_key=args.record_key,
        partition_field=args.partition_field, precombine_field=args.precombine_field, table_version=args.table_version,
    )  # fmt: skip
    print(json.dumps(result, indent=2) if args.json else f"committed {result['instant_time']}: {result['files']} file(s)")
    return 0


def _cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(args.base_path, table_version=args.table_version, batches=args.batches, rows_per_batch=args.rows_per_batch)


COMMANDS = {"show": _cmd_show, "plugins": _cmd_plugins, "run": _cmd_run, "append": _cmd_append, "demo": _cmd_demo}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )  # fmt: skip
    logging.getLogger("py4j").setLevel(logging.WARNING)
    arm_driver()
    try:
        return COMMANDS[args.command](args)
    except HudiClusterError as exc:
        print(f"hudi-cluster: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `hudi-cluster plugins --json | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
