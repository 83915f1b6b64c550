"""The JVM class archive a local run's driver starts from: used where it exists, never in the way where it is
missing or made by another JVM (the JVM then starts as usual, and says nothing)."""

from __future__ import annotations

import subprocess

from hudi_cluster_core.run import jvm_archive


def test_the_driver_options_name_the_archive_only_where_it_exists(tmp_path, monkeypatch):
    archive = tmp_path / "spark-classes.jsa"
    monkeypatch.setenv(jvm_archive.ENV, str(archive))
    assert jvm_archive.archive_path() == archive and jvm_archive.java_options() == ""
    archive.write_bytes(b"made by another JVM")
    assert jvm_archive.java_options() == f"-XX:SharedArchiveFile={archive} {jvm_archive.QUIET}"
    monkeypatch.setenv(jvm_archive.ENV, "")  # empty: no archive at all
    assert jvm_archive.archive_path() is None and jvm_archive.java_options() == ""


def test_the_default_archive_lives_in_the_environment_named_after_pyspark(monkeypatch):
    import sys

    from pyspark.version import __version__

    monkeypatch.delenv(jvm_archive.ENV, raising=False)
    path = jvm_archive.archive_path()
    assert path is not None and str(path).startswith(sys.prefix) and path.name == f"spark-{__version__}-classes.jsa"


def test_a_jvm_given_an_archive_it_cannot_use_starts_and_says_nothing(tmp_path, monkeypatch):
    archive = tmp_path / "spark-classes.jsa"
    archive.write_bytes(b"not an archive")
    monkeypatch.setenv(jvm_archive.ENV, str(archive))
    done = subprocess.run(["java", *jvm_archive.java_options().split(), "-version"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0
    assert [line for line in done.stderr.splitlines() if "version" not in line and "Runtime" not in line
            and "VM" not in line] == []  # fmt: skip
