"""``hoodie.properties`` text (hudi_cluster_core/javaprops.py, through ``javaproperties``): what we write, Java's
``java.util.Properties.load`` reads back as the same map; what we read is what ``Properties.load`` reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core import javaprops
from tests.support.arrow_strategies import examples

# Keys and values with every character the format escapes or treats specially, and any other.
TEXT = st.text(st.one_of(st.sampled_from(" \t\f\r\n=:#!\\\x00\x7f\u00e9\ufeff\U0001f600"), st.characters()), max_size=12)
MAPS = st.dictionaries(TEXT, TEXT, max_size=6)


@examples(200)
@given(MAPS, st.one_of(st.none(), TEXT))
def test_dump_then_parse_is_the_same_map(props, header):
    text = javaprops.dump(props, header=header)
    assert javaprops.parse(text) == props
    assert text.isascii()  # \uXXXX escapes: any reader's charset reads it the same
    assert text.endswith("\n") or not text  # nothing at all for no entries and no header


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=1\nb : 2\nc 3\n  d\t=\t4  \n", {"a": "1", "b": "2", "c": "3", "d": "4  "}),
        ("# c\n! c\nk=v\\\n   w\n", {"k": "vw"}),  # a continuation line's leading blanks go
        ("k=\\u00e9\\t\\\\", {"k": "\u00e9\t\\"}),
        ("\\\n#k=v", {"#k": "v"}),  # a continued line is never a comment, even when all before it was the backslash
        ("k\\\fx=v", {"k\fx": "v"}),  # an escaped form feed is part of the key, not a line break
        ("k=\\uD83D\\uDE00", {"k": "\U0001f600"}),  # a surrogate pair is one character
        ("k=1\r\nk=2\r", {"k": "2"}),  # the last of a repeated key wins; \r\n and \r end lines
    ],
)  # fmt: skip
def test_parse_as_java_does(text, expected):
    assert javaprops.parse(text) == expected


def test_a_malformed_unicode_escape_is_an_error_as_in_java():
    with pytest.raises(ValueError):
        javaprops.parse("k=\\u00zz")


_LOAD_JAVA = """
import java.io.*; import java.nio.charset.StandardCharsets; import java.util.*;
public class Load {
  public static void main(String[] args) throws Exception {
    for (int i = 0; i < args.length; i++) {
      Properties props = new Properties();
      try (Reader in = new InputStreamReader(new FileInputStream(args[i]), StandardCharsets.UTF_8)) { props.load(in); }
      StringBuilder out = new StringBuilder();
      for (String key : new TreeSet<>(props.stringPropertyNames()))
        out.append(hex(key)).append('=').append(hex(props.getProperty(key))).append(' ');
      System.out.println(out);
    }
  }
  static String hex(String s) {
    StringBuilder b = new StringBuilder();
    for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c));
    return b.toString();
  }
}
"""


def _java_view(props: dict[str, str]) -> str:
    """What ``Load`` prints for ``props``: UTF-16 code units, keys in Java's (UTF-16) order."""

    def hexed(text: str) -> str:
        units = text.encode("utf-16-be", "surrogatepass")
        return "".join(f"{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))

    keys = sorted(props, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    return "".join(f"{hexed(k)}={hexed(props[k])} " for k in keys)


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JDK (Spark's tests need one anyway)")
@examples(3)  # one JVM per example, reading them all
@given(st.lists(MAPS, min_size=20, max_size=40))
def test_java_properties_load_reads_what_we_dump(maps):
    maps = [*maps, {"hoodie.table.name": "t", "hoodie.table.metadata.partitions": "files,column_stats",
                    " lead": " v:=#!\\", "k\u00e9\U0001f600": "\t\n\r\f\x01\x7f", "": ""}]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="javaprops-") as scratch:
        source = os.path.join(scratch, "Load.java")
        with open(source, "w") as out:
            out.write(_LOAD_JAVA)
        files = []
        for n, props in enumerate(maps):
            files.append(os.path.join(scratch, f"{n}.properties"))
            with open(files[-1], "wb") as out:
                out.write(javaprops.dump(props, header="written by hudi-cluster").encode("utf-8"))
        run = subprocess.run(["java", source, *files], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[: len(maps)] == [_java_view(props) for props in maps], json.dumps(maps)
