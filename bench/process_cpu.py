"""Where a whole ``hudi-cluster run`` process's CPU goes, per process and per JVM thread (issue 24).

    PYTHONPATH=$PWD .venv/bin/python bench/process_cpu.py --reps 3                 # the tiny table
    PYTHONPATH=$PWD .venv/bin/python bench/process_cpu.py --reps 3 --table micro --variant ui:--spark-conf=K=V

Each run is a fresh process on a fresh copy of ``bench_startup.py``'s table (``tiny``: 40,000 rows in 8 files, 2
groups; ``micro``: the same layout with 400 rows). Its session's processes are sampled every ``--interval``
seconds through ``/proc`` until every one of them has exited (the JVM shuts down after the command returns), each
process's own user + system time (no ``cutime``: nothing is counted twice). Processes are named by role: the
command line's ``driver`` Python (and its threads: ``main``, the background session start), ``spark-submit`` (the
launch scripts), ``jvm`` (its threads grouped: compilers, GC and VM, Spark's own, the rest), the PySpark
``daemon`` and each ``worker`` forked from it. ``in_wait`` is what the tree used until the command exited (what
a caller waits for), ``after_exit`` what the JVM and daemon used shutting down afterwards. ``--variant
NAME:FLAG[,FLAG...]`` adds a contender with extra CLI flags, alternating with the plain run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import bench_startup
import common
from common import OUT_DIR, REPO_ROOT

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> tuple[str, int, int] | None:
    """(comm, parent pid, own utime + stime in ticks) from a ``/proc/.../stat``; None once gone."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    comm = raw[raw.index(b"(") + 1 : raw.rindex(b")")].decode(errors="replace")
    fields = raw.rsplit(b")", 1)[1].split()
    return comm, int(fields[1]), int(fields[11]) + int(fields[12])


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _session_pids(sid: int) -> list[int]:
    """Every process of session ``sid`` (the command was started in a session of its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def _jvm_thread_group(name: str) -> str:
    if name.startswith(("C1 Compiler", "C2 Compiler", "C1 CompilerThre", "C2 CompilerThre")):
        return "jit"
    if name.startswith(("VM Thread", "GC ", "VM Periodic", "Service Thread", "Signal Dispatch", "Finalizer",
                        "Reference Handl", "Common-Cleaner", "Sweeper", "Monitor Deflati", "Notification")):  # fmt: skip
        return "vm+gc"
    if name == "java":  # the launcher's main thread
        return "main"
    return "spark"  # dag-scheduler, executor tasks, py4j, netty, ...


def sample_run(command: list[str], interval: float, env: dict, code: Path = REPO_ROOT) -> dict:
    """Runs ``command`` in its own session; per role CPU seconds while the caller waits and after its exit."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    roles: dict[int, str] = {}
    comms: dict[int, str] = {}
    threads: dict[tuple[int, int], tuple[str, int]] = {}  # (pid, tid) -> (name, ticks), for the jvm and driver
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=code, env=env,
                               start_new_session=True)  # fmt: skip
    sid = process.pid
    exited_at = None
    in_wait: dict[str, float] = {}
    stdout_chunks: list[bytes] = []

    import threading

    def drain(stream, into):
        for chunk in iter(lambda: stream.read(65536), b""):
            into.append(chunk)

    err_chunks: list[bytes] = []
    readers = [threading.Thread(target=drain, args=(process.stdout, stdout_chunks), daemon=True),
               threading.Thread(target=drain, args=(process.stderr, err_chunks), daemon=True)]  # fmt: skip
    for reader in readers:
        reader.start()

    def role_of(pid: int, parent: int, comm: str) -> str:
        if pid == sid:
            return "driver"
        line = _cmdline(pid)
        if comm == "java":
            return "launcher-jvm" if "org.apache.spark.launcher.Main" in line else "jvm"
        if comm.startswith("python") and ("worker_daemon" in line or "pyspark.daemon" in line):
            return "daemon" if roles.get(parent) == "jvm" else "worker"
        if comm in ("bash", "sh", "dash"):
            return "spark-submit"  # pyspark's launch scripts (spark-submit, spark-class and its subshells)
        return f"other:{comm}"

    def sample() -> list[int]:
        pids = _session_pids(sid)
        for pid in pids:
            got = _stat(f"/proc/{pid}/stat")
            if got is None:
                continue
            comm, parent, ticks = got
            if comms.get(pid) != comm:  # new, or a launch script that exec'd the JVM
                roles[pid], comms[pid] = role_of(pid, parent, comm), comm
            first.setdefault(pid, 0)
            last[pid] = ticks
            if roles[pid] in ("jvm", "driver"):
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    tids = []
                for tid in tids:
                    got_t = _stat(f"/proc/{pid}/task/{tid}/stat")
                    if got_t is not None:
                        threads[(pid, int(tid))] = (got_t[0], got_t[2])
        return pids

    while True:
        pids = sample()
        if exited_at is None and process.poll() is not None:
            exited_at = time.perf_counter() - started
            in_wait = _by_role(first, last, roles)
        if exited_at is not None and not pids:
            break
        if time.perf_counter() - started > bench_startup.TIMEOUT_S:
            raise RuntimeError("timed out")
        time.sleep(interval)
    for reader in readers:
        reader.join(5)
    stdout = b"".join(stdout_chunks).decode()
    if process.returncode != 0:
        raise RuntimeError(f"exited {process.returncode}: {b''.join(err_chunks).decode()[-2000:]}")
    total = _by_role(first, last, roles)
    jvm_threads: dict[str, float] = defaultdict(float)
    jvm_names: dict[str, float] = defaultdict(float)
    driver_threads: dict[str, float] = defaultdict(float)
    for (pid, _tid), (name, ticks) in threads.items():
        if roles.get(pid) == "jvm":
            jvm_threads[_jvm_thread_group(name)] += ticks / _TICKS
            jvm_names[name if _tid != pid else "(primordial)"] += ticks / _TICKS
        elif roles.get(pid) == "driver":
            driver_threads["main" if _tid == pid else name] += ticks / _TICKS
    phases = json.loads(stdout).get("phases_s", {})
    return {"wall": exited_at, "in_wait": in_wait, "total": total, "jvm_threads": dict(jvm_threads),
            "driver_threads": dict(driver_threads),
            "jvm_thread_names": _r(jvm_names, 15), "workers": sum(1 for r in roles.values() if r == "worker"),
            "phases": phases}  # fmt: skip


def _by_role(first: dict, last: dict, roles: dict) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for pid, ticks in last.items():
        out[roles[pid]] += (ticks - first.get(pid, 0)) / _TICKS
    out["all"] = sum(v for k, v in out.items())
    return {k: round(v, 2) for k, v in out.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--table", default="tiny", choices=("tiny", "micro"))
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:FLAG[,FLAG...]")
    parser.add_argument("--code", action="append", default=[], metavar="NAME:DIR",
                        help="a contender with the code in DIR first on PYTHONPATH")
    parser.add_argument("--env", action="append", default=[], metavar="NAME:KEY=VALUE[,KEY=VALUE...]",
                        help="a contender with these environment variables")
    parser.add_argument("--bytecode-cache", metavar="DIR",
                        help="every contender's Python caches its bytecode under DIR (PYTHONPYCACHEPREFIX; "
                             "PYTHONDONTWRITEBYTECODE unset), as an installed package has its .pyc files")
    parser.add_argument("--out", default=str(OUT_DIR / "process_cpu.json"))
    args = parser.parse_args(argv)
    spec = bench_startup.TINY if args.table == "tiny" else bench_startup.MICRO
    source, info = common.hudi_table(spec)
    options = bench_startup.tiny_options(info, 2)
    contenders: dict[str, tuple[list[str], Path, dict]] = {"plain": ([], REPO_ROOT, {})}
    for variant in args.variant:
        name, _, flags = variant.partition(":")
        contenders[name] = ([f for f in flags.split(",") if f], REPO_ROOT, {})
    for code in args.code:
        name, _, directory = code.partition(":")
        contenders[name] = ([], Path(directory).resolve(), {})
    for extra in args.env:
        name, _, pairs = extra.partition(":")
        contenders[name] = ([], REPO_ROOT, dict(p.split("=", 1) for p in pairs.split(",") if p))
    runs: dict[str, list[dict]] = {name: [] for name in contenders}
    # with a bytecode cache, one untimed run of each contender first fills it
    warm_up = [(-1, list(contenders))] if args.bytecode_cache else []
    for rep, order in [*warm_up, *enumerate(common.alternating_orders(list(contenders), args.reps))]:
        for name in order:
            flags, code, extra_env = contenders[name]
            copy = common.fresh_copy(source, f"process-cpu-{name}")
            command = bench_startup.run_command(copy, options, 2, flags)
            env = {**os.environ, "PYTHONPATH": str(code), **extra_env}
            if args.bytecode_cache:
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                env["PYTHONPYCACHEPREFIX"] = str(Path(args.bytecode_cache).resolve())
            common.settle()
            load = os.getloadavg()[0]
            try:
                record = sample_run(command, args.interval, env, code)
            finally:
                shutil.rmtree(copy, ignore_errors=True)
            record["load"] = load
            if rep < 0:
                continue
            runs[name].append(record)
            print(f"[process_cpu] rep {rep + 1} {name}: wall {record['wall']:.2f} load {load:.2f} "
                  f"in_wait {record['in_wait']} total {record['total']} jvm {_r(record['jvm_threads'])} "
                  f"driver {_r(record['driver_threads'])} workers {record['workers']}", flush=True)  # fmt: skip
    summary = {name: _summary(records) for name, records in runs.items()}
    print(json.dumps(summary, indent=1))
    common.write_json(Path(args.out), {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv[1:],
                                       "code_sha256": common.code_fingerprint(), "summary": summary, "runs": runs})
    return 0


def _r(values: dict, top: int = 8) -> dict:
    return {k: round(v, 2) for k, v in sorted(values.items(), key=lambda kv: -kv[1])[:top]}


def _summary(records: list[dict]) -> dict:
    def med(key: str) -> dict:
        keys = {k for r in records for k in r[key]}
        return {k: [round(statistics.median(r[key].get(k, 0.0) for r in records), 2),
                    round(min(r[key].get(k, 0.0) for r in records), 2),
                    round(max(r[key].get(k, 0.0) for r in records), 2)] for k in sorted(keys)}  # fmt: skip

    return {"wall": round(statistics.median(r["wall"] for r in records), 2),
            "load": [round(r["load"], 2) for r in records], "in_wait": med("in_wait"), "total": med("total"),
            "jvm_threads": med("jvm_threads"), "phases": med("phases")}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
