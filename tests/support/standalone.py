"""A Spark standalone cluster on loopback for tests: one master and N workers, started from the pyspark install's
``bin/spark-class``, stopped (and their processes reaped) whatever happens.

The workers can be given a ``python3`` of their own (``worker_python_dir`` first on their PATH): executors run the
Python the driver names (``PYSPARK_PYTHON``, ``python3`` by default) as found on *their* PATH, so a bare venv there
makes executors that do not share the driver's environment, as on a real cluster.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
# variables of this process that would leak a driver's set-up into the cluster or into a submitted driver
SCRUBBED = ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_MASTER", "VIRTUAL_ENV", "PYTHONPATH")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without Spark/PySpark/venv variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED and not k.startswith(("PYSPARK_", "HUDI_CLUSTER_"))}
    env.update(extra)
    return env


@dataclass
class StandaloneCluster:
    root: Path
    workers: int = 2
    worker_cores: int = 1
    worker_memory: str = "3g"  # what executors may ask for (an allowance: a small job's JVMs use far less)
    worker_python_dir: Path | None = None
    master_url: str = ""
    web_url: str = ""
    processes: list[subprocess.Popen] = field(default_factory=list)

    def __enter__(self) -> StandaloneCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spawn(self, name: str, *args: str, path_first: Path | None = None) -> None:
        env = clean_env(SPARK_HOME=str(SPARK_HOME), SPARK_NO_DAEMONIZE="1", SPARK_DAEMON_MEMORY="256m",
                        SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(self.root / "logs"))  # fmt: skip
        if path_first is not None:
            env["PATH"] = f"{path_first}:{env.get('PATH', '')}"
        log = open(self.root / f"{name}.log", "w")
        self.processes.append(subprocess.Popen([str(SPARK_CLASS), *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True))  # fmt: skip
        log.close()

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        port, web = free_port(), free_port()
        self.master_url, self.web_url = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web}"
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                    "--webui-port", str(web))  # fmt: skip
        self._wait(lambda state: state.get("status") == "ALIVE", "the master")
        for n in range(self.workers):
            self._spawn(f"worker{n}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                        "--cores", str(self.worker_cores), "--memory", self.worker_memory, "--webui-port", str(free_port()),
                        "--work-dir", str(self.root / f"work{n}"), self.master_url, path_first=self.worker_python_dir)  # fmt: skip
        self._wait(lambda state: state.get("aliveworkers") == self.workers, f"{self.workers} workers")

    def state(self) -> dict:
        """The master's JSON view: workers, running and completed applications (memory per executor, cores)."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as reply:
            return json.load(reply)

    def _wait(self, ready, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"a cluster process exited while waiting for {what}: {self.logs()}")
            try:
                if ready(self.state()):
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}: {self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(self.root.glob("*.log")))

    def executor_dirs(self, app_id: str) -> list[Path]:
        """Each executor's working directory of ``app_id``, on every worker (where archives are unpacked)."""
        return sorted(d for n in range(self.workers) for d in (self.root / f"work{n}" / app_id).glob("*") if d.is_dir())

    def stop(self) -> None:
        """Workers first, then the master; each process group is sent SIGTERM, then SIGKILL after 20 s."""
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.processes.clear()


def event_log(directory: Path, app_id: str) -> list[dict]:
    """The events of one application's Spark event log (``spark.eventLog.enabled``)."""
    return [json.loads(line) for line in (directory / app_id).read_text().splitlines() if line.strip()]


def task_executors(events: list[dict]) -> list[str]:
    """The executor id each successful task ran on."""
    return [e["Task Info"]["Executor ID"] for e in events
            if e["Event"] == "SparkListenerTaskEnd" and e["Task End Reason"]["Reason"] == "Success"]  # fmt: skip


def added_executors(events: list[dict]) -> dict[str, str]:
    """Executor id -> the web address of the worker that launched it (from the executor's log URL)."""
    found = {}
    for event in events:
        if event["Event"] == "SparkListenerExecutorAdded":
            url = event["Executor Info"]["Log Urls"]["stderr"]
            found[event["Executor ID"]] = url.split("/logPage")[0]
    return found
