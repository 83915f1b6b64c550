"""Local runs without Spark: a clustering's tasks in a pool of Python processes on this machine.

Spark only schedules our tasks (run/spark.py): each runs in a Python worker, Arrow in and Arrow out. On a local
master the JVM that schedules them costs about 1.7 CPU s and 2 s of wall time per run (bench/README.md, issue
24): more than the work itself on a small table. A run that would build a local Spark session of its own runs
its tasks here instead (:func:`local_cores` says when): the same unit of work (``unit_work.run_unit``: write
tokens, progress, the rewrite check), in worker processes forked from a server that imported the task's modules
once (multiprocessing's fork server: run/fork_server.py, run/local_worker.py), as Spark's worker daemon does.

What a local Spark master does, kept:
* up to ``parallelism`` groups at once, largest first, and every free core takes the next waiting unit;
* a failed task fails the run (a local master retries nothing); the other tasks are killed and waited for before
  the caller rolls back, so no task writes a file after the rollback; a Ctrl-C or SIGTERM does the same;
* a worker dies with the driver (run/local_worker.py), so a driver killed mid-run leaves no task writing;
* the memory budget per task is the run's (``hudi.cluster.task.memory.bytes``).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import re
import signal
import sys
import time
import warnings
from multiprocessing import connection as mp_connection
from multiprocessing import spawn
from typing import TYPE_CHECKING, Iterable

from .. import errors
from ..errors import ConfigError, RunFailed
from .progress import JobProgress, Tally

if TYPE_CHECKING:  # the tasks' modules are imported by the run, after the CLI has started the server (begin())
    from .task import GroupTask

ENGINES = ("auto", "local", "spark")
ENGINE_ENV = "HUDI_CLUSTER_ENGINE"
_LOCAL_MASTER = re.compile(r"local(?:\[(\*|[1-9][0-9]*)\])?")
_SERVER_MODULE = "hudi_cluster_core.run.fork_server"
_STOP_S = 10.0


def local_cores(engine: str | None, master: str | None, spark_memory: str | None, spark_conf: Iterable[str],
                *, spark_given: bool = False) -> int | None:  # fmt: skip
    """The cores of a run whose tasks run in :class:`LocalPool`, or None when they run on Spark.

    ``engine`` (``--engine``, else ``HUDI_CLUSTER_ENGINE``, else ``auto``): ``spark`` always uses Spark;
    ``auto`` uses the pool where the run would build a local session of its own (no session given, none running,
    not under ``spark-submit``; master ``local``, ``local[N]`` or ``local[*]``: a master with retries,
    ``local[N,F]``, is Spark's) and no Spark setting is asked for (``--spark-memory``, ``--spark-conf``);
    ``local`` uses the pool, and is refused where it cannot apply."""
    chosen = (engine or os.environ.get(ENGINE_ENV) or "auto").strip().lower()
    if chosen not in ENGINES:
        raise ConfigError(f"--engine {engine or os.environ.get(ENGINE_ENV)!r}: accepted: {', '.join(ENGINES)}")
    if chosen == "spark":
        return None
    effective = master or os.environ.get("SPARK_MASTER") or "local[*]"
    found = _LOCAL_MASTER.fullmatch(effective.strip())
    why_not = (
        "it was given a Spark session" if spark_given else
        "it runs under spark-submit" if "PYSPARK_GATEWAY_PORT" in os.environ else
        "a Spark session is already running in this process" if _spark_running() else
        f"its Spark master is {effective!r} (a local run takes local, local[N] or local[*])" if not found else
        "--spark-memory / --spark-conf configure a Spark session" if spark_memory or list(spark_conf) else None
    )  # fmt: skip
    if why_not is not None or found is None:
        if chosen == "local":
            raise ConfigError(f"--engine local: this run cannot run without Spark: {why_not}; "
                              "accepted: --engine spark or auto")  # fmt: skip
        return None
    cores = found.group(1)  # Spark's "local" is one core, "local[*]" every core
    if cores is None:
        return 1
    return (os.cpu_count() or 1) if cores == "*" else int(cores)


def _spark_running() -> bool:
    """A SparkContext is active in this process (pyspark is not imported for the question)."""
    pyspark = sys.modules.get("pyspark")
    return pyspark is not None and getattr(pyspark, "SparkContext", None) is not None and \
        pyspark.SparkContext._active_spark_context is not None


def _context():
    """The fork server's context; it imports the worker's modules once, as it starts (the first pool's start)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([_SERVER_MODULE])
    if spawn.get_preparation_data is not _preparation_data:
        _ORIGINAL_PREPARATION[0] = spawn.get_preparation_data
        spawn.get_preparation_data = _preparation_data
    return context


_WORKER_NAME = "hudi-cluster-task"
_ORIGINAL_PREPARATION = [spawn.get_preparation_data]


def _preparation_data(name):
    """multiprocessing's data for a new process, without the main module for our workers: a process started
    another way than fork runs the caller's ``__main__`` again first, so a script calling ``cluster()`` without
    an ``if __name__ == "__main__":`` guard would call it again in every worker. A worker needs nothing of it."""
    data = _ORIGINAL_PREPARATION[0](name)
    if name == _WORKER_NAME:
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


class LocalPool:
    """Runs a clustering's units of work on ``cores`` worker processes, started for each :meth:`run_units` and
    ended by it. ``begin()`` starts the fork server (once per process), so its imports overlap the driver's
    planning."""

    def __init__(self, cores: int):
        self.cores = max(1, cores)
        self.python_memory = None  # Spark's Python worker memory setting: none here

    def begin(self) -> LocalPool:
        from multiprocessing import forkserver, resource_tracker

        _context()
        # the server starts with Ctrl-C blocked (a mask survives exec): a terminal's Ctrl-C reaches the whole
        # process group, and in the middle of the server's imports it would print a traceback; the driver acts on
        # it (this thread's mask only: another thread, or this one after, takes it). multiprocessing's resource
        # tracker first: it starts with the same signals blocked, and unblocks them in this thread after
        with warnings.catch_warnings():
            # the tracker is multiprocessing's, for shared memory and semaphores, which the pool never makes: a
            # tracker that could not start (a Python this user may not run again) is not the run's to report
            warnings.simplefilter("ignore")
            resource_tracker.ensure_running()
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                forkserver.ensure_running()  # a process of its own: it imports the worker's modules meanwhile
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return self

    def run_units(self, tasks: list[GroupTask], parallelism: int, group_bytes: list[int] | None = None,
                  rows_read: list[int] | None = None, task_starts: list[float] | None = None) -> list[list[dict]]:  # fmt: skip
        """``unit_work.Engine.run_units`` on this machine's processes: a failed unit's error keeps its type for our
        own errors, else it is one line."""
        if not tasks:
            return []
        from .unit_work import jobs_in_order

        jobs, sizes = jobs_in_order(tasks, group_bytes)
        order = [(index, position) for job in jobs for position, index in enumerate(job)]
        slots = max(1, min(parallelism, len(jobs)))
        workers: list[_Worker] = []
        busy: dict[_Worker, int] = {}
        results: dict[int, tuple[list[dict], int, float]] = {}
        tally = Tally()
        progress = JobProgress(f"clustering {tasks[0].instant_time}", sizes, tally, lambda: len(busy),
                               ("127.0.0.1", "127.0.0.1"))  # fmt: skip
        environment = {k: v for k, v in os.environ.items() if k.startswith("HUDI_CLUSTER_")}
        ok = False
        progress.start()
        try:
            context = _context()
            workers = [_Worker(context) for _ in range(min(self.cores, len(tasks)))]
            waiting = list(order)
            running_groups: dict[int, int] = {}  # group index -> units running or waiting to finish
            while waiting or busy:
                for worker in [w for w in workers if w not in busy]:
                    pick = next((n for n, (i, _) in enumerate(waiting)
                                 if tasks[i].group.index in running_groups or len(running_groups) < slots), None)  # fmt: skip
                    if pick is None:
                        break
                    index, position = waiting.pop(pick)
                    group = tasks[index].group.index
                    running_groups[group] = running_groups.get(group, 0) + 1
                    worker.send((position, tasks[index], index, sizes[index], (progress.address, progress.token),
                                 index, environment))  # fmt: skip
                    busy[worker] = index
                ready = mp_connection.wait([w.connection for w in busy], timeout=0.2)
                for worker in [w for w in busy if w.connection in ready]:
                    index = busy.pop(worker)
                    reply = worker.receive()
                    if reply[0] != "ok":
                        raise _task_error(reply[1], reply[2])
                    results[index] = reply[1], reply[2], reply[3]
                    tally.add((1, sizes[index], frozenset((index,))))
                    group = tasks[index].group.index
                    running_groups[group] -= 1
                    if running_groups[group] == 0 and not any(tasks[i].group.index == group for i, _ in waiting):
                        del running_groups[group]
            ok = True
        finally:
            _stop(workers, kill=not ok)  # on a failure or a signal: no task goes on writing once we return
            progress.finish(ok=ok)
        if rows_read is not None:
            rows_read.extend(results[i][1] for i in range(len(tasks)))
        if task_starts is not None:
            task_starts.extend(results[i][2] for i in range(len(tasks)))
        return [results[i][0] for i in range(len(tasks))]


def _serve(connection) -> None:
    """A worker's function (pickled by name): the worker module is the fork server's, never imported here."""
    from .local_worker import serve

    serve(connection)


class _Worker:
    def __init__(self, context):
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs,), name=_WORKER_NAME, daemon=True)
        self.process.start()
        theirs.close()

    def send(self, work: tuple) -> None:
        data = pickle.dumps(work, protocol=pickle.HIGHEST_PROTOCOL)
        if b"__main__" in data:
            # a strategy (or its params) defined in the caller's script: pickle names its class, which a worker
            # cannot import (it runs no __main__); cloudpickle (pyspark's) ships it by value, as a Spark task gets it
            from pyspark import cloudpickle

            data = cloudpickle.dumps(work, protocol=pickle.HIGHEST_PROTOCOL)
        self.connection.send_bytes(data)

    def receive(self) -> tuple:
        try:
            return pickle.loads(self.connection.recv_bytes())
        except (EOFError, OSError):  # the process ended mid-task: killed (out of memory?) or crashed
            self.process.join(1)
            raise RunFailed(f"a clustering task's process ended (exit code {self.process.exitcode}) before "
                            "finishing its work") from None  # fmt: skip


def _stop(workers: list[_Worker], *, kill: bool) -> None:
    """Ends the workers: asked to stop after their work, or killed at once (``kill``); waits until they are gone."""
    for worker in workers:
        try:
            if kill:
                worker.process.kill()
            else:
                worker.connection.send_bytes(b"")
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + _STOP_S
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.connection.close()


def _task_error(type_name: str, message: str) -> BaseException:
    """As run/spark.py says a failed Spark task: our own errors keep their type, any other is one line."""
    if type_name.startswith("hudi_cluster_core.errors."):
        error_type = getattr(errors, type_name.rsplit(".", 1)[1], None)
        if error_type is not None:
            return error_type(f"clustering task failed: {message}")
    line = (message.strip().splitlines() or [""])[-1]
    return RunFailed(f"a clustering task failed: {type_name}: {line}"[:560])
