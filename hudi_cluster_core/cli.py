"""The ``hudi-cluster`` command line. Errors caused by input exit 2 with one line, no stack trace."""

from __future__ import annotations

from . import process_phases  # first: the moment the command's own code begins (--json's phases_s)

import argparse
import errno
import json
import logging
import signal
import sys
from typing import TYPE_CHECKING

from . import interrupts
from .errors import ConfigError, HudiClusterError
from .failpoints import arm_driver
from .io import registry
from .io.store import StoreError

process_phases.mark("imported")

if TYPE_CHECKING:
    from .api import Mode


# HoodieClusteringJob's modes, matched case-insensitively as it does (``toLowerCase()``); values are what api.cluster takes
RUN_MODES: dict[str, Mode] = {
    "schedule": "schedule", "execute": "execute", "scheduleandexecute": "scheduleAndExecute",
    "purge_pending_instant": "purge_pending_instant",
}  # fmt: skip
# flags HoodieClusteringJob has that mean nothing here: accepted so its command lines work, with a warning each
IGNORED_RUN_FLAGS = {
    "retry": "--retry is accepted for HoodieClusteringJob compatibility and ignored; re-run a failed clustering with "
             "--retry-last-failed-clustering-job",
    "table_name": "--table-name is accepted for HoodieClusteringJob compatibility and ignored; "
                  "the table's name is read from its hoodie.properties",
}  # fmt: skip


def _add_run(sub) -> None:
    """HoodieClusteringJob's flags, with its short forms (``-sp``, ``-m``...: one dash, several letters)."""
    run = sub.add_parser("run", help="schedule and/or execute clustering (flags of Hudi's HoodieClusteringJob)")
    run.add_argument("-sp", "--base-path", required=True)
    run.add_argument("-m", "--mode", help="schedule | execute | scheduleAndExecute | purge_pending_instant (any case); "
                                          "default: schedule with --schedule, else execute")  # fmt: skip
    run.add_argument("-sc", "--schedule", action="store_true", help="without --mode: schedule (HoodieClusteringJob's old flag)")
    run.add_argument("-it", "--instant-time")
    run.add_argument("--props", help="a Hudi properties file (e.g. clusteringjob.properties); local, or on a "
                                          f"store ({registry.supported()})")  # fmt: skip
    run.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    run.add_argument("-pl", "--parallelism", type=int,
                     help="groups run at once (Spark tasks); spark.default.parallelism of a session this run builds")
    run.add_argument("-ms", "--spark-master")
    run.add_argument("-sm", "--spark-memory", help="spark.executor.memory (with a local master: spark.driver.memory)")
    run.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                     help="a Spark setting for the session this run builds (spark.archives=env.tar.gz#env, ...)")
    run.add_argument("--engine", choices=("auto", "local", "spark"), type=str.lower,
                     help="where the groups' tasks run: local (this machine's processes, no JVM), spark, or auto "
                          "(default, else HUDI_CLUSTER_ENGINE): local for a local master with no Spark setting")  # fmt: skip
    run.add_argument("-rt", "--retry", type=int, help="accepted for HoodieClusteringJob compatibility, ignored")
    run.add_argument("-tn", "--table-name", help="accepted for HoodieClusteringJob compatibility, ignored")
    run.add_argument("-rc", "--retry-last-failed-clustering-job", action="store_true")
    run.add_argument("-jt", "--job-max-processing-time-ms", type=int, default=0)
    run.add_argument("--dry-run", action="store_true", help="print the plan and its effect; write nothing")
    run.add_argument("--keep-failed-plan", action="store_true",
                     help="if the run fails, keep its plan pending for --retry-last-failed-clustering-job "
                          "(default: roll it back, so it blocks no writer)")  # fmt: skip
    run.add_argument("--json", action="store_true")
    run.add_argument("--continuous", action="store_true",
                     help="run as a service beside ingestion: cluster after every hoodie.clustering.async.max.commits "
                          "writes, until SIGTERM")  # fmt: skip
    run.add_argument("--min-sync-interval-seconds", type=float, default=30.0,
                     help="with --continuous: seconds between looks at the timeline (default 30)")


def run_mode(mode: str | None, schedule_flag: bool) -> Mode:
    """The api.cluster mode for ``--mode``/``--schedule``, as HoodieClusteringJob resolves them."""
    if mode is None:
        return "schedule" if schedule_flag else "execute"
    canonical = RUN_MODES.get(mode.lower())
    if canonical is None:
        accepted = ", ".join(dict.fromkeys(RUN_MODES.values()))
        raise ConfigError(f"--mode {mode!r}: accepted (any case): {accepted}")
    return canonical


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hudi-cluster", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="a table's file groups and table services")
    show.add_argument("base_path")
    show.add_argument("--json", action="store_true")
    show.add_argument("--archived", action="store_true", help="also list completed clustering from the archived timeline")
    show.add_argument("--clustering", action="store_true",
                      help="list every clustering instant (its state, groups, partitions and bytes), archived ones too")
    show.add_argument("--props", help="a Hudi properties file; only its storage settings matter here")
    show.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                      help="a storage setting: Hadoop's key for the store, e.g. its endpoint "
                           "(README: Object stores); repeatable")  # fmt: skip
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
    append.add_argument("--props", help="a Hudi properties file (hoodie.metadata.*, hoodie.clustering.inline, ...)")
    append.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Hudi key, e.g. hoodie.clustering.inline=true; repeatable")
    append.add_argument("--spark-master", default=None, help="Spark master of an inline clustering (default local[*])")
    append.add_argument("--json", action="store_true")
    upsert = sub.add_parser("upsert", help="upsert a parquet file's rows into a COW table (BLOOM index, one commit), "
                                           "then inline clustering when configured")  # fmt: skip
    upsert.add_argument("--base-path", required=True)
    upsert.add_argument("--input", required=True, help="a parquet file of rows to upsert")
    upsert.add_argument("--props", help="a Hudi properties file")
    upsert.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Hudi key (hoodie.parquet.small.file.limit, hoodie.clustering.inline, ...); repeatable")
    upsert.add_argument("--spark-master", default=None, help="Spark master of the session this builds (default local[*])")
    upsert.add_argument("--json", action="store_true")
    report = sub.add_parser("report", help="how a table's files overlap per partition and column, from footers or "
                                           "the metadata table's column stats (no data pages read)")  # fmt: skip
    report.add_argument("base_path")
    report.add_argument("--columns", help="comma-separated columns (default: every top-level data column)")
    report.add_argument("--json", action="store_true", help="print the figures as JSON (docs/layout-report.md)")
    report.add_argument("--plot", metavar="DIR", help="write PNG charts into DIR (needs matplotlib)")
    report.add_argument("--source", choices=["auto", "footers", "metadata"], default="auto",
                        help="where the ranges come from (default: the metadata table's column stats when the table "
                             "has them, else the footers)")  # fmt: skip
    report.add_argument("--before", metavar="INSTANT", help="also the layout as of this completed instant, as before")
    report.add_argument("--compare", metavar="BASE_PATH", help="another table (e.g. the same after clustering), as after")
    report.add_argument("--props", help="a Hudi properties file; only its storage settings matter here")
    report.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a storage setting (README: Object stores); repeatable")  # fmt: skip
    demo = sub.add_parser("demo", help="write a table of many small commits, cluster it, check the rows")
    demo.add_argument("--base-path", default="demo-table")
    demo.add_argument("--table-version", type=int, default=9, choices=[6, 9])
    demo.add_argument("--batches", type=int, default=40)
    demo.add_argument("--rows-per-batch", type=int, default=2500)
    return parser


def _cmd_show(args) -> int:
    from .show import table_layout, table_summary
    from .table import load_table
    from .table.checks import check_timeline

    table = load_table(args.base_path, _storage_keys(args))
    check_timeline(table)
    archived = args.archived
    if args.clustering:
        from .show import clustering_instants, clustering_summary

        print(json.dumps(clustering_instants(table), indent=2) if args.json else clustering_summary(table))
        return 0
    print(json.dumps(table_layout(table, archived=archived), indent=2) if args.json else table_summary(table, archived=archived))
    return 0


def _storage_keys(args) -> dict[str, str]:
    """The job's keys as ``run`` merges them: the store's settings are among them."""
    from . import plugins  # noqa: F401 - config knows the keys of the installed plugins' params models through it
    from .config import load_config

    return dict(load_config(args.props, args.hoodie_conf).raw)


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
        for key in info.keys:
            default = "required" if key["required"] else f"default {_shown(key['default'])}"
            print(f"  {'':<10} {'':<28} key: {key['key']} ({key['type']}, {default}){': ' if key['description'] else ''}"
                  f"{key['description']}")  # fmt: skip
    return 0


def _shown(value) -> str:
    """A default as a properties file spells it."""
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _cmd_run(args) -> int:
    if args.continuous:
        return _run_continuous(args)
    mode = run_mode(args.mode, args.schedule)
    starting, local = None, None
    if mode in ("execute", "scheduleAndExecute") and not args.dry_run:
        from .run.local_pool import local_cores
        from .run.session_start import start_in_background

        try:
            local = local_cores(args.engine, args.spark_master, args.spark_memory, args.spark_conf)
        except ConfigError:  # said by the run, in its usual order
            local = None
        # the JVM starts while the run's modules are imported, the table is checked and the plan is made; a local
        # run's process server starts as the run starts, before the table's checks (_run_once)
        if local is None:
            starting = start_in_background(args.spark_master, args.spark_memory, args.parallelism, args.spark_conf)
    try:
        return _run_once(args, mode, local)
    finally:
        if starting is not None:  # a run that never took it (an error first): ended as the process ends (entry)
            starting.close()


def _run_once(args, mode: Mode, local_cores: int | None = None) -> int:
    """One run; ``local_cores``: a local run's cores (``run.local_pool``), whose process server starts as soon as
    the run starts, so its imports overlap the run's own imports, the table's checks and the planning (a run
    refused up front leaves it as it exits: it ends with its driver)."""
    if local_cores is not None:
        from .run.local_pool import LocalPool

        LocalPool(local_cores).begin()  # once per process: cluster()'s own pool finds it running
    from .table import load_table
    from .table.checks import check_timeline, check_writable

    process_phases.mark("ready")
    for flag, warning in IGNORED_RUN_FLAGS.items():
        if getattr(args, flag) is not None:
            print(f"hudi-cluster: warning: {warning}", file=sys.stderr)
    table = load_table(args.base_path, _storage_keys(args))
    # a plan being purged may be the unreadable file: purging must not depend on decoding it
    check_timeline(table, plans=mode != "purge_pending_instant")
    if not args.dry_run:
        check_writable(table)
    from .api import cluster

    result = cluster(
        args.base_path, mode, instant_time=args.instant_time, props_file=args.props,
        hoodie_conf=args.hoodie_conf, parallelism=args.parallelism, spark_master=args.spark_master,
        spark_memory=args.spark_memory, spark_conf=args.spark_conf,
        retry_last_failed_clustering_job=args.retry_last_failed_clustering_job,
        job_max_processing_time_ms=args.job_max_processing_time_ms, dry_run=args.dry_run,
        keep_failed_plan=args.keep_failed_plan, spark_in_background=True, engine=args.engine,
    )  # fmt: skip
    print(result.to_json() if args.json else result.summary())
    return 0


def _run_continuous(args) -> int:
    from .api import cluster
    from .config import load_config
    from .errors import Interrupted
    from .service import run_continuous
    from .table import load_table
    from .table.checks import check_timeline, check_writable

    if args.mode is not None and run_mode(args.mode, False) != "scheduleAndExecute" or args.schedule:
        raise ConfigError("--continuous schedules and executes; accepted with it: --mode scheduleAndExecute or no --mode")
    for flag in ("instant_time", "dry_run", "json"):
        if getattr(args, flag):
            raise ConfigError(f"--{flag.replace('_', '-')} can't be used with --continuous")
    if args.min_sync_interval_seconds < 0:
        raise ConfigError(f"--min-sync-interval-seconds {args.min_sync_interval_seconds:g}: accepted: 0 or more")
    config = load_config(args.props, list(args.hoodie_conf), {})
    table = load_table(args.base_path, _storage_keys(args))
    check_timeline(table)
    check_writable(table)

    def run_once():
        return cluster(
            args.base_path, "scheduleAndExecute", props_file=args.props, hoodie_conf=args.hoodie_conf,
            parallelism=args.parallelism, spark_master=args.spark_master,
            retry_last_failed_clustering_job=args.retry_last_failed_clustering_job,
            job_max_processing_time_ms=args.job_max_processing_time_ms, keep_failed_plan=args.keep_failed_plan,
            engine=args.engine,
        )  # fmt: skip

    try:
        stats = run_continuous(args.base_path, run_once=run_once, max_commits=config.async_max_commits,
                               min_sync_interval_s=args.min_sync_interval_seconds, say=_say,
                               open_table=lambda: load_table(args.base_path, _storage_keys(args)))  # fmt: skip
    except (Interrupted, KeyboardInterrupt) as stopped:
        if interrupts.first_signal() != signal.SIGTERM:
            raise
        _say(f"continuous: stopped by SIGTERM{': ' + str(stopped) if isinstance(stopped, Interrupted) else ''}")
        return 0
    _say(f"continuous: done after {stats.cycles} cycle(s), {stats.clusterings} clustering(s)")
    return 0


def _say(line: str) -> None:
    print(line, flush=True)


def _cmd_append(args) -> int:
    from .writer.ingest import append_file

    result = append_file(
        args.base_path, args.input, props_file=args.props, hoodie_conf=args.hoodie_conf, spark_master=args.spark_master,
        table_name=args.table_name, record_key=args.record_key, partition_field=args.partition_field,
        precombine_field=args.precombine_field, table_version=args.table_version,
    )  # fmt: skip
    print(json.dumps(result, indent=2) if args.json else f"committed {result['instant_time']}: {result['files']} file(s)")
    if not args.json and result.get("clustering"):
        print(_inline_line(result["clustering"]))
    return 0


def _inline_line(clustering: dict) -> str:
    return f"inline clustering ({clustering['mode']}): {clustering['instant_time'] or clustering['message']}"


def _cmd_upsert(args) -> int:
    from .writer.ingest import upsert_file

    result = upsert_file(args.base_path, args.input, props_file=args.props, hoodie_conf=args.hoodie_conf,
                         spark_master=args.spark_master)  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"committed {result['instant_time']}: {result['updates']} update(s), {result['inserts']} insert(s); "
          f"{result['files_rewritten']} file(s) rewritten, {result['files_created']} new")  # fmt: skip
    if result.get("clustering"):
        print(_inline_line(result["clustering"]))
    return 0


def _cmd_report(args) -> int:
    from .report.command import run_report

    return run_report(args, _storage_keys(args))


def _cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(args.base_path, table_version=args.table_version, batches=args.batches, rows_per_batch=args.rows_per_batch)


COMMANDS = {"show": _cmd_show, "plugins": _cmd_plugins, "run": _cmd_run, "append": _cmd_append, "upsert": _cmd_upsert,
            "demo": _cmd_demo, "report": _cmd_report}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    previous = interrupts.install()  # first: a Ctrl-C or SIGTERM from here on ends in one line
    interrupts.reset()
    process_phases.mark("command")
    try:
        args = build_parser().parse_args(argv)
        _configure_logging(args.verbose)
        arm_driver()
        return COMMANDS[args.command](args)
    except HudiClusterError as exc:
        print(f"hudi-cluster: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # before or after a run owned an instant: nothing of ours is pending
        print("hudi-cluster: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `hudi-cluster plugins --json | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0
    except OSError as exc:  # after BrokenPipeError, which is one too
        if isinstance(exc, StoreError):  # the store failed after the table was opened: say it in one line
            print(f"hudi-cluster: error: {' '.join(str(exc).split())[:500]}", file=sys.stderr)
            return HudiClusterError.exit_code
        if not _is_permission_problem(exc):
            raise
        # a file the up-front checks could not foresee (a partition directory, another scheme's store)
        reason = " ".join(str(exc).split())
        print(f"hudi-cluster: error: {reason} (run as a user who may read and write these files)", file=sys.stderr)
        return HudiClusterError.exit_code
    finally:
        interrupts.restore(previous)
        process_phases.clear()


def entry() -> None:
    """The ``hudi-cluster`` command: :func:`main`, then an exit that no late signal turns into a traceback."""
    code = main()
    interrupts.ignore()  # Spark's and Python's exit hooks run next; the outcome is already decided and said
    from .run.session_start import detach_jvm_output, end_unused_launches

    end_unused_launches()  # a JVM still launching for a run that never took it: ended, not waited for
    if code == 0:
        detach_jvm_output()  # its shutdown, after this process's exit, no longer holds a reader of our output
    from .process_exit import exit_now

    exit_now(code)  # without the interpreter's teardown (a few tenths of a second), once everything is said


def _configure_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)  # fmt: skip
    if not verbose:
        for handler in logging.getLogger().handlers:
            handler.addFilter(_quiet_py4j)
    logging.getLogger("py4j").setLevel(logging.CRITICAL)  # a cancelled job's Py4J noise; we say it in one line
    logging.getLogger("botocore").setLevel(logging.WARNING)  # its credential chain's chatter: we log the source


def _quiet_py4j(record: logging.LogRecord) -> bool:
    """Py4J logs "Exception while sending command" with a traceback on the root logger (at INFO or ERROR) when the
    JVM goes away, as it does of the same Ctrl-C or SIGTERM as ours: the run says what happened in one line."""
    return "py4j" not in record.pathname


def _is_permission_problem(exc: OSError) -> bool:
    return isinstance(exc, PermissionError) or exc.errno == errno.EROFS


if __name__ == "__main__":
    entry()
