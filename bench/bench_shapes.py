"""Issue 24: speed on every table shape, as whole processes, against Apache Hudi, delta-rs and a pyarrow floor.

    .venv/bin/python bench/bench_shapes.py                 # default sizes, 2 reps (~10-15 min on 2 quiet cores)
    .venv/bin/python bench/bench_shapes.py --quick         # half the rows, 1 rep, no 10k-file plan
    .venv/bin/python bench/bench_shapes.py --rows 2000000 --files 200 --reps 3    # or HUDI_BENCH_SHAPES_ROWS/_FILES
    .venv/bin/python bench/bench_shapes.py --shapes one-group,two-groups --in-session

Shapes (tables of ``common.TableSpec``: the rows of ``common.make_rows``, one small base file per partition per
append commit, cached under ``bench/out/tables/``), all sorted by ``c_int,ts``, gzip:

* ``one-group``  - ``--rows`` rows in ``--files`` files, one partition, Hudi's default group size (2 GiB per group,
  1 GiB target files): every file in one group with one output file.
* ``two-groups`` - the same rows in 2 partitions, Hudi's default group size: one group per partition, two
  groups on the two cores.
* ``ten-groups`` - the two-groups table with ``max.bytes.per.group`` = ``target.file.max.bytes`` set so the plan
  has 10 groups of one output file each (``bench_execution.clustering_options``).
* ``tiny``       - 40,000 rows in 8 files, 2 partitions, Hudi's default group size (target: < 5 s, whole process).
* ``plan-10k``   - planning only (``--mode schedule``): the 10,000-file table of ``bench_planning.py`` (10
  partitions, metadata table with ``files``), our ``key-range`` plan strategy and our size-based plan with a
  z-order layout on ``c_int,ts`` (it reads every footer to predict files per query), against Apache Hudi's
  ``run_clustering(op => 'schedule')`` with the same sort columns and layout.

Contenders per execution shape, each a fresh process on a fresh copy (untimed) in alternating order within a
rep (``shape_processes.py``): ``ours`` = ``hudi-cluster run --mode scheduleAndExecute --spark-master local[P]
--parallelism P``; ``hudi`` = Apache Hudi 1.1.1's ``run_clustering(op => 'scheduleAndExecute')`` in a pyspark
process of its own (``local[P]``); ``delta`` = delta-rs z-order of the same rows as a Delta table (data columns
only); ``floor`` = pyarrow reads each group's files and writes the plan's number of output files, gzip 6, no sort.
Wall and CPU seconds of the whole process tree (JVM and Python workers included), ratios of ours to each in the
same rep, and ``uptime``'s load before and after every shape. ``--base-code DIR`` adds ``ours-base``: the same
command with ``PYTHONPATH=DIR`` (an earlier commit's ``git archive``), for a before/after in one run. ``--in-session``: ours once more per rep through
``api.cluster`` on a ``local[P]`` session of its own process, after a warm-up run (``shape_processes.py
session``): CPU / wall says how many cores the run keeps busy. The bench process itself starts no JVM, so the
CPU figures are the contenders' alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (puts the repo root on sys.path)
from common import OUT_DIR, TableSpec  # noqa: E402
from execution_cli import _check_hudi, _check_ours, _run_process, ours_command  # noqa: E402

SORT = ("c_int", "ts")
SHAPES = ("one-group", "two-groups", "ten-groups", "tiny", "plan-10k")
TINY = TableSpec(rows=40_000, files=8)
PLAN_FILES = 10_000
HUDI_DEFAULT_TARGET = 1024**3  # hoodie.clustering.plan.strategy.target.file.max.bytes
PROCESSES = Path(__file__).resolve().parent / "shape_processes.py"
BASELINES = ("hudi", "delta", "floor", "ours-base")  # every ratio is one of ours over one of these


def _load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def _options(shape: str, spec: TableSpec, info: dict, parallelism: int) -> dict[str, str]:
    if shape == "ten-groups":
        from bench_execution import clustering_options

        return clustering_options(info, spec, 10, parallelism)
    return {"hoodie.clustering.plan.strategy.sort.columns": ",".join(SORT), "hoodie.parquet.compression.codec": "gzip",
            "hoodie.clustering.max.parallelism": str(parallelism)}  # fmt: skip


def _plan_options(kind: str) -> dict[str, str]:
    if kind == "ours-key-range":
        return {"hoodie.clustering.plan.strategy.class": "key-range"}
    return {"hoodie.clustering.plan.strategy.sort.columns": ",".join(SORT), "hoodie.layout.optimize.strategy": "z-order"}


def _child(kind: str, job: dict) -> list[str]:
    return [sys.executable, str(PROCESSES), kind, json.dumps(job)]


class Shape:
    """One shape's table(s), options and the commands of its contenders."""

    def __init__(self, name: str, args):
        self.name, self.args, self.p = name, args, args.parallelism
        if name == "plan-10k":
            from bench_planning import build_table

            self.source = build_table(PLAN_FILES, 10)["mdt"]
            self.spec, self.delta_source, self.groups = None, None, []
            self.contenders = ["ours-key-range", "ours-z-order", "hudi"]
            return
        rows, files = (TINY.rows, TINY.files) if name == "tiny" else (args.rows, args.files)
        self.spec = TableSpec(rows=rows, files=files, partitioned=name != "one-group")
        self.source, info = common.hudi_table(self.spec)
        self.options = _options(name, self.spec, info, self.p)
        from bench_execution import planned_groups

        self.groups = planned_groups(self.source, self.options)
        self.delta_source = common.delta_table(self.spec)[0]
        self.contenders = ["ours", "hudi", "delta", "floor"] + (["ours-base"] if args.base_code else [])

    def run(self, contender: str, rep: int) -> common.Sample:
        delta = contender == "delta"
        copy = common.fresh_copy(self.delta_source if delta else self.source, f"shapes-{self.name}-{contender}-{rep}")
        scratch = OUT_DIR / "work" / f"shapes-floor-{rep}"
        try:
            command, check = self._command(contender, copy, scratch)
            common.settle()
            env = {"PYTHONPATH": str(self.args.base_code)} if contender == "ours-base" else None
            # each process's own CPU, sampled every 0.1 s: the default also adds what a waited-for process spent
            # to its parent's (cutime), counting a whole-process contender about twice
            sample, out = common.measure(lambda: _run_process(command, env), reaped=False, interval=0.1)
            sample.extra = {"load": _load(), **check(copy, out)}
        finally:
            common.remove(copy)
            common.remove(scratch)
        return sample

    def _command(self, contender: str, copy: Path, scratch: Path):
        last = _last_json
        if self.name == "plan-10k":
            if contender == "hudi":
                options = {**_plan_options("hudi"), "hoodie.clustering.max.parallelism": str(self.p)}
                job = {"path": str(copy), "op": "schedule", "options": options, "order": ",".join(SORT), "threads": self.p}
                return _child("hudi", job), lambda c, out: {"hudi": last(out), "planned": bool(last(out)["instants"][0])}
            command = ours_command(copy, _plan_options(contender), self.p)
            command[command.index("scheduleAndExecute")] = "schedule"
            return command, lambda c, out: {"groups": len(last(out).get("groups") or []), "duration_s": last(out).get("duration_s")}
        if contender in ("ours", "ours-base"):  # ours-base: the same command on the code of --base-code
            command = ours_command(copy, self.options, self.p)
            return command, lambda c, out: {**_check_ours(c, self.spec.rows), **_ours_summary(last(out))}
        if contender == "hudi":
            job = {"path": str(copy), "op": "scheduleAndExecute", "options": self.options, "order": ",".join(SORT),
                   "threads": self.p}  # fmt: skip
            return _child("hudi", job), lambda c, out: {**_check_hudi(c, self.spec.rows), **last(out)}
        if contender == "delta":
            target = int(self.options.get("hoodie.clustering.plan.strategy.target.file.max.bytes", HUDI_DEFAULT_TARGET))
            job = {"path": str(copy), "columns": list(SORT), "target_size": target, "threads": self.p}
            return _child("delta", job), lambda c, out: last(out)
        groups = [{"files": [str(copy / f) for f in g["files"]], "outputs": g["outputs"]} for g in self.groups]
        job = {"groups": groups, "out": str(scratch), "threads": self.p}
        return _child("floor", job), lambda c, out: _check_floor(last(out), self.spec.rows)

    def in_session(self, code: Path | None = None) -> common.Sample:
        copy = common.fresh_copy(self.source, f"shapes-{self.name}-session")
        warm = common.fresh_copy(common.hudi_table(TINY)[0], f"shapes-{self.name}-session-warm-up")
        try:
            job = {"path": str(copy), "warm": str(warm), "options": self.options, "threads": self.p}
            common.settle()
            result = _last_json(_run_process(_child("session", job), {"PYTHONPATH": str(code)} if code else None))
        finally:
            common.remove(copy)
            common.remove(warm)
        sample = common.Sample(result["seconds"], result["cpu_seconds"], peak_rss=result["peak_rss"])
        sample.extra = {"load": _load(), "cores_busy": result["cores_busy"], "files": result["files"]}
        return sample


def _last_json(out: str) -> dict:
    """The JSON document a process ends its output with (ours is indented, the others' one line)."""
    text = out.strip()
    start = text.rfind("\n{")
    return json.loads(text[start + 1 :] if start >= 0 else text)


def _ours_summary(result: dict) -> dict:
    return {"groups": len(result.get("groups") or []), "files_written": result.get("output_files"),
            "duration_s": result.get("duration_s")}  # fmt: skip


def _check_floor(result: dict, rows: int) -> dict:
    if result["rows"] != rows:
        raise AssertionError(f"the floor read {result['rows']} rows, expected {rows}")
    return result


def run_shape(shape: Shape, reps: int, in_session: bool) -> dict:
    samples: dict[str, list[common.Sample]] = {c: [] for c in shape.contenders}
    session: dict[str, list[common.Sample]] = {}
    load_before = _load()
    orders = common.alternating_orders(shape.contenders, reps)
    for rep, order in enumerate(orders):
        for contender in order:
            sample = shape.run(contender, rep)
            samples[contender].append(sample)
            print(f"[bench_shapes] {shape.name} rep {rep + 1}/{reps} {contender:>15}: {sample.seconds:7.2f}s wall, "
                  f"{sample.cpu_seconds:7.2f}s CPU  {json.dumps(sample.extra)}", flush=True)  # fmt: skip
        if in_session and shape.name in ("one-group", "two-groups"):
            for label, code in (("ours", None), ("ours-base", shape.args.base_code))[: 2 if shape.args.base_code else 1]:
                session.setdefault(label, []).append(shape.in_session(code))
                print(f"[bench_shapes] {shape.name} rep {rep + 1}/{reps} {label} in session: "
                      f"{session[label][-1].seconds:.2f}s wall, {session[label][-1].cpu_seconds:.2f}s CPU "
                      f"{json.dumps(session[label][-1].extra)}", flush=True)  # fmt: skip
    others = [c for c in shape.contenders if c in BASELINES]
    ours = [c for c in shape.contenders if c not in BASELINES]
    wall = {c: [s.seconds for s in v] for c, v in samples.items()}
    cpu = {c: [s.cpu_seconds for s in v] for c, v in samples.items()}
    report = {
        "shape": shape.name, "load_before": load_before, "load_after": _load(), "orders": orders,
        "table": vars(shape.spec) if shape.spec else {"files": PLAN_FILES, "path": shape.source.name},
        "options": getattr(shape, "options", None), "groups": len(shape.groups),
        "plan_outputs": [g["outputs"] for g in shape.groups],
        "seconds": {c: common.stats(v) for c, v in wall.items()},
        "cpu_seconds": {c: common.stats(v) for c, v in cpu.items()},
        "ratios": {f"{a}/{b}": common.ratio(wall[a], wall[b]) for a in ours for b in others},
        "cpu_ratios": {f"{a}/{b}": common.ratio(cpu[a], cpu[b]) for a in ours for b in others},
        "checks": {c: [s.extra for s in v] for c, v in samples.items()},
    }  # fmt: skip
    report["in_session"] = {
        label: {"seconds": common.stats([s.seconds for s in runs]), "cpu_seconds": common.stats([s.cpu_seconds for s in runs]),
                "cores_busy": common.stats([s.extra["cores_busy"] for s in runs]), "checks": [s.extra for s in runs]}
        for label, runs in session.items()
    }  # fmt: skip
    if "ours-base" in session:
        report["in_session_ratios"] = {
            "ours/ours-base": common.ratio([s.seconds for s in session["ours"]], [s.seconds for s in session["ours-base"]]),
            "ours/ours-base CPU": common.ratio([s.cpu_seconds for s in session["ours"]],
                                               [s.cpu_seconds for s in session["ours-base"]]),
        }  # fmt: skip
    return report


def print_report(reports: list[dict]) -> None:
    rows = []
    for r in reports:
        for key, wall in r["ratios"].items():
            cpu = r["cpu_ratios"][key]
            a, b = key.split("/")
            rows.append([r["shape"], key, f"{r['seconds'][a]['median']:.2f} / {r['seconds'][b]['median']:.2f}",
                         f"{wall['of_medians']:.3f} ({wall['paired_min']:.3f}-{wall['paired_max']:.3f})",
                         f"{r['cpu_seconds'][a]['median']:.2f} / {r['cpu_seconds'][b]['median']:.2f}",
                         f"{cpu['of_medians']:.3f} ({cpu['paired_min']:.3f}-{cpu['paired_max']:.3f})",
                         f"{r['load_before'][0]}-{r['load_after'][0]}"])  # fmt: skip
    print()
    print(common.fmt_table(["shape", "ratio", "wall s", "wall ratio (per rep)", "CPU s", "CPU ratio (per rep)",
                            "load"], rows))  # fmt: skip
    for r in reports:
        for label, s in r.get("in_session", {}).items():
            print(f"{r['shape']}: {label} in session {s['seconds']['median']:.2f}s wall, {s['cpu_seconds']['median']:.2f}s "
                  f"CPU: {s['cores_busy']['median']:.2f} cores busy (per rep {s['cores_busy']['values']})")  # fmt: skip
        for key, value in r.get("in_session_ratios", {}).items():
            print(f"{r['shape']}: in session {key}: {value['of_medians']:.3f} (per rep {value['paired']})")


def critical_path(args, reps: int) -> dict:
    """``shape_processes.py critical`` on the one-group table: medians of main-thread and process CPU, before/after."""
    import statistics

    spec = TableSpec(rows=args.rows, files=args.files, partitioned=False)
    job = {"source": str(common.hudi_table(spec)[0]), "options": _options("one-group", spec, {}, args.parallelism),
           "reps": max(2, reps)}  # fmt: skip
    load_before = _load()
    result = _last_json(_run_process(_child("critical", job)))
    summary = {"load_before": load_before, "load_after": _load(), **result}
    for label in ("before", "after"):
        runs = [r for r in result["runs"] if r["label"] == label]
        summary[label] = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "main_thread_cpu")}
    b, a = summary["before"], summary["after"]
    print(f"\none group in-process (load {load_before[0]}-{summary['load_after'][0]}): main-thread CPU {b['main_thread_cpu']:.2f} "
          f"-> {a['main_thread_cpu']:.2f} s of {b['cpu']:.2f} -> {a['cpu']:.2f} s process CPU; with free cores the wall "
          f"is at least max(main thread, CPU / cores): {max(b['main_thread_cpu'], b['cpu'] / 2):.2f} -> "
          f"{max(a['main_thread_cpu'], a['cpu'] / 2):.2f} s on 2 cores")  # fmt: skip
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="half the rows and files, 1 rep, no plan-10k")
    parser.add_argument("--rows", type=int, default=int(os.environ.get("HUDI_BENCH_SHAPES_ROWS", 400_000)),
                        help="rows of the one-, two- and ten-group tables (default 400000, HUDI_BENCH_SHAPES_ROWS)")
    parser.add_argument("--files", type=int, default=int(os.environ.get("HUDI_BENCH_SHAPES_FILES", 40)),
                        help="their base files (default 40, HUDI_BENCH_SHAPES_FILES; a multiple of 20)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 2; --quick 1)")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--shapes", default=None, help=f"comma-separated, of {','.join(SHAPES)} (default all)")
    parser.add_argument("--in-session", action="store_true", help="also ours in one session (one-group, two-groups)")
    parser.add_argument("--base-code", type=Path, help="also run our CLI on the code in this directory (e.g. `git "
                        "archive` of an earlier commit) as ours-base: before/after in the same run")
    parser.add_argument("--critical-path", action="store_true", help="also the one-group task in-process, its "
                        "work inline vs on threads: main-thread CPU against the process's (load-independent)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_shapes.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.files = args.rows // 2, args.files // 2
    reps = args.reps or (1 if args.quick else 2)
    shapes = ([s for s in args.shapes.split(",") if s] if args.shapes is not None  # "": none (--critical-path alone)
              else [s for s in SHAPES if not (args.quick and s == "plan-10k")])
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        print(f"--shapes: unknown shape {unknown[0]!r}; accepted: {', '.join(SHAPES)}", file=sys.stderr)
        return 2
    code_at_start, started = common.code_fingerprint(), time.perf_counter()
    reports = []
    for name in shapes:
        reports.append(run_shape(Shape(name, args), reps, args.in_session))
        print_report(reports[-1:])
    critical = critical_path(args, reps) if args.critical_path else None
    payload = {"benchmark": "bench_shapes", "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": common.machine(),
               "command": " ".join(["bench/bench_shapes.py", *(argv if argv is not None else sys.argv[1:])]),
               "code_sha256": code_at_start, "code_changed_during_run": common.code_fingerprint() != code_at_start,
               "parallelism": args.parallelism, "reps": reps, "seconds_total": round(time.perf_counter() - started, 1),
               "shapes": reports, "critical_path": critical}  # fmt: skip
    common.write_json(args.out, payload)
    print_report(reports)
    print(f"\nwritten {args.out} ({payload['seconds_total']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
