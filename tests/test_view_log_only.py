"""The view's log-to-slice rule for file groups without a base file (bucket tables write them), checked against
hudi-rs's slices: one slice holds every committed log, not one slice per log (docs/format.md#file-slices-in-apache-hudi,
docs/format.md#file-slices-in-hudi-rs)."""

from __future__ import annotations

from hudi import HudiTable

from hudi_cluster_core.table import load_table
from tests.test_table import writable_copy

LOG_ONLY = "0b5e7c1a-3f2d-4c8e-9a61-7d0e2b4f8c35-0"
V9 = "mor_v9_txns_nonpart_nometa"
V9_DELTAS = ("20260307135929444", "20260307135933015", "20260307135937880")  # completed deltacommits
V6 = "mor_v6_trips_8i1u"


def _add_logs(base, partition: str, instant_versions) -> list[str]:
    names = [f".{LOG_ONLY}_{instant}.log.{version}_0-1-{version}" for instant, version in instant_versions]
    for name in names:
        (base / partition / name).write_bytes(b"#HUDI#")
    return names


def _hudi_rs_slices(base) -> set:
    return {(s.partition_path, s.file_id, s.base_file_name or None, tuple(s.log_file_names))
            for s in HudiTable(str(base)).get_file_slices()}  # fmt: skip


def _our_slices(view) -> set:
    return {(s.partition, s.file_id, s.base_file.name if s.base_file else None, tuple(l.name for l in s.log_files))
            for s in view.latest_file_slices()}  # fmt: skip


def test_v9_log_only_file_group_is_one_slice_with_every_committed_log(tmp_path):
    base = writable_copy(V9, tmp_path)
    logs = _add_logs(base, "", [(t, 1) for t in V9_DELTAS])
    _add_logs(base, "", [("20990101000000000", 1)])  # no such instant: never committed
    view = load_table(str(base)).view()
    (log_only,) = [s for s in view.latest_file_slices() if s.file_id == LOG_ONLY]
    assert log_only.base_file is None and [l.name for l in log_only.log_files] == logs
    assert log_only.base_instant == V9_DELTAS[0]
    assert view.file_slices("", LOG_ONLY) == [log_only]
    assert _our_slices(view) == _hudi_rs_slices(base)


def test_v6_log_only_file_group_keeps_its_log_versions_together(tmp_path):
    base = writable_copy(V6, tmp_path)
    partition = "city=chennai"
    logs = _add_logs(base, partition, [("20250331030642808", 1), ("20250331030642808", 2)])
    view = load_table(str(base)).view()
    (log_only,) = [s for s in view.latest_file_slices() if s.file_id == LOG_ONLY]
    assert log_only.partition == partition and [l.name for l in log_only.log_files] == logs
    assert _our_slices(view) == _hudi_rs_slices(base)


def test_latest_file_slices_of_some_partitions(tmp_path):
    view = load_table(str(writable_copy(V6, tmp_path))).view()
    everything = view.latest_file_slices()
    chennai = view.latest_file_slices(partitions=["city=chennai", "no=such"])
    assert chennai == [s for s in everything if s.partition == "city=chennai"] and chennai
    assert view.latest_file_slices(partitions=[]) == []
    assert view.file_slices("city=chennai", "no-such-file-group") == []
