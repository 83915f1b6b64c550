"""Record keys and partition paths from the key generator (``hudi_cluster_core.table.keygen``), against the real thing.

* **Apache Hudi 1.1.1 as the oracle**: Hudi writes tables *with* meta fields through its datasource (``insert``,
  whose key generators are the ones a virtual-key table's readers and writers use), with each key generator and
  many value types in key and partition fields; every row's ``_hoodie_record_key`` and ``_hoodie_partition_path``
  as Hudi stored them must equal what we compute from the same file's columns.
* **The JVM as the oracle** for how a value becomes text (``Double.toString``, ``Float.toString``,
  ``BigDecimal.toString``, ``LocalDate.toString``), property-tested through the Spark session's gateway.
* What Hudi refuses: a virtual-key table with the timestamp-based or the custom key generator.
"""

from __future__ import annotations

import datetime as dt
import glob
import math
import struct
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_cluster_core.errors import ConfigError, TableError
from hudi_cluster_core.table.java_text import java_big_decimal, java_floating, java_text
from hudi_cluster_core.table.keygen import escape_path_names, key_generator
from tests.support.apache_hudi import read_hoodie_properties, write_hudi_table

# ------------------------------------------------------------------------------------------ no JVM needed


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**37), 10**37), st.integers(0, 38))
def test_arrow_prints_decimals_as_big_decimal(unscaled, scale):
    """Our decimals go through Arrow's cast; it follows BigDecimal.toString (the JVM test checks the reference)."""
    value = _decimal(unscaled, scale)
    arrow = pc.cast(pa.array([value], pa.decimal128(38, scale)), pa.string())[0].as_py()
    assert arrow == java_big_decimal(value)


def _decimal(unscaled: int, scale: int) -> Decimal:
    """Exactly ``unscaled * 10**-scale`` (Decimal arithmetic would round to 28 digits)."""
    return Decimal((int(unscaled < 0), tuple(map(int, str(abs(unscaled)))), -scale))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_java_double_text_reads_back(value):
    text = java_floating(value)
    assert text in ("NaN",) if math.isnan(value) else float(text.replace("Infinity", "inf")) == value
    assert "." in text or text in ("NaN", "Infinity", "-Infinity")


def test_key_text_of_each_type():
    assert java_text(pa.array([1, None, -5], pa.int32())).to_pylist() == ["1", None, "-5"]
    assert java_text(pa.array([True, False])).to_pylist() == ["true", "false"]
    assert java_text(pa.array([0, 2932897, -719529], pa.date32())).to_pylist() == ["1970-01-01", "+10000-01-01", "-0001-12-31"]
    assert java_text(pa.array([-1500], pa.timestamp("us", tz="UTC"))).to_pylist() == ["-1500"]
    assert java_text(pa.array([1e7, 1e-3, 9.999e-4, 0.1, -0.0, 100.0])).to_pylist() == [
        "1.0E7", "0.001", "9.999E-4", "0.1", "-0.0", "100.0"]  # fmt: skip
    assert java_text(pa.array([0.1], pa.float32())).to_pylist() == ["0.1"]
    with pytest.raises(ValueError, match="no key text"):
        java_text(pa.array([b"x"]))


def test_record_keys_and_partitions_by_generator():
    rows = pa.table({"id": ["a", "b"], "n": pa.array([1, None], pa.int64()), "s": ["", "x/y"], "p": ["q=1", None]})
    simple = key_generator({"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "p",
                            "hoodie.datasource.write.partitionpath.urlencode": "true",
                            "hoodie.datasource.write.hive_style_partitioning": "true"})  # fmt: skip
    assert simple.kind == "SIMPLE" and simple.record_keys(rows).to_pylist() == ["a", "b"]
    assert simple.partition_paths(rows).to_pylist() == ["p=q%3D1", "p=__HIVE_DEFAULT_PARTITION__"]
    complex_ = key_generator({"hoodie.table.recordkey.fields": "id,n,s", "hoodie.table.partition.fields": "s,p"})
    assert complex_.record_keys(rows).to_pylist() == ["id:a,n:1,s:__empty__", "id:b,n:__null__,s:x/y"]
    assert complex_.partition_paths(rows).to_pylist() == ["__HIVE_DEFAULT_PARTITION__/q=1", "x/y/__HIVE_DEFAULT_PARTITION__"]
    single = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "p", "hoodie.table.keygenerator.type": "COMPLEX"}
    assert key_generator({**single, "hoodie.table.version": "9"}).record_keys(rows).to_pylist() == ["id:a", "id:b"]
    assert key_generator({**single, "hoodie.table.version": "8"}).record_keys(rows).to_pylist() == ["id:a", "id:b"]
    new_encoding = {**single, "hoodie.table.version": "8", "hoodie.write.complex.keygen.new.encoding": "true"}
    assert key_generator(new_encoding).record_keys(rows).to_pylist() == ["a", "b"]
    none = key_generator({"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": ""})
    assert none.kind == "NON_PARTITION" and none.partition_paths(rows).to_pylist() == ["", ""]
    with pytest.raises(TableError, match="record key field 'n' is null or empty in 1 row"):
        key_generator({"hoodie.table.recordkey.fields": "n"}).record_keys(rows)


def test_escape_is_hudis():
    assert escape_path_names(pa.array(["a/b c", "%#?", "ü\x01", None])).to_pylist() == ["a%2Fb c", "%25%23%3F", "ü%01", None]


@pytest.mark.parametrize("props, message", [
    ({"hoodie.table.keygenerator.class": "com.acme.MyKeyGen"}, "hoodie.table.keygenerator.class=com.acme.MyKeyGen"),
    ({"hoodie.table.keygenerator.type": "FANCY"}, "hoodie.table.keygenerator.type=FANCY: accepted: SIMPLE"),
    ({"hoodie.table.keygenerator.type": "CUSTOM", "hoodie.table.partition.fields": "a:fancy"}, "field:SIMPLE or field:TIMESTAMP"),
    ({"hoodie.table.keygenerator.type": "TIMESTAMP", "hoodie.table.partition.fields": "t",
      "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS", "hoodie.keygen.timebased.output.dateformat": "yyyy-ww"},
     "hoodie.keygen.timebased.output.dateformat='yyyy-ww': the Joda letter 'w'"),
    ({"hoodie.table.keygenerator.type": "TIMESTAMP", "hoodie.table.partition.fields": "t",
      "hoodie.keygen.timebased.timestamp.type": "WEEKS"}, "hoodie.keygen.timebased.timestamp.type='WEEKS': accepted"),
    ({"hoodie.table.recordkey.fields": ""}, "hoodie.table.recordkey.fields is empty"),
    ({"hoodie.datasource.write.hive_style_partitioning": "yes"}, "hive_style_partitioning='yes': accepted: true, false"),
])  # fmt: skip
def test_bad_key_generator_settings_name_the_key(props, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("?", r"\?")):
        key_generator({"hoodie.table.recordkey.fields": "id", **props})


# ------------------------------------------------------------------------------------- the JVM as the oracle


@pytest.fixture(scope="module")
def jvm(spark):
    return spark.sparkContext._jvm


@settings(max_examples=400, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=True))
def test_doubles_as_the_jvm_prints_them(jvm, value):
    """Java 17's text exactly, including where it is longer than the shortest (JDK-4511638, fixed in JDK 19)."""
    assert java_floating(value) == jvm.java.lang.Double.toString(value)


@settings(max_examples=300, deadline=None)
@given(value=st.floats(width=32, allow_nan=False))
def test_floats_as_the_jvm_prints_them(jvm, value):
    bits = struct.unpack(">i", struct.pack(">f", value))[0]
    assert java_floating(value, single=True) == jvm.java.lang.Float.toString(jvm.java.lang.Float.intBitsToFloat(bits))


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**37), 10**37), st.integers(0, 38))
def test_decimals_as_the_jvm_prints_them(jvm, unscaled, scale):
    # py4j hands a BigDecimal back as a Python Decimal: Java prints it inside the JVM (Objects.toString)
    java = jvm.java.util.Objects.toString(jvm.java.math.BigDecimal(f"{unscaled}E{-scale}"))
    ours = java_text(pa.array([_decimal(unscaled, scale)], pa.decimal128(38, scale)))[0].as_py()
    assert ours == java


@settings(max_examples=200, deadline=None)
@given(st.integers(-1_000_000, 3_500_000))
def test_dates_as_the_jvm_prints_them(jvm, day):
    assert java_text(pa.array([day], pa.date32()))[0].as_py() == jvm.java.time.LocalDate.ofEpochDay(day).toString()


# ------------------------------------------------------------------------------- Apache Hudi as the oracle

_UNICODE = ("plain", "ünïcödé", "日本語", "emoji 🚀", "a/b", "x=y", "sp ace", "per%cent", "q?#")
TYPED = pa.schema([
    ("id", pa.string()), ("ts", pa.int64()), ("i", pa.int32()), ("l", pa.int64()), ("dec", pa.decimal128(12, 4)),
    ("zero", pa.decimal128(20, 10)), ("day", pa.date32()), ("at", pa.timestamp("us", tz="UTC")), ("flag", pa.bool_()),
    ("dbl", pa.float64()), ("text", pa.string()), ("event_ms", pa.int64()), ("event_s", pa.string()),
    ("nested", pa.struct([("a", pa.int32()), ("b", pa.string())])),
])  # fmt: skip


def typed_rows(count: int = 40) -> pa.Table:
    base = dt.datetime(1969, 12, 30, 23, 59, 59, 999_999, tzinfo=dt.timezone.utc)
    return pa.table({
        "id": [f"k{i:03d}" + _UNICODE[i % len(_UNICODE)] for i in range(count)],
        "ts": list(range(count)),
        "i": [None if i % 7 == 3 else (-1) ** i * i * 1000 for i in range(count)],
        "l": [[-(2**63), 2**63 - 1, 0, -1, 2**40][i % 5] for i in range(count)],
        "dec": [None if i % 9 == 4 else Decimal((-1) ** i * i * 1237).scaleb(-4) for i in range(count)],
        "zero": [Decimal(0) if i % 3 == 0 else Decimal(i).scaleb(-10) for i in range(count)],
        "day": [None if i % 8 == 5 else dt.date(1969, 7, 20) + dt.timedelta(days=i * 400 - 8000) for i in range(count)],
        "at": [None if i % 6 == 1 else base + dt.timedelta(days=i * 97, microseconds=i * 7) for i in range(count)],
        "flag": [None if i % 5 == 2 else i % 2 == 0 for i in range(count)],
        "dbl": [[0.1, -2.5, 1e21, 1e-5, 123456789.125, -0.0][i % 6] for i in range(count)],
        "text": [None if i % 10 == 9 else ("" if i % 10 == 8 else _UNICODE[i % len(_UNICODE)]) for i in range(count)],
        "event_ms": [1_700_000_000_000 + (i % 4) * 86_400_000 - i * 3_600_000 for i in range(count)],
        "event_s": [f"2024-0{1 + i % 9}-1{i % 10} 0{i % 10}:30:00" for i in range(count)],
        # Hudi refuses a record key field under a null struct; a null field is fine
        "nested": [{"a": None if i % 11 == 10 else i, "b": None if i % 7 == 1 else _UNICODE[i % 4]} for i in range(count)],
    }, schema=TYPED)  # fmt: skip


KEYGEN = "hoodie.datasource.write.keygenerator.class"
TIMEKEY = {"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
           "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd'h'HH", "hoodie.keygen.timebased.timezone": "Asia/Kolkata"}
CASES = {
    # name: (record key fields, partition fields, writer options)
    "complex_all_types": ("id,i,l,dec,zero,day,at,flag,dbl,text,nested.a", "day,text",
                          {KEYGEN: "org.apache.hudi.keygen.ComplexKeyGenerator"}),
    "complex_hive_urlencode": ("id,text", "text,dec", {KEYGEN: "org.apache.hudi.keygen.ComplexKeyGenerator",
                               "hoodie.datasource.write.hive_style_partitioning": "true",
                               "hoodie.datasource.write.partitionpath.urlencode": "true"}),
    "complex_one_field": ("id", "flag", {KEYGEN: "org.apache.hudi.keygen.ComplexKeyGenerator"}),
    "simple_long_key_decimal_partition": ("l", "dec", {KEYGEN: "org.apache.hudi.keygen.SimpleKeyGenerator",
                                          "hoodie.datasource.write.partitionpath.urlencode": "true"}),
    "simple_unicode_key_nested_partition": ("id", "nested.b", {KEYGEN: "org.apache.hudi.keygen.SimpleKeyGenerator",
                                            "hoodie.datasource.write.hive_style_partitioning": "true"}),
    "nonpartitioned_one_field": ("id", "", {KEYGEN: "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}),
    "nonpartitioned_two_fields": ("id,day", "", {KEYGEN: "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}),
    "timestamp_epoch_millis": ("id", "event_ms", {KEYGEN: "org.apache.hudi.keygen.TimestampBasedKeyGenerator", **TIMEKEY}),
    "timestamp_date_string": ("id", "event_s", {KEYGEN: "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                              "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
                              "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd HH:mm:ss",
                              "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd-HH",
                              "hoodie.keygen.timebased.timezone": "America/New_York"}),
    "timestamp_scalar_days_of_dates": ("id", "day", {KEYGEN: "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                                       "hoodie.keygen.timebased.timestamp.type": "SCALAR",
                                       "hoodie.keygen.timebased.timestamp.scalar.time.unit": "days",
                                       "hoodie.keygen.timebased.output.dateformat": "yyyy-MM",
                                       "hoodie.keygen.timebased.timezone": "UTC"}),
    "custom_simple_and_timestamp": ("id,i", "text:SIMPLE,event_ms:TIMESTAMP", {
        KEYGEN: "org.apache.hudi.keygen.CustomKeyGenerator", **TIMEKEY,
        "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd", "hoodie.datasource.write.hive_style_partitioning": "true"}),
}  # fmt: skip


def _written_rows(base: str) -> pa.Table:
    files = [f for f in glob.glob(f"{base}/**/*.parquet", recursive=True) if "/.hoodie/" not in f]
    return pa.concat_tables([pq.read_table(f) for f in files])


@pytest.mark.parametrize("case", sorted(CASES))
def test_keys_and_partition_paths_equal_apache_hudis(spark, tmp_path, case):
    record_key, partition_field, options = CASES[case]
    base = str(tmp_path / case)
    write_hudi_table(spark, base, typed_rows(), record_key=record_key, partition_field=partition_field,
                     extra_options=options)  # fmt: skip
    rows = _written_rows(base)
    generator = key_generator(read_hoodie_properties(base), options)
    assert generator.record_keys(rows).to_pylist() == rows["_hoodie_record_key"].to_pylist()
    assert generator.partition_paths(rows).to_pylist() == rows["_hoodie_partition_path"].to_pylist()


@pytest.mark.parametrize("keygen", ["TimestampBasedKeyGenerator", "CustomKeyGenerator"])
def test_apache_hudi_refuses_virtual_keys_with_this_key_generator(spark, tmp_path, keygen):
    """Why no virtual-key table of these generators is among the shapes: Hudi 1.1.1 will not write one."""
    partition = "text:SIMPLE,event_ms:TIMESTAMP" if keygen.startswith("Custom") else "event_ms"
    with pytest.raises(Exception, match="Only simple, non-partitioned or complex key generator are supported"):
        write_hudi_table(spark, str(tmp_path / keygen), typed_rows(4), partition_field=partition, extra_options={
            KEYGEN: f"org.apache.hudi.keygen.{keygen}", **TIMEKEY, "hoodie.populate.meta.fields": "false",
            "hoodie.index.type": "SIMPLE"})  # fmt: skip
