"""What the GCS and Azure tests do alike (tests/test_gcs.py, tests/test_azure.py): a store on its emulator as the
tests see it, the CLI run in its own process with only that store's settings, and the two scenarios every store
goes through, a run killed mid-commit then recovered, and two runs racing under a lock provider, each checked
by hudi-rs reading the rows back from the emulator and by the local checks of runs.py on a copy of the table."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa

from hudi_cluster_core.table import load_table
from tests.support.readers import assert_same_rows, read_hudi_rs
from tests.support.runs import SORT, cli_env, table_problems

STORE_VARIABLES = ("AWS_", "GOOGLE_", "GCE_METADATA", "STORAGE_EMULATOR_HOST", "AZURE_", "CLOUDSDK_")
LOCK_NOTE = "cross-process exclusion on object stores needs a lock provider"


@dataclass
class Store:
    """One emulator as a test uses it."""

    name: str
    uri: Callable[[str], str]  # a prefix under the bucket -> the table's URI as users write it
    upload: Callable[[str, str], int]  # (local table, prefix)
    download: Callable[[str, Path], Path]  # (prefix, local dir)
    keys: Callable[[str], list[str]]  # prefix -> object names
    rs_uri: Callable[[str], str]  # prefix -> the URI hudi-rs reads (the test's own, not the backend's)
    rs_options: dict[str, str]  # hudi-rs options from the emulator's support module
    flags: dict[str, str] = field(default_factory=dict)  # --hoodie-conf keys
    env: dict[str, str] = field(default_factory=dict)  # the process environment's store variables

    def read(self, prefix: str) -> pa.Table:
        return read_hudi_rs(self.rs_uri(prefix), options=self.rs_options)

    @classmethod
    def on_emulator(cls, emulator: Any, bucket: str, *, name: str, uri: Callable[[str], str],
                    rs_uri: Callable[[str], str], flags: dict[str, str] | None = None,
                    env: dict[str, str] | None = None) -> "Store":  # fmt: skip
        """The store of an emulator's ``bucket`` (a container on Azure): objects go in and out through the
        emulator's ``upload_dir``, ``download_dir`` and ``keys``, hudi-rs reads with its ``hudi_rs_options``."""
        return cls(
            name=name, uri=uri, upload=lambda local, prefix: emulator.upload_dir(local, bucket, prefix),
            download=lambda prefix, local: emulator.download_dir(bucket, prefix, local),
            keys=lambda prefix: emulator.keys(bucket, prefix), rs_uri=rs_uri, rs_options=emulator.hudi_rs_options(),
            flags=flags or {}, env=env or {},
        )  # fmt: skip


def clean_env(extra: dict[str, str] | None = None, home: Path | None = None) -> dict[str, str]:
    """The CLI's environment without any store variable of this machine (nothing may reach a real cloud), plus
    ``extra``; gcloud's configuration folder is one that does not exist (no application default credentials)."""
    env = {k: v for k, v in cli_env().items() if not k.startswith(STORE_VARIABLES)}
    if home is not None:
        env["CLOUDSDK_CONFIG"] = str(home / "no-gcloud-config")
    return {**env, **(extra or {})}


def conf_flags(options: dict[str, str]) -> list[str]:
    return [arg for key, value in options.items() for arg in ("--hoodie-conf", f"{key}={value}")]


def cli(store: Store, *args: str, tmp: Path, env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run([sys.executable, "-m", "hudi_cluster_core.cli", *args, *conf_flags(store.flags)],
                          env=clean_env({**store.env, **(env or {})}, tmp), text=True, capture_output=True,
                          timeout=timeout)  # fmt: skip


def run_args(uri: str, *extra: str, mode: str = "scheduleAndExecute") -> list[str]:
    return ["run", "--base-path", uri, "--mode", mode, "--spark-master", "local[1]",
            "--hoodie-conf", SORT, *extra]  # fmt: skip


def completed_clustering(store: Store, prefix: str) -> list[str]:
    return [k for k in store.keys(f"{prefix}/.hoodie/timeline/") if k.endswith(".replacecommit")]


def check_left_clean(store: Store, prefix: str, before: pa.Table, tmp: Path, what: str) -> Path:
    """hudi-rs reads from the emulator the rows it read before; nothing pending, stray or left behind."""
    assert_same_rows(before, store.read(prefix), labels=("before", f"hudi-rs from {store.name} {what}"))
    copy = store.download(prefix, tmp / f"copy-{prefix.replace('/', '-')}")
    assert table_problems(str(copy)) == []
    return copy


def crash_then_recover(store: Store, local: str, prefix: str, tmp: Path) -> str:
    """A Hudi-written table on the store: a CLI run killed inside its commit (the metadata table's log files
    written), the next one rolls it back and clusters; hudi-rs reads the rows it read before, ``show`` sees the
    commit. Returns the line of the recovering run's log that says a lock provider is needed (none was given)."""
    before = read_hudi_rs(local)
    store.upload(local, prefix)
    uri = store.uri(prefix)
    crashed = cli(store, *run_args(uri), tmp=tmp, env={"HUDI_CLUSTER_FAILPOINT": "mdt-after-log-files"})
    assert crashed.returncode < 0, crashed.stderr[-2000:]  # SIGKILL mid-commit
    assert not completed_clustering(store, prefix)

    done = cli(store, *run_args(uri), tmp=tmp)
    assert done.returncode == 0 and "completed" in done.stdout, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and done.stderr.count(LOCK_NOTE) == 1, done.stderr[-2000:]
    assert len(completed_clustering(store, prefix)) == 1
    copy = check_left_clean(store, prefix, before, tmp, "after the recovery")
    instant = completed_clustering(store, prefix)[0].rsplit("/", 1)[1].split("_")[0]
    mdt_timeline = copy / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    assert any(p.name.startswith(f"{instant}_") and p.name.endswith(".deltacommit") for p in mdt_timeline.iterdir())
    assert len(store.read(prefix).column("_hoodie_file_name").unique()) < len(before.column("_hoodie_file_name").unique())

    shown = cli(store, "show", uri, "--json", tmp=tmp)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert instant in shown.stdout and json.loads(shown.stdout)
    return next(line for line in done.stderr.splitlines() if LOCK_NOTE in line)


def racing_runs(store: Store, local: str, prefix: str, lock: dict[str, str], tmp: Path) -> list[str]:
    """Two CLI runs started at once on one table, under the lock provider ``lock``: both end well, each file group
    is clustered once, the rows are unchanged and nothing is left behind; returns both runs' stderr."""
    before = read_hudi_rs(local)
    store.upload(local, prefix)
    uri = store.uri(prefix)
    started = []
    for n in range(2):
        out, err = open(tmp / f"race-{n}.out", "w+"), open(tmp / f"race-{n}.err", "w+")  # files: never a full pipe
        command = [sys.executable, "-m", "hudi_cluster_core.cli", *run_args(uri), *conf_flags({**store.flags, **lock})]
        started.append((subprocess.Popen(command, env=clean_env(store.env, tmp), text=True, stdout=out, stderr=err),
                        out, err))  # fmt: skip
    errors = []
    for process, out, err in started:
        try:
            code = process.wait(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        err.seek(0)
        errors.append(err.read())
        out.close(), err.close()
        assert code == 0 and "Traceback" not in errors[-1], errors[-1][-3000:]
        assert LOCK_NOTE not in errors[-1]  # the lock provider excluded the other run
    assert 1 <= len(completed_clustering(store, prefix)) <= 2
    copy = check_left_clean(store, prefix, before, tmp, "after the race")
    timeline = load_table(str(copy)).timeline
    replaced = [(partition, file_id) for instant in timeline.completed(("replacecommit",))
                for partition, ids in (timeline.commit_metadata(instant).get("partitionToReplaceFileIds") or {}).items()
                for file_id in ids or []]  # fmt: skip
    assert replaced and len(replaced) == len(set(replaced)), replaced  # no file group clustered twice
    return errors

