"""Shared pieces of the benchmarks in ``bench/``: synthetic data, cached test tables, the Spark session, timing,
statistics (medians, paired ratios), process-tree memory sampling, and result output.

Rules every benchmark here follows (the machine is small and noisy):

* a contender is only ever reported as a **ratio** against a baseline measured **in the same run**, with the
  median over several repetitions and the min-max of the per-repetition (paired) ratios;
* repetitions alternate the order of the contenders, and each one works on a fresh copy of the input (the copy
  is not timed);
* inputs are built once and cached under ``bench/out/`` (git-ignored).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"

if str(REPO_ROOT) not in sys.path:  # `python bench/x.py` from anywhere: the repo's packages and tests/support
    sys.path.insert(0, str(REPO_ROOT))


# --------------------------------------------------------------------------------------------- synthetic rows

REGIONS = ("us", "eu")
_FIRST = ("Olivia", "Liam", "Emma", "Noah", "Amelia", "Oliver", "Ava", "Elijah", "Sophia", "Mateo", "Isabella",
          "Lucas", "Mia", "Levi", "Harper", "Ezra", "Evelyn", "Asher", "Luna", "James", "Zoë", "Søren", "Chloé")
_LAST = ("Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
         "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Müller")
_WORDS = ("order", "shipped", "delayed", "customer", "requested", "refund", "package", "warehouse", "priority",
          "express", "standard", "returned", "damaged", "invoice", "payment", "pending", "confirmed", "address",
          "changed", "backorder", "partial", "gift", "wrap", "note", "call", "before", "delivery", "weekend")
_DOMAINS = ("example.com", "mail.example.org", "corp.example.net", "example.co.uk", "shop.example.io")
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z

SCHEMA = pa.schema([
    ("id", pa.string()),            # record key: UUID text, 36 chars
    ("ts", pa.int64()),             # ordering field, epoch millis
    ("c_int", pa.int32()),          # low-cardinality int (e.g. customer bucket): first sort column
    ("c_int2", pa.int32()),
    ("c_long", pa.int64()),
    ("c_double", pa.float64()),     # an amount (2 decimals)
    ("c_double2", pa.float64()),    # a ratio (full precision)
    ("c_name", pa.string()),        # ~13 chars
    ("c_email", pa.string()),       # ~30 chars
    ("c_comment", pa.string()),     # ~60-90 chars, unique per row
    ("c_date", pa.date32()),
    ("c_timestamp", pa.timestamp("us", tz="UTC")),
    ("region", pa.string()),        # partition field (2 values) when partitioned
])  # fmt: skip


def _uuid_text(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` random UUID-formatted strings (8-4-4-4-12 hex), built from Arrow buffers in one go."""
    raw = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    nibbles = np.empty((n, 32), dtype=np.uint8)
    nibbles[:, 0::2] = raw >> 4
    nibbles[:, 1::2] = raw & 0x0F
    chars = _HEX[nibbles]
    text = np.full((n, 36), ord("-"), dtype=np.uint8)
    for dst, src in ((0, 0), (9, 8), (14, 12), (19, 16), (24, 20)):
        width = {0: 8, 9: 4, 14: 4, 19: 4, 24: 12}[dst]
        text[:, dst : dst + width] = chars[:, src : src + width]
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text.tobytes())])


def _pick(rng: np.random.Generator, words: Sequence[str], size: int) -> np.ndarray:
    return np.asarray(words, dtype=object)[rng.integers(0, len(words), size)]


@dataclass
class _Pools:
    names: pa.Array
    emails: pa.Array
    comments: pa.Array


_POOLS: dict[int, _Pools] = {}


def _pools(seed: int) -> _Pools:
    """Pools of realistic text values (names, e-mail addresses, free-text comments) the rows draw from."""
    if seed not in _POOLS:
        rng = np.random.default_rng(seed + 7919)
        first, last = _pick(rng, _FIRST, 50000), _pick(rng, _LAST, 50000)
        names = [f"{a} {b}" for a, b in zip(first[:5000], last[:5000])]
        numbers, domains = rng.integers(1, 9999, 50000), _pick(rng, _DOMAINS, 50000)
        emails = [f"{a.lower()}.{b.lower()}{n}@{d}" for a, b, n, d in zip(first, last, numbers, domains)]
        lengths = rng.integers(6, 12, 20000)
        words = _pick(rng, _WORDS, int(lengths.sum()))
        cuts = np.concatenate([[0], np.cumsum(lengths)])
        comments = [" ".join(words[cuts[i] : cuts[i + 1]]) for i in range(len(lengths))]
        _POOLS[seed] = _Pools(*(pa.array(v, pa.string()) for v in (names, emails, comments)))
    return _POOLS[seed]


def make_rows(start: int, count: int, *, seed: int = 0, regions: Sequence[str] = REGIONS) -> pa.Table:
    """Rows ``start .. start+count-1`` of the benchmark data set: a pure function of (start, count, seed)."""
    import pyarrow.compute as pc

    rng = np.random.default_rng([seed, start, count])
    pools = _pools(seed)
    n = count
    index = np.arange(start, start + n, dtype=np.int64)
    comment = pc.binary_join_element_wise(
        pools.comments.take(pa.array(rng.integers(0, len(pools.comments), n))), pa.array(index.astype(str)), " #"
    )
    columns = {
        "id": _uuid_text(rng, n),
        "ts": pa.array(_EPOCH_MS + index * 37 + rng.integers(0, 1000, n)),
        "c_int": pa.array(rng.integers(0, 10_000, n, dtype=np.int32)),
        "c_int2": pa.array(rng.integers(-1_000_000, 1_000_000, n, dtype=np.int32)),
        "c_long": pa.array(rng.integers(-(2**40), 2**40, n, dtype=np.int64)),
        "c_double": pa.array(np.round(rng.gamma(2.0, 40.0, n), 2)),
        "c_double2": pa.array(rng.random(n)),
        "c_name": pools.names.take(pa.array(rng.integers(0, len(pools.names), n))),
        "c_email": pools.emails.take(pa.array(rng.integers(0, len(pools.emails), n))),
        "c_comment": comment,
        "c_date": pa.array(rng.integers(19_723, 19_723 + 730, n, dtype=np.int32)).cast(pa.date32()),
        "c_timestamp": pa.array(
            (_EPOCH_MS * 1000 + rng.integers(0, 730 * 86_400 * 10**6, n, dtype=np.int64))
        ).cast(pa.timestamp("us", tz="UTC")),
        "region": pa.array(np.array(regions, dtype=object)[index % len(regions)].tolist(), pa.string()),
    }
    return pa.Table.from_pydict(columns, schema=SCHEMA)


# ----------------------------------------------------------------------------------------------- test tables

def dir_bytes(path: Path, suffix: str = ".parquet") -> int:
    return sum(p.stat().st_size for p in Path(path).rglob(f"*{suffix}") if p.is_file())


def base_files(base_path: Path) -> list[Path]:
    """Every parquet file of a Hudi table outside ``.hoodie`` (all of them are live right after appends)."""
    return sorted(p for p in Path(base_path).rglob("*.parquet") if ".hoodie" not in p.relative_to(base_path).parts)


def file_id_of(path: Path) -> str:
    return Path(path).name.split("_", 1)[0]


@dataclass(frozen=True)
class TableSpec:
    rows: int
    files: int
    partitioned: bool = True
    seed: int = 0

    @property
    def partitions(self) -> int:
        return len(REGIONS) if self.partitioned else 1

    @property
    def commits(self) -> int:
        if self.files % self.partitions:
            raise SystemExit(f"--files {self.files} must be a multiple of the {self.partitions} partitions")
        return self.files // self.partitions

    @property
    def rows_per_commit(self) -> int:
        if self.rows % self.commits:
            raise SystemExit(f"--rows {self.rows} must be a multiple of the {self.commits} append commits")
        return self.rows // self.commits

    @property
    def name(self) -> str:
        # bump the suffix whenever make_rows() or the table layout changes: it names the cached tables
        return f"r{self.rows}_f{self.files}_{'p' if self.partitioned else 'np'}_s{self.seed}_v1"

    def batches(self) -> Iterable[pa.Table]:
        for commit in range(self.commits):
            yield make_rows(commit * self.rows_per_commit, self.rows_per_commit, seed=self.seed)


def _cached(directory: Path, build: Callable[[Path], dict]) -> dict:
    """``build(tmp)`` once into ``directory`` (atomic rename); returns the info JSON stored beside it."""
    info_file = directory.with_name(directory.name + ".json")
    if directory.is_dir() and info_file.is_file():
        return json.loads(info_file.read_text())
    shutil.rmtree(directory, ignore_errors=True)
    tmp = directory.with_name(directory.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    info = build(tmp)
    info["build_seconds"] = round(time.perf_counter() - started, 2)
    tmp.rename(directory)
    info_file.write_text(json.dumps(info, indent=2))
    return info


def hudi_table(spec: TableSpec) -> tuple[Path, dict]:
    """The cached Hudi COW v9 table of ``spec``: ``spec.commits`` append commits (hudi_cluster_core's ``append``),
    each writing one new file group per partition; no metadata table."""
    from hudi_cluster_core.writer.append import append

    directory = OUT_DIR / "tables" / f"hudi_{spec.name}"

    def build(tmp: Path) -> dict:
        for batch in spec.batches():
            append(tmp, batch, table_name="bench_exec", record_key="id", precombine_field="ts",
                   partition_field="region" if spec.partitioned else None, table_version=9)  # fmt: skip
        files = base_files(tmp)
        sizes = [f.stat().st_size for f in files]
        return {"rows": spec.rows, "files": len(files), "bytes": sum(sizes), "min_file_bytes": min(sizes),
                "max_file_bytes": max(sizes), "partitioned": spec.partitioned, "commits": spec.commits}  # fmt: skip

    info = _cached(directory, build)
    return directory, info


def delta_table(spec: TableSpec) -> tuple[Path, dict]:
    """The same rows (data columns only) as a Delta table: one ``write_deltalake(mode="append")`` per batch, so it
    has the same number of small files (one per partition per commit), gzip like the Hudi table."""
    from deltalake import WriterProperties, write_deltalake

    directory = OUT_DIR / "tables" / f"delta_{spec.name}"

    def build(tmp: Path) -> dict:
        props = WriterProperties(compression="GZIP")
        for batch in spec.batches():
            write_deltalake(str(tmp), batch, mode="append", partition_by=["region"] if spec.partitioned else None,
                            writer_properties=props)  # fmt: skip
        files = [p for p in tmp.rglob("*.parquet")]
        return {"rows": spec.rows, "files": len(files), "bytes": sum(p.stat().st_size for p in files)}

    info = _cached(directory, build)
    return directory, info


def fresh_copy(source: Path, name: str) -> Path:
    """A private copy of ``source`` under ``bench/out/work/`` (not timed by callers)."""
    target = OUT_DIR / "work" / name
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target)
    return target


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# ----------------------------------------------------------------------------------------------------- Spark

def spark_session(parallelism: int):
    """The one SparkSession of a benchmark process: the Hudi 1.1.1 test session (``tests/support/apache_hudi``),
    with master ``local[parallelism]`` (it is built with ``local[2]``; any other value restarts it with the same
    settings and the new master)."""
    from tests.support.apache_hudi import hudi_spark_session

    spark = hudi_spark_session()
    master = f"local[{parallelism}]"
    if spark.sparkContext.master == master:
        return spark
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    pairs = [(k, v) for k, v in spark.sparkContext.getConf().getAll() if not k.startswith("spark.app.") and k not in (
        "spark.driver.port", "spark.driver.host", "spark.executor.id", "spark.master", "spark.default.parallelism",
        "spark.sql.shuffle.partitions")]  # fmt: skip
    spark.stop()
    conf = SparkConf().setAll(pairs).setMaster(master).set("spark.default.parallelism", str(parallelism))
    conf.set("spark.sql.shuffle.partitions", str(parallelism)).setAppName("hudi-cluster-bench")
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("HUDI_TEST_LOG_LEVEL", "ERROR").upper())
    return spark


def settle(spark=None) -> None:
    """Untimed: collect garbage in the driver (and the JVM) so one contender's garbage is not the next one's."""
    gc.collect()
    if spark is not None:
        try:
            spark.sparkContext._jvm.System.gc()
        except Exception:  # noqa: BLE001 - best effort
            pass
    time.sleep(0.5)


# ------------------------------------------------------------------------------------------- memory sampling

def _children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (``/proc/<pid>/task/<tid>/children`` lists only the ones that thread
    started: the JVM starts the PySpark daemon from a thread other than its main one)."""
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
        except OSError:
            continue
    return found


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def _tree(root: int | None = None) -> list[int]:
    pending, seen = [root or os.getpid()], []
    while pending:
        pid = pending.pop()
        if pid not in seen:
            seen.append(pid)
            pending.extend(_children(pid))
    return seen


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_ticks(pid: int, reaped: bool = True) -> int | None:
    """utime + stime (+ cutime + cstime of the children it reaped, when ``reaped``) of ``pid`` in clock ticks
    (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11 : 15 if reaped else 13])  # fields 14-17 (14-15) of proc(5)
    except (OSError, IndexError, ValueError):
        return None


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds ``pid`` itself has used so far (a server the benchmark talks to; 0 once it is gone)."""
    return (_cpu_ticks(pid, reaped=False) or 0) / _TICKS


def tree_cpu_ticks(root: int | None = None) -> dict[int, int]:
    """CPU ticks of every process in this tree, by pid."""
    return {pid: ticks for pid in _tree(root) if (ticks := _cpu_ticks(pid)) is not None}


def jvm_gc_seconds(spark) -> float:
    """Total collection time of the driver JVM's garbage collectors (local mode: the executors' too)."""
    try:
        beans = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
        return sum(max(0, bean.getCollectionTime()) for bean in beans) / 1000.0
    except Exception:  # noqa: BLE001 - best effort
        return 0.0


def tree_rss_bytes(root: int | None = None) -> int:
    """Resident memory of this process and all its descendants (driver, JVM, Python workers)."""
    return sum(_rss_bytes(pid) for pid in _tree(root))


class TreeSampler:
    """While a block runs, samples the process tree every ``interval`` seconds: peak RSS, and CPU seconds.

    CPU is counted per process (last value seen minus the value at the start, or minus 0 for a process born
    during the block), not as one sum at the end: PySpark's daemon ignores SIGCHLD, so the kernel reaps its
    Python workers and their CPU time never reaches a parent's ``cutime``; and Spark kills workers idle for a
    minute, so a worker can vanish during the next contender. Sampling bounds the loss to one interval of a
    worker that dies mid-block. Other tenants of the machine delay our processes but add no CPU time to them,
    so CPU seconds are steadier than wall time on a shared machine (caches and memory bandwidth stay shared).
    """

    def __init__(self, interval: float = 0.25, *, reaped: bool = True):
        # reaped=False: each process's own CPU only. A process the tree waits for (a whole-process contender, the
        # JVM its driver stops) is then not counted twice: once sampled, once in its parent's cutime; what a
        # process does after its last sample (at most ``interval``) is lost instead.
        self.interval, self.start, self.peak, self.reaped = interval, 0, 0, reaped
        self._first: dict[int, int] = {}
        self._last: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        pids = _tree()  # one walk (~4 ms with a JVM of ~70 threads) for both figures
        self.peak = max(self.peak, sum(_rss_bytes(pid) for pid in pids))
        for pid in pids:
            ticks = _cpu_ticks(pid, self.reaped)
            if ticks is not None:
                self._first.setdefault(pid, 0)  # born during the block: started at 0 ticks
                self._last[pid] = ticks

    @property
    def cpu_seconds(self) -> float:
        return sum(self._last[pid] - self._first.get(pid, 0) for pid in self._last) / _TICKS

    def __enter__(self) -> "TreeSampler":
        self.start = self.peak = tree_rss_bytes()
        self._first = {pid: t for pid in _tree() if (t := _cpu_ticks(pid, self.reaped)) is not None}
        self._last = dict(self._first)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._sample()


def driver_peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# -------------------------------------------------------------------------------------------------- timing

@dataclass
class Sample:
    seconds: float
    cpu_seconds: float = 0.0
    gc_seconds: float = 0.0
    peak_rss: int = 0
    rss_growth: int = 0
    extra: dict = field(default_factory=dict)


def measure(fn: Callable[[], object], *, spark=None, reaped: bool = True, interval: float = 0.25) -> tuple[Sample, object]:
    """Run ``fn`` once: wall-clock seconds (perf_counter), CPU seconds of the process tree, JVM GC seconds, and
    the tree's peak RSS (and its growth over the RSS at the start). ``reaped=False`` for ``fn`` that starts and
    waits for processes (see :class:`TreeSampler`): with the default their CPU is counted about twice."""
    gc_before = jvm_gc_seconds(spark) if spark is not None else 0.0
    with TreeSampler(interval, reaped=reaped) as tree:
        started = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - started
    gc_seconds = (jvm_gc_seconds(spark) - gc_before) if spark is not None else 0.0
    return Sample(seconds, tree.cpu_seconds, gc_seconds, tree.peak, max(0, tree.peak - tree.start)), result


def load() -> dict:
    """The machine's load as a report records it, before and after a run."""
    return {"loadavg": os.getloadavg(), "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}


def compare_clients(ops: Mapping[str, Callable[[Any, int, str], bool]], clients: Mapping[str, Any], reps: int,
                    server_pid: int, baseline: str, contender: str = "obstore") -> dict:
    """Each operation ``op(client, rep, name)`` timed per client, ``reps`` times in alternating orders: wall and
    CPU seconds here, and the server's CPU seconds; per operation their stats and the contender's ratios to the
    baseline. An operation that says it did not do its work (returns False) stops the benchmark."""
    report = {}
    for label, op in ops.items():
        wall: dict[str, list[float]] = {c: [] for c in clients}
        cpu: dict[str, list[float]] = {c: [] for c in clients}
        server_cpu: dict[str, list[float]] = {c: [] for c in clients}
        for rep, order in enumerate(alternating_orders(list(clients), reps)):
            for name in order:
                cpu0, server0, wall0 = time.process_time(), process_cpu_seconds(server_pid), time.perf_counter()
                did = op(clients[name], rep, name)
                wall[name].append(time.perf_counter() - wall0)
                cpu[name].append(time.process_time() - cpu0)
                server_cpu[name].append(process_cpu_seconds(server_pid) - server0)
                if not did:
                    raise SystemExit(f"{label}: {name} did not do what it should (rep {rep})")
        report[label] = {"wall": {c: stats(v) for c, v in wall.items()}, "cpu": {c: stats(v) for c, v in cpu.items()},
                         "moto_cpu": {c: stats(v) for c, v in server_cpu.items()},
                         "ratio_wall": ratio(wall[contender], wall[baseline]),
                         "ratio_cpu": ratio(cpu[contender], cpu[baseline])}  # fmt: skip
        print(f"  {label}: {baseline} {report[label]['wall'][baseline]['median']:.3f} s, {contender} "
              f"{report[label]['wall'][contender]['median']:.3f} s", flush=True)  # fmt: skip
    return report


def alternating_orders(names: Sequence[str], reps: int) -> list[list[str]]:
    """Rep 0 in the given order, rep 1 reversed, rep 2 rotated by one, rep 3 that reversed, ... so every contender
    runs early and late, and after different neighbours."""
    orders = []
    for rep in range(reps):
        rotation = (rep // 2) % len(names)
        order = list(names[rotation:]) + list(names[:rotation])
        orders.append(order[::-1] if rep % 2 else order)
    return orders


def stats(values: Sequence[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values),
            "values": [round(v, 4) for v in values]}  # fmt: skip


def ratio(numerator: Sequence[float], denominator: Sequence[float]) -> dict:
    """Ratio of medians, plus the min-max and median of the paired per-repetition ratios."""
    paired = [a / b for a, b in zip(numerator, denominator)]
    return {
        "of_medians": statistics.median(numerator) / statistics.median(denominator),
        "paired_median": statistics.median(paired), "paired_min": min(paired), "paired_max": max(paired),
        "paired": [round(p, 4) for p in paired],
    }  # fmt: skip


def timings(samples: dict[str, list["Sample"]], numerator: str, baseline: str) -> dict:
    """Wall and CPU statistics per contender, and the ``numerator``/``baseline`` ratios of both: the report keys
    ``seconds``, ``cpu_seconds``, ``ratios``, ``cpu_ratios``."""
    seconds = {c: [s.seconds for s in runs] for c, runs in samples.items()}
    cpu = {c: [s.cpu_seconds for s in runs] for c, runs in samples.items()}
    key = f"{numerator}/{baseline}"
    return {
        "seconds": {c: stats(v) for c, v in seconds.items()},
        "cpu_seconds": {c: stats(v) for c, v in cpu.items()},
        "ratios": {key: ratio(seconds[numerator], seconds[baseline])},
        "cpu_ratios": {key: ratio(cpu[numerator], cpu[baseline])},
    }


def print_timings(report: dict, label: str, numerator: str, baseline: str) -> None:
    """The table of :func:`timings` (median and min-max wall, median CPU) and its ratio line."""
    rows = []
    for name in report["seconds"]:
        wall, cpu = report["seconds"][name], report["cpu_seconds"][name]
        rows.append([name, f"{wall['median']:.2f}", f"{wall['min']:.2f}-{wall['max']:.2f}", f"{cpu['median']:.2f}"])
    print(fmt_table([label, "wall s (median)", "wall min-max", "CPU s (median)"], rows))
    key = f"{numerator}/{baseline}"
    wall, cpu = report["ratios"][key], report["cpu_ratios"][key]
    print(f"{key}: wall {wall['of_medians']:.3f} (per rep {wall['paired_min']:.3f}-{wall['paired_max']:.3f}), "
          f"CPU {cpu['of_medians']:.3f} (per rep {cpu['paired_min']:.3f}-{cpu['paired_max']:.3f})")  # fmt: skip


def machine() -> dict:
    import pyarrow
    import pyspark

    meminfo = Path("/proc/meminfo").read_text().split("\n", 1)[0] if Path("/proc/meminfo").exists() else ""
    return {"python": platform.python_version(), "pyarrow": pyarrow.__version__, "pyspark": pyspark.__version__,
            "cpus": os.cpu_count(), "mem": meminfo.split(":", 1)[-1].strip(), "platform": platform.platform()}  # fmt: skip


def code_fingerprint() -> str:
    """sha256 (first 16 hex digits) over the measured code (``hudi_cluster_core/``, ``plugins/``), so a figure can
    be tied to the tree it was measured on without asking git (the tree changes under a long run)."""
    import hashlib

    digest = hashlib.sha256()
    for root in ("hudi_cluster_core", "plugins"):
        for path in sorted((REPO_ROOT / root).rglob("*.py")):
            digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")


def report_header(benchmark: str, code_at_start: str) -> dict:
    """What a report opens with: the benchmark, its command line, the machine, and whether the measured code changed
    while it ran (a figure from a tree that moved under it says so)."""
    return {"benchmark": benchmark, "command": " ".join([sys.executable, *sys.argv]), "machine": machine(),
            "code_changed_during_run": code_fingerprint() != code_at_start}  # fmt: skip


def save_report(path: Path, report: dict) -> int:
    """Write the report, say where, and remove the run's work folder; 0, the benchmark's exit code."""
    write_json(path, report)
    print(f"\nwrote {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}")
    remove(OUT_DIR / "work")
    return 0


def fmt_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


@contextmanager
def spark_conf(spark, settings: dict[str, str]):
    """Temporarily set SQL confs on the session (restored afterwards)."""
    old = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
