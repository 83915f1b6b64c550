"""``bench_execution.py --profile``: where our execution time goes, phase by phase, on the bench's own plan.

Every group of the plan runs one after the other in the benchmark's process (no Spark) through the functions our
task runs, each phase timed; then the same sorted rows are written with other parquet settings (what-ifs); last,
one group runs under cProfile through the strategy's ``execute_group`` hook.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time

import common

SORT_COLUMNS = ("c_int", "ts")


WHAT_IFS = {
    "gzip level 9 (Arrow's gzip default)": {"compression": "gzip", "compression_level": 9},
    "Arrow's gzip level 6, dictionary for every column": {"compression": "gzip", "compression_level": 6},
    "Arrow's gzip level 6, dictionary only where it pays": {"compression": "gzip", "compression_level": 6, "use_dictionary": "auto"},
    "snappy": {"compression": "snappy"},
    "zstd (level 1)": {"compression": "zstd", "compression_level": 1},
    "uncompressed": {"compression": "none"},
}


def profile(bench, args) -> dict:
    """Where our time goes, per phase, summed over every group of the plan, run one group after the other in
    this process (no Spark) through the functions our task runs: ``GroupTask.read_arrow``, ``sort_rows`` (linear,
    and each other layout of ``args.layouts`` timed alone), then the real write path, a ``RollingWriter`` (marker,
    ``_hoodie_file_name`` column, parquet write, bloom filter + key range footer, write stat), whose file-name
    column and footer parts are also timed alone so that the parquet write is the remainder. Then what-ifs: the
    same sorted rows written with other parquet settings (time and size). Last, one group under cProfile through
    the strategy's own ``execute_group`` hook."""
    import pyarrow.parquet as pq

    from hudi_cluster_core.api import cluster
    from hudi_cluster_core.config import load_config
    from hudi_cluster_core.sort.curves import sort_rows
    from hudi_cluster_core.plugins import default_registry
    from hudi_cluster_core.run.execute import build_tasks, load_stored_plan
    from hudi_cluster_core.table import load_table
    from hudi_cluster_core.write import base_file as bf

    copy = common.fresh_copy(bench.source, "profile")
    other_layouts = [layout for layout in args.layouts if layout != "linear"]
    try:
        common.settle(bench.spark)
        started = time.perf_counter()
        scheduled = cluster(str(copy), "schedule", bench.options)
        schedule_s = time.perf_counter() - started
        table = load_table(str(copy))
        plan = load_stored_plan(table, scheduled.instant_time)
        tasks = build_tasks(table, plan, load_config(None, [], dict(bench.options)), default_registry())
        names = ["read (pyarrow, all files of the group)", "sort (sort_rows, linear)", "_hoodie_file_name column",
                 "bloom filter + key range footer", "parquet write (RollingWriter: marker, pages, stat)"]  # fmt: skip
        phases = dict.fromkeys(names, 0.0)
        curve_sorts = {layout: 0.0 for layout in other_layouts}
        what_if = {label: {"seconds": 0.0, "bytes": 0} for label in WHAT_IFS}
        written_bytes, rows = 0, 0
        for index, task in enumerate(tasks):
            task = task.with_write_token(f"{index}-0-{index}")
            t0 = time.perf_counter()
            group_rows = task.read_arrow()
            t1 = time.perf_counter()
            ordered = sort_rows(group_rows, list(SORT_COLUMNS), "linear")
            t2 = time.perf_counter()
            named = bf.with_file_name(ordered, f"profile-{index}.parquet").replace_schema_metadata(None)
            t3 = time.perf_counter()
            footer = bf.footer_for_keys(named.column("_hoodie_record_key"), task.options)
            t4 = time.perf_counter()
            writer = task.rolling_writer()
            writer.write(ordered)
            stats = writer.close()
            t5 = time.perf_counter()
            phases[names[0]] += t1 - t0
            phases[names[1]] += t2 - t1
            phases[names[2]] += t3 - t2
            phases[names[3]] += t4 - t3
            phases[names[4]] += max(0.0, (t5 - t4) - (t3 - t2) - (t4 - t3))
            written_bytes += sum(s["fileSizeInBytes"] for s in stats)
            rows += named.num_rows
            for layout in other_layouts:
                s = time.perf_counter()
                sort_rows(group_rows, list(SORT_COLUMNS), layout)
                curve_sorts[layout] += time.perf_counter() - s
            dictionary = bf.dictionary_columns(named)
            for label, settings in WHAT_IFS.items():
                settings = dict(settings)
                if settings.get("use_dictionary") == "auto":
                    settings["use_dictionary"] = dictionary
                target = copy / f"what-if-{index}.parquet"
                s = time.perf_counter()
                with pq.ParquetWriter(str(target), named.schema, data_page_size=task.options.page_bytes,
                                      store_schema=False, coerce_timestamps="us", allow_truncated_timestamps=True,
                                      **settings) as writer:  # fmt: skip
                    writer.write_table(named, row_group_size=max(1, named.num_rows))
                    writer.add_key_value_metadata(footer)
                what_if[label]["seconds"] += time.perf_counter() - s
                what_if[label]["bytes"] += target.stat().st_size
                target.unlink()
            del group_rows, ordered, named

        strategy = tasks[0].strategy
        profiler = cProfile.Profile()
        profiler.enable()
        strategy.execute_group(task=tasks[0].with_write_token("0-2-0"))
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        top = out.getvalue()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
        top_self = out.getvalue()
    finally:
        common.remove(copy)
    return {
        "groups": len(tasks), "rows": rows, "schedule_seconds": round(schedule_s, 3),
        "compression": tasks[0].options.compression, "written_bytes": written_bytes,
        "sequential_phase_seconds": {k: round(v, 3) for k, v in phases.items()},
        "sequential_total_seconds": round(sum(phases.values()), 3),
        "curve_sort_seconds": {k: round(v, 3) for k, v in curve_sorts.items()},
        "what_if_parquet_write": {k: {"seconds": round(v["seconds"], 3), "bytes": v["bytes"]} for k, v in what_if.items()},
        "cprofile_one_group_top": top, "cprofile_one_group_self": top_self,
    }  # fmt: skip


def print_profile(prof: dict, report: dict, parallelism: int) -> None:
    total = prof["sequential_total_seconds"]
    print(f"\nprofile: {prof['groups']} groups, {prof['rows']} rows, one group after the other in the driver (no Spark): "
          f"{total:.2f}s; schedule alone {prof['schedule_seconds']:.2f}s")  # fmt: skip
    rows = [[k, f"{v:.2f}", f"{100 * v / total:.0f}%"] for k, v in prof["sequential_phase_seconds"].items()]
    rows += [[f"(instead of linear) sort_rows, {k}", f"{v:.2f}", ""] for k, v in prof["curve_sort_seconds"].items()]
    print(common.fmt_table(["phase (sum over groups)", "seconds", "share"], rows))
    current = prof["sequential_phase_seconds"]["parquet write (RollingWriter: marker, pages, stat)"]
    alt_rows = [[k, f"{v['seconds']:.2f}", f"{v['seconds'] / max(current, 1e-9):.2f}x", f"{v['bytes'] / 2**20:.1f}",
                 f"{v['bytes'] / max(prof['written_bytes'], 1):.3f}x"] for k, v in prof["what_if_parquet_write"].items()]  # fmt: skip
    alt_rows.insert(0, ["current write path", f"{current:.2f}", "1.00x", f"{prof['written_bytes'] / 2**20:.1f}", "1.000x"])
    print(common.fmt_table(["parquet write what-if", "seconds", "vs current", "MiB", "size vs current"], alt_rows))
    ours, ours_cpu = report["seconds"]["ours"], report["cpu_seconds"]["ours"]["median"]
    ideal = prof["schedule_seconds"] + total / parallelism
    print(f"Spark/Python-worker/commit overhead (linear): our fastest rep {ours['min']:.2f}s (median {ours['median']:.2f}s) "
          f"vs schedule + in-process work / {parallelism} slots = {ideal:.2f}s; our CPU median {ours_cpu:.2f}s vs "
          f"in-process work {prof['schedule_seconds'] + total:.2f}s "
          f"(overhead {ours_cpu - prof['schedule_seconds'] - total:+.2f} CPU s)")  # fmt: skip
    print("\ncProfile, one group through execute_group (cumulative):\n" + "\n".join(prof["cprofile_one_group_top"].splitlines()[:36]))
    print("\ncProfile, same group, by own time:\n" + "\n".join(prof["cprofile_one_group_self"].splitlines()[:24]))
