"""The krecords Python package: every public function, against the Rust library's own output."""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pytest

import krecords
from conftest import REPO, segments

# ---------------------------------------------------------------- package


def test_version() -> None:
    assert isinstance(krecords.__version__, str) and krecords.__version__.count(".") == 2


def test_exception_hierarchy() -> None:
    for e in (krecords.CorruptDataError, krecords.UsageError, krecords.KrecordsIOError):
        assert issubclass(e, krecords.KrecordsError)
    assert issubclass(krecords.KrecordsError, Exception)


def test_docstrings() -> None:
    for name in krecords.__all__:
        obj = getattr(krecords, name)
        if callable(obj):
            assert obj.__doc__, name


# ---------------------------------------------------------------- explain


def krec_explain(krec: str, path: Path) -> List[Dict[str, Any]]:
    p = subprocess.run([krec, "explain", str(path), "--format", "json", "--count", "0"],
                       capture_output=True)
    assert p.returncode in (0, 1), p.stderr
    rows: List[Dict[str, Any]] = json.loads(p.stdout)
    return rows


def test_explain_is_krec_explain(krec: str, demo_segments: List[Path], tmp_path: Path) -> None:
    # Every segment of the demo (v0, v1, v2, codecs, transactions) and damaged copies of one.
    paths = list(demo_segments)
    data = demo_segments[-1].read_bytes()
    flipped = bytearray(data)
    flipped[70] ^= 0xFF  # inside the first batch's records: its CRC no longer checks
    for name, content in (("flipped.log", bytes(flipped)), ("cut.log", data[: len(data) - 7]),
                          ("text.log", b"this is not kafka data at all\n")):
        (tmp_path / name).write_bytes(content)
        paths.append(tmp_path / name)
    for path in paths:
        assert krecords.explain(path.read_bytes()) == krec_explain(krec, path), path
    # Damage is described, not refused.
    fields = [r["field"] for r in krecords.explain(bytes(flipped))]
    assert "error" in fields
    assert krecords.explain(b"") == []


def test_explain_limits_and_types(demo_segments: List[Path]) -> None:
    data = demo_segments[-1].read_bytes()
    rows = krecords.explain(memoryview(data))
    assert rows == krecords.explain(data)
    assert all(isinstance(r["value"], (int, str)) for r in rows)
    # Not bytes-like: refused, and an int is never taken as a size to allocate.
    for bad in (12, 10**12, "text", None):
        for fn in (krecords.explain, krecords.entries, krecords.records):
            with pytest.raises(krecords.UsageError, match="bytes-like"):
                fn(bad)  # type: ignore[arg-type]


def krec_verify(krec: str, path: Path) -> Dict[str, Any]:
    p = subprocess.run([krec, "verify", str(path), "--format", "json"], capture_output=True)
    assert p.returncode in (0, 1), p.stderr
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    return {"problems": [x for x in lines if "summary" not in x], "summary": lines[-1]["summary"]}


def test_verify_is_krec_verify(krec: str, demo_partition: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "orders-0"
    subprocess.run(["cp", "-r", str(demo_partition), str(damaged)], check=True)
    last = segments(damaged)[-1]
    data = bytearray(last.read_bytes())
    data[65] ^= 0xFF
    last.write_bytes(bytes(data))
    for path in (demo_partition, segments(demo_partition)[0], damaged, last):
        assert krecords.verify(path) == krec_verify(krec, path), path
    assert krecords.verify(demo_partition)["problems"] == []
    bad = krecords.verify(str(damaged))
    assert bad["summary"]["problems"] >= 1
    assert bad["problems"][0]["file"] == str(last) and bad["problems"][0]["check"] == "entry"
    with pytest.raises(krecords.KrecordsIOError):
        krecords.verify(tmp_path / "missing.log")
    empty = tmp_path / "nothing"
    empty.mkdir()
    with pytest.raises(krecords.UsageError):
        krecords.verify(empty)  # a directory without segments


@pytest.mark.parametrize("path,type_name", [(b"root", "bytes"), (123, "int"), (None, "NoneType"),
                                            (["a", "b"], "list")])
def test_verify_names_a_path_of_the_wrong_type(path: Any, type_name: str) -> None:
    # A usage error naming the argument, as the scan functions raise for a wrong source.
    with pytest.raises(krecords.UsageError, match=f"^path: expected a path .*, not {type_name}$"):
        krecords.verify(path)


def test_verify_of_a_broker_root_is_krec_verify(krec: str, demo_partition: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for p in (0, 1):
        subprocess.run(["cp", "-r", str(demo_partition), str(root / f"orders-{p}")], check=True)
    last = segments(root / "orders-1")[-1]
    data = bytearray(last.read_bytes())
    data[65] ^= 0xFF
    last.write_bytes(bytes(data))
    # A checkpoint naming a partition without a directory: a problem of the root's own files.
    (root / "recovery-point-offset-checkpoint").write_text("0\n1\norders 9 0\n")
    got = krecords.verify(root, threads=2)
    p = subprocess.run([krec, "verify", str(root), "--format", "json"], capture_output=True)
    assert p.returncode == 1, p.stderr
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    # krec also prints a line per partition ({"partition": {...}}); the problems are the rest.
    want = [x for x in lines if "summary" not in x and not isinstance(x.get("partition"), dict)]
    assert got["problems"] == want
    assert got["summary"] == lines[-1]["summary"]
    assert got["summary"]["partitions"] == 2 and got["summary"]["partitions_with_problems"] == 1
    assert {x.get("partition") for x in got["problems"]} == {"orders-1", None}
    assert krecords.verify(root, threads=1) == got
    with pytest.raises(krecords.UsageError, match="no partition directories"):
        empty = tmp_path / "empty-root"
        empty.mkdir()
        (empty / "meta.properties").write_text("version=1\n")
        krecords.verify(empty)


def test_an_unreachable_broker_is_an_io_error() -> None:
    with pytest.raises(krecords.KrecordsIOError, match="127.0.0.1:1.*refused"):
        krecords.read_table("kafka://127.0.0.1:1/t",
                            config={"socket.connection.setup.timeout.ms": "1000"})


def test_config_without_a_kafka_source_is_a_usage_error(demo_partition: Path, demo_segments: List[Path],
                                                        tmp_path: Path) -> None:
    """`config` is for kafka:// sources: with none among the sources it would be ignored."""
    config = {"socket.connection.setup.timeout.ms": "1000"}
    message = "config applies to kafka:// sources only, and no source given is one"
    for read in (krecords.read_table, krecords.read_batches, krecords.scan):
        with pytest.raises(krecords.UsageError, match=message) as e:
            read(demo_partition, config=config)
        assert f'(sources: "{demo_partition}")' in str(e.value)
    # Every source is named (a list of files, a remote tier location: it takes no config here).
    remote = "s3://bucket/prefix"
    with pytest.raises(krecords.UsageError, match=message) as e:
        krecords.scan([*demo_segments[:2], remote], config=config)
    for name in (*map(str, demo_segments[:2]), remote):
        assert f'"{name}"' in str(e.value)
    # An empty config has nothing to ignore.
    assert krecords.read_table(demo_partition, config={}).num_rows == krecords.read_table(demo_partition).num_rows
    # With a kafka:// source among them, config is read: the broker is tried (nothing listens).
    with pytest.raises(krecords.KrecordsIOError, match="127.0.0.1:1"):
        krecords.read_table([demo_partition, "kafka://127.0.0.1:1/t"], config=config)


def test_ship_usage_errors(demo_partition: Path) -> None:
    # The shipping itself is checked against a real broker (interop/broker/front_door_check.py).
    with pytest.raises(krecords.UsageError, match="the target must be kafka://"):
        krecords.ship(str(demo_partition), "not-a-url")
    with pytest.raises(krecords.UsageError, match="config"):
        krecords.ship(str(demo_partition), "kafka://127.0.0.1:1/t", config={"no.such.property": "1"})
    with pytest.raises(krecords.UsageError):
        krecords.ship([], "kafka://127.0.0.1:1/t")
    # Nothing listens on port 1: refused quickly, as krec ship refuses it; the network failing
    # is an I/O error, as for a source.
    with pytest.raises(krecords.KrecordsIOError, match="127.0.0.1:1"):
        krecords.ship([str(demo_partition)], "kafka://127.0.0.1:1/t",
                      config={"socket.connection.setup.timeout.ms": "1000", "retries": "0"})


def test_what_if_is_krec_stats_what_if(krec: str, demo_segments: List[Path]) -> None:
    for path in demo_segments:
        p = subprocess.run([krec, "stats", "--what-if", "--no-timing", "--threads", "1",
                            "--levels", "zstd:19", str(path), "--format", "json"],
                           capture_output=True, check=True)
        want = json.loads(p.stdout)
        got = krecords.what_if(path.read_bytes(), levels=[("zstd", 19)])
        assert got["rows"] == want["rows"], path
        assert got["what_if"] == want["what_if"], path
        # What is equal, as the docs say: these two keys; the CLI's JSON also has krec stats'
        # own table, which what_if() does not compute.
        assert set(got) == {"what_if", "rows"}, path
        assert set(want) == {"summary", "groups", "what_if", "rows"}, path
        assert any(r["compression"] == "zstd" and r["level"] == 19 for r in got["rows"])
        assert all(r["encode_mb_s"] is None for r in got["rows"])
    timed = krecords.what_if(demo_segments[-1].read_bytes(), timing=True, min_time_ms=1, threads=2)
    assert all(r["decode_mb_s"] is not None for r in timed["rows"] if r.get("error") is None)
    with pytest.raises(krecords.UsageError, match="unknown codec"):
        krecords.what_if(b"", levels=[("brotli", 1)])
    # Input that is not whole, CRC-valid entries is an error, not a table of zeros.
    good = demo_segments[-1].read_bytes()
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    for data in [b"abc", good[:-5], bytes(bad_crc)]:
        with pytest.raises(krecords.CorruptDataError):
            krecords.what_if(data)
    assert krecords.what_if(b"")["rows"] is not None


# ---------------------------------------------------------------- build_batch and entries

RECORDS: List[Dict[str, Any]] = [
    {"timestamp": 1714000000000 + i, "key": f"k{i}", "value": f"value-{i}" * (i + 1),
     "headers": [("h", b"x"), ("n", None)] if i % 2 else []}
    for i in range(7)
]


def jsonl(records: List[Dict[str, Any]]) -> bytes:
    lines = []
    for r in records:
        lines.append(json.dumps({
            "timestamp": r["timestamp"], "key": r["key"], "value": r["value"],
            "headers": [{"key": k, "value": None if v is None else v.decode()} for k, v in r["headers"]],
        }))
    return ("\n".join(lines) + "\n").encode()


BUILD_CASES: List[Tuple[Dict[str, Any], List[str]]] = [
    ({}, []),
    ({"compression": "gzip", "records_per_batch": 3, "base_offset": 100},
     ["--compression", "gzip", "--records-per-batch", "3", "--base-offset", "100"]),
    ({"compression": "zstd", "producer": (7, 2), "base_sequence": 5, "transactional": True},
     ["--compression", "zstd", "--producer-id", "7", "--producer-epoch", "2", "--base-sequence", "5",
      "--transactional"]),
    ({"compression": "lz4", "partition_leader_epoch": 3, "records_per_batch": 2},
     ["--compression", "lz4", "--partition-leader-epoch", "3", "--records-per-batch", "2"]),
    ({"compression": "snappy", "timestamp_type": "log_append_time", "log_append_time": 1714000009999},
     ["--compression", "snappy", "--timestamp-type", "log_append_time", "--log-append-time", "1714000009999"]),
    ({"magic": 1, "compression": "gzip"}, ["--magic", "1", "--compression", "gzip"]),
    ({"magic": 0}, ["--magic", "0"]),
]


def records_for(kwargs: Dict[str, Any]) -> List[Dict[str, Any]]:
    """RECORDS, without headers for magic 0 and 1 (which have none)."""
    if kwargs.get("magic", 2) == 2:
        return RECORDS
    return [dict(r, headers=[]) for r in RECORDS]


@pytest.mark.parametrize("kwargs,args", BUILD_CASES)
def test_build_batch_is_krec_build(krec: str, kwargs: Dict[str, Any], args: List[str]) -> None:
    recs = records_for(kwargs)
    ours = krecords.build_batch(recs, **kwargs)
    theirs = subprocess.run([krec, "build", *args], input=jsonl(recs), capture_output=True, check=True).stdout
    assert ours == theirs


@pytest.mark.parametrize("kwargs,args", BUILD_CASES)
def test_entries_read_back_what_was_built(kwargs: Dict[str, Any], args: List[str]) -> None:
    recs = records_for(kwargs)
    data = krecords.build_batch(recs, **kwargs)
    batches = list(krecords.entries(data))
    assert sum(b.size for b in batches) == len(data)
    got = [r for b in batches for r in b.records()]
    assert [r.offset for r in got] == [kwargs.get("base_offset", 0) + i for i in range(len(RECORDS))]
    for r, want in zip(got, recs):
        assert r.key == want["key"].encode()
        assert r.value == want["value"].encode()
        if kwargs.get("magic", 2) == 2:
            assert r.headers == want["headers"]
        if kwargs.get("magic", 2) == 0:
            assert r.timestamp is None
        elif kwargs.get("timestamp_type") == "log_append_time":
            assert r.timestamp == 1714000009999
        else:
            assert r.timestamp == want["timestamp"]
    b = batches[0]
    assert b.magic == kwargs.get("magic", 2)
    assert b.compression == kwargs.get("compression", "none")
    assert b.crc_valid
    if b.magic == 2:
        assert (b.producer_id, b.producer_epoch) == kwargs.get("producer", (-1, -1))
        assert b.is_transactional == kwargs.get("transactional", False)
        assert b.partition_leader_epoch == kwargs.get("partition_leader_epoch", -1)
        assert b.base_sequence == kwargs.get("base_sequence", -1)
        assert not b.is_control
    assert b.to_bytes() == data[: b.size]
    assert [r.value for r in krecords.records(data)] == [r.value for r in got]


def test_entries_take_any_bytes_like_and_record_objects() -> None:
    data = krecords.build_batch(RECORDS)
    for view in (bytearray(data), memoryview(data)):
        assert [r.value for r in krecords.records(view)] == [r.value for r in krecords.records(data)]
    # Records read back build the same bytes.
    assert krecords.build_batch(krecords.records(data)) == data


def test_entries_hold_their_bytes_and_headers_are_one_list_per_record() -> None:
    # A `bytes` input is read in place: the entries keep it alive after the caller drops it.
    it = krecords.entries(krecords.build_batch(RECORDS))
    gc.collect()
    got = [r for b in it for r in b.records()]
    assert [r.value for r in got] == [r["value"].encode() for r in RECORDS]
    for r, want in zip(got, RECORDS):
        assert r.headers == want["headers"]
        # Made on first access when there are none, then the same list every time.
        assert r.headers is r.headers
        assert r.headers.__class__ is list


def test_records_compare_by_their_fields_and_batches_by_their_entry() -> None:
    data = krecords.build_batch(RECORDS)
    a, b = krecords.records(data), krecords.records(bytearray(data))
    assert a == b and all(x == y for x, y in zip(a, b))
    assert not any(x != y for x, y in zip(a, b))
    assert a[0] != a[1] and a[0] != "a record" and a[0] != a[0].offset
    # Every field counts: the same offset, key and value with another timestamp or headers
    # differ.
    def one(**fields: Any) -> krecords.Record:
        record = {"value": "v", "key": "k", "timestamp": 5, "headers": [("h", b"x")]}
        (r,) = krecords.records(krecords.build_batch([{**record, **fields}]))
        return r
    assert one() == one()
    for changed in ({"value": "w"}, {"key": None}, {"timestamp": 6}, {"headers": []},
                    {"headers": [("h", None)]}, {"headers": [("h", b"x"), ("i", b"y")]}):
        assert one() != one(**changed), changed
    (moved,) = krecords.records(krecords.build_batch([{"value": "v", "key": "k", "timestamp": 5,
                                                        "headers": [("h", b"x")]}], base_offset=1))
    assert one() != moved
    # A record's headers list can change, so it is not hashable (Python's rule for __eq__).
    with pytest.raises(TypeError):
        hash(a[0])
    # Batches: equal when they are the same entry (position and bytes), and hash alike.
    x, y = list(krecords.entries(data)), list(krecords.entries(bytearray(data)))
    assert x == y and hash(x[0]) == hash(y[0]) and len({x[0], y[0]}) == 1
    other = list(krecords.entries(krecords.build_batch(RECORDS, base_offset=1)))
    assert x[0] != other[0] and x[0] != data


def test_build_batch_usage_errors() -> None:
    with pytest.raises(krecords.UsageError):
        krecords.build_batch(RECORDS, compression="brotli")
    with pytest.raises(krecords.UsageError):
        krecords.build_batch(RECORDS, magic=1, producer=(1, 0))
    with pytest.raises(krecords.UsageError):
        krecords.build_batch(RECORDS, magic=0, compression="zstd")


@pytest.mark.parametrize("records,message", [
    ([{"valu": b"x"}], "records\\[0\\]: unknown field 'valu': expected one of offset, partition"),
    ([{"value": b"x"}, {"Value": b"y", "Key": b"k"}], "records\\[1\\]: unknown field 'Value'"),
    ("abc", "a list .* of records, not str"),
    (b"abc", "a list .* of records, not bytes"),
    ({"value": b"x"}, "a list .* of records, not dict"),
    ([1], "records\\[0\\]: a record is a dict .*, not int"),
    ([None], "records\\[0\\]: a record is a dict .*, not NoneType"),
    ([[b"v"]], "records\\[0\\]: a record is a dict .*, not list"),
    ([{"value": b"x", "headers": [("a",)]}], "records\\[0\\]: headers: each header is a \\(key, value\\) tuple or a dict"),
    ([{"value": b"x", "headers": [["a", b"v"]]}], "records\\[0\\]: headers: each header is a \\(key, value\\) tuple"),
    ([{"value": b"x", "headers": [{"key": "a", "val": b"v"}]}],
     "records\\[0\\]: headers: unknown header field 'val': expected key, value"),
    ([{"value": b"x", "headers": [{"value": b"v"}]}], "records\\[0\\]: headers: a header dict needs a key"),
    ([{"value": b"x", "timestamp": "noon"}], "records\\[0\\]: timestamp: "),
])
def test_build_batch_refuses_what_is_not_a_record(records: Any, message: str) -> None:
    """A misspelled field or a non-record would otherwise build a null record: data lost."""
    with pytest.raises(krecords.UsageError, match=message):
        krecords.build_batch(records)


@pytest.mark.parametrize("kwargs,message", [
    ({"log_append_time": 123}, "log_append_time is written only with timestamp_type='log_append_time'"),
    ({"log_append_time": 123, "timestamp_type": "create_time", "magic": 1},
     "log_append_time is written only with timestamp_type='log_append_time'"),
    ({"magic": 0, "timestamp_type": "log_append_time"}, "magic 0 has no timestamps"),
    ({"magic": 0, "log_append_time": 123}, "magic 0 has no timestamps"),
    ({"magic": 0, "timestamp_type": "log_append_time", "log_append_time": 123}, "magic 0 has no timestamps"),
    ({"timestamp_type": "none"}, "timestamp_type 'none' is magic 0's: magic 2 writes create_time"),
    ({"magic": 1, "timestamp_type": "none"}, "timestamp_type 'none' is magic 0's: magic 1 writes"),
])
def test_build_batch_refuses_timestamp_options_it_would_not_write(kwargs: Dict[str, Any], message: str) -> None:
    """An append time the entries would not carry was dropped silently; now it is refused."""
    with pytest.raises(krecords.UsageError, match=message):
        krecords.build_batch(records_for(kwargs), **kwargs)


def test_build_batch_timestamp_options_that_apply() -> None:
    v0 = records_for({"magic": 0})
    # Magic 0 has no timestamps: "none" says so, and builds what the default builds.
    assert krecords.build_batch(v0, magic=0, timestamp_type="none") == krecords.build_batch(v0, magic=0)
    for magic in (1, 2):
        recs = records_for({"magic": magic})
        data = krecords.build_batch(recs, magic=magic, timestamp_type="log_append_time", log_append_time=123)
        assert [r.timestamp for r in krecords.records(data)] == [123] * len(recs)


def test_build_batch_takes_headers_as_tuples_or_krec_build_dicts(krec: str) -> None:
    """`krec build`'s JSON form of a header, {"key": ..., "value": ...}, builds the same bytes as
    a (key, value) tuple, and as krec build does."""
    as_dicts = [dict(r, headers=[{"key": k, "value": v} for k, v in r["headers"]]) for r in RECORDS]
    assert any(r["headers"] for r in as_dicts)
    tuples = krecords.build_batch(RECORDS)
    assert krecords.build_batch(as_dicts) == tuples
    theirs = subprocess.run([krec, "build"], input=jsonl(RECORDS), capture_output=True, check=True).stdout
    assert krecords.build_batch(as_dicts) == theirs
    # As in the JSON, a header's value may be left out: None. Both forms may be mixed.
    one = {"value": b"x", "timestamp": 1}
    assert krecords.build_batch([dict(one, headers=[{"key": "n"}, ("h", b"v")])]) == \
        krecords.build_batch([dict(one, headers=[("n", None), {"key": b"h", "value": "v"}])])


def test_build_batch_levels_are_checked_as_krec_build_checks_them(krec: str) -> None:
    for kwargs, message in [
        ({"compression": "lz4", "level": 3}, "LZ4 HC"),
        ({"compression": "lz4:3"}, "LZ4 HC"),
        ({"compression": "snappy", "level": 3}, "snappy has no levels"),
        ({"level": 3}, "none has no levels"),
        ({"compression": "gzip", "level": 10}, "gzip level 10 outside 1 to 9"),
        ({"compression": "zstd:3", "level": 5}, "give one"),
    ]:
        with pytest.raises(krecords.UsageError, match=message):
            krecords.build_batch(RECORDS, **kwargs)
    # The CLI's spelling is taken, and builds what krec build does with it.
    lines = "".join(json.dumps({"timestamp": r["timestamp"], "key": r["key"], "value": r["value"]}) + "\n"
                    for r in RECORDS)
    want = subprocess.run([krec, "build", "--compression", "zstd:7"], input=lines.encode(),
                          capture_output=True, check=True).stdout
    plain = [{k: r[k] for k in ("timestamp", "key", "value")} for r in RECORDS]
    assert krecords.build_batch(plain, compression="zstd:7") == want
    assert krecords.build_batch(plain, compression="zstd", level=7) == want


def test_truncated_tail_is_quiet_unless_strict() -> None:
    data = krecords.build_batch(RECORDS, records_per_batch=3)
    cut = data[:-5]
    it = krecords.entries(cut)
    assert len(list(it)) == 2
    assert it.trailing_bytes > 0
    with pytest.raises(krecords.CorruptDataError):
        list(krecords.entries(cut, strict=True))
    # records() too: the whole entries' records, the truncated one left out; part of one entry
    # alone gives no record at all.
    assert [r.value for r in krecords.records(cut)] == [r["value"].encode() for r in RECORDS[:6]]
    assert krecords.records(data[:40]) == []
    for truncated in (cut, data[:40]):
        with pytest.raises(krecords.CorruptDataError):
            krecords.records(truncated, strict=True)
    # And both say so.
    for fn in (krecords.entries, krecords.records):
        assert "strict=True" in (fn.__doc__ or ""), fn


def test_bad_crc_is_corrupt_data_with_position() -> None:
    data = bytearray(krecords.build_batch(RECORDS, records_per_batch=3))
    first = next(iter(krecords.entries(bytes(data))))
    data[first.size + 70] ^= 0xFF  # a record byte of the second batch
    batches = list(krecords.entries(bytes(data)))
    assert not batches[1].crc_valid
    with pytest.raises(krecords.CorruptDataError) as e:
        batches[1].records()
    assert e.value.position == first.size
    # Without the check, the records decode.
    assert len(list(krecords.entries(bytes(data), check_crc=False))[1].records()) == 3


# ---------------------------------------------------------------- read_table / read_batches


def dump_records(krec: str, part: Path, isolation: str) -> List[Tuple[int, Optional[str], Optional[str]]]:
    """(offset, key, value) of the records `krec dump --deep` shows."""
    out = subprocess.run(
        [krec, "dump", "--deep", "--format", "json", "--bytes", "hex", "--isolation", isolation, str(part)],
        capture_output=True, check=True,
    ).stdout.decode()
    rows = []
    for line in out.splitlines():
        entry = json.loads(line)
        if entry.get("control") or "records" not in entry:
            continue
        for r in entry["records"]:
            rows.append((r["offset"], r.get("key"), r.get("value")))
    return rows


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_read_table_is_krec_dump(krec: str, demo_partition: Path, isolation: str) -> None:
    table = krecords.read_table(demo_partition, isolation=isolation)
    assert table.schema.names[:3] == ["topic", "partition", "offset"]
    ours = [(r["offset"], None if r["key"] is None else r["key"].hex(), None if r["value"] is None else r["value"].hex())
            for r in table.select(["offset", "key", "value"]).to_pylist()]
    assert ours == dump_records(krec, demo_partition, isolation.replace("_", "-"))
    assert set(table.column("topic").to_pylist()) == {demo_partition.name.rsplit("-", 1)[0]}


def test_read_committed_leaves_out_aborted(demo_partition: Path) -> None:
    committed = krecords.read_table(demo_partition)
    everything = krecords.read_table(demo_partition, isolation="read_uncommitted")
    assert committed.num_rows < everything.num_rows
    assert set(committed.column("offset").to_pylist()) < set(everything.column("offset").to_pylist())


def test_read_table_positions_and_columns(demo_partition: Path) -> None:
    everything = krecords.read_table(demo_partition, isolation="read_uncommitted", columns=["offset"])
    assert everything.schema.names == ["offset"]
    offsets = everything.column("offset").to_pylist()
    t = krecords.read_table(demo_partition, isolation="read_uncommitted", start=offsets[3], end=offsets[8],
                            columns=["offset", "value"])
    assert t.column("offset").to_pylist() == [o for o in offsets if offsets[3] <= o < offsets[8]]
    last = krecords.read_table(demo_partition, isolation="read_uncommitted", start=-2, columns=["offset"])
    assert last.num_rows <= 2
    s = krecords.read_table(demo_partition, columns=["value"], value_format="string")
    assert s.schema.field("value").type in (pa.string(), pa.large_string(), pa.string_view())


def test_read_batches_streams_in_small_batches(demo_partition: Path) -> None:
    reader = krecords.read_batches(demo_partition, isolation="read_uncommitted", max_rows=4)
    assert isinstance(reader, pa.RecordBatchReader)
    sizes = [b.num_rows for b in reader]
    assert max(sizes) <= 4 and sum(sizes) == krecords.read_table(demo_partition, isolation="read_uncommitted").num_rows


def test_files_and_lists_of_files(demo_partition: Path) -> None:
    files = segments(demo_partition)
    one = krecords.read_table(files[0], isolation="read_uncommitted", columns=["offset"])
    assert one.num_rows == len([r for r in krecords.records(files[0].read_bytes())])
    both = krecords.read_table([str(f) for f in files], isolation="read_uncommitted", columns=["offset"])
    assert both.num_rows >= one.num_rows


def test_arrow_c_stream(demo_partition: Path) -> None:
    s = krecords.scan(demo_partition)
    assert pa.schema(s).names == krecords.read_table(demo_partition).schema.names
    t = pa.RecordBatchReader.from_stream(s).read_all()
    assert t.equals(krecords.read_table(demo_partition))
    with pytest.raises(krecords.UsageError):
        s.__arrow_c_stream__()


def test_source_errors(tmp_path: Path) -> None:
    with pytest.raises(krecords.KrecordsIOError):
        krecords.read_table(tmp_path / "missing.log")
    with pytest.raises(krecords.UsageError):
        krecords.read_table(tmp_path, isolation="sometimes")
    with pytest.raises(krecords.UsageError):
        krecords.read_table(tmp_path, columns=["nope"])
    with pytest.raises(krecords.UsageError, match="^start: "):
        krecords.read_table(tmp_path, start="soon")
    # An argument of the wrong type is named, as a usage error rather than a bare TypeError.
    with pytest.raises(krecords.UsageError, match="^end: expected an offset .* not list"):
        krecords.read_table(tmp_path, end=[5])
    with pytest.raises(krecords.UsageError, match="^start: .* not float"):
        krecords.read_table(tmp_path, start=1.5)
    with pytest.raises(krecords.UsageError, match="^source: expected a path, .*, not int$"):
        krecords.read_table(123)
    # The library's messages name positions and isolation levels as both front ends do, not
    # by krec's flags.
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(krecords.build_batch(RECORDS))
    with pytest.raises(krecords.UsageError, match="empty range: end 3 is not after start 5"):
        krecords.read_table(part, start=5, end=3)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc")
def test_a_file_whose_size_says_0_is_read_to_its_end(tmp_path: Path) -> None:
    # /proc/self/status says 0 bytes and reads text: it read as an empty file (0 rows). Read to
    # its end, it is what its bytes are in a file: not Kafka data.
    proc = Path("/proc/self/status")
    assert proc.stat().st_size == 0 and proc.read_bytes()
    copy = tmp_path / "status.log"
    copy.write_bytes(proc.read_bytes())
    with pytest.raises(krecords.CorruptDataError) as copied:
        krecords.read_table(copy)
    for fn in SCAN_FUNCTIONS:
        with pytest.raises(krecords.CorruptDataError) as read:
            list(fn(proc))
        assert read.value.file == str(proc) and copied.value.file == str(copy)
        assert read.value.position == copied.value.position
        # The same error but for the name (a magic byte that is the process name's, the same).
        assert str(read.value).replace(str(proc), "F") == str(copied.value).replace(str(copy), "F")
    # A FIFO has no length at all: read to its end as standard input is, and refused read
    # committed as standard input is (a first pass over it would leave nothing to read).
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(krecords.UsageError, match="read once"):
        krecords.read_table(fifo)
    with pytest.raises(krecords.UsageError, match="read once"):
        krecords.read_table("-")
    writer = threading.Thread(target=lambda: fifo.write_bytes(copy.read_bytes()))
    writer.start()
    try:
        with pytest.raises(krecords.CorruptDataError) as piped:
            krecords.read_table(fifo, isolation="read_uncommitted")
        assert str(piped.value).replace(str(fifo), "F") == str(copied.value).replace(str(copy), "F")
    finally:
        writer.join(10)
        if writer.is_alive():
            # Nothing opened the FIFO: open it here so that the writer ends.
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            writer.join()
            os.close(fd)


def read_batches_all(source: Any, **kwargs: Any) -> pa.Table:
    return krecords.read_batches(source, **kwargs).read_all()


SCAN_FUNCTIONS = [krecords.read_table, read_batches_all, krecords.scan]


def test_arguments_of_the_wrong_kind_are_named(tmp_path: Path) -> None:
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(krecords.build_batch(RECORDS))
    for fn in SCAN_FUNCTIONS:
        # A bool is an int to Python, but never an offset (True is not offset 1).
        for name in ("start", "end"):
            with pytest.raises(krecords.UsageError, match=f"^{name}: expected an offset \\(int\\), .*, not bool$"):
                fn(part, **{name: True})
        # A str is not a list of column names (its letters would be taken as names).
        for columns, type_name in (("offset", "str"), (b"offset", "bytes"), (5, "int")):
            with pytest.raises(krecords.UsageError, match=f"^columns: a list of column names, not {type_name}$"):
                fn(part, columns=columns)
        with pytest.raises(krecords.UsageError, match="^columns: offset is named twice$"):
            fn(part, columns=["offset", "value", "offset"])
        with pytest.raises(krecords.UsageError, match="^columns\\[1\\]: a column name is a str, not int$"):
            fn(part, columns=["offset", 1])
        with pytest.raises(krecords.UsageError, match='^columns: unknown column "nope"$'):
            fn(part, columns=["nope"])
        # A record batch of no rows at most: refused rather than taken as 1.
        for max_rows in (0, -1):
            with pytest.raises(krecords.UsageError, match=f"^max_rows: at least 1, not {max_rows}$"):
                fn(part, max_rows=max_rows)
    # Any iterable of names is a list of them; integers are offsets.
    t = krecords.read_table(part, columns=(c for c in ("value", "offset")), start=1, end=3)
    assert t.schema.names == ["value", "offset"] and t.column("offset").to_pylist() == [1, 2]
    assert [b.num_rows for b in krecords.read_batches(part, max_rows=1)] == [1] * len(RECORDS)


def test_standard_input_read_committed_is_refused_in_python_terms(tmp_path: Path) -> None:
    data = tmp_path / "in.log"
    data.write_bytes(krecords.build_batch(RECORDS))
    code = (
        "import krecords, sys\n"
        "try:\n"
        "    krecords.read_table('-')\n"
        "except krecords.UsageError as e:\n"
        "    print(e)\n"
        "print(krecords.read_table('-', isolation='read_uncommitted').num_rows)\n"
    )
    with data.open("rb") as stdin:
        out = subprocess.run([sys.executable, "-c", code], stdin=stdin, capture_output=True,
                             text=True, cwd="/", check=True).stdout.splitlines()
    assert "read_committed needs" in out[0] and "read it read_uncommitted" in out[0], out
    assert "--isolation" not in out[0], out
    assert out[1] == str(len(RECORDS)), out


def test_corrupt_file_raises_with_file_and_position(tmp_path: Path) -> None:
    data = bytearray(krecords.build_batch(RECORDS, records_per_batch=2))
    sizes = [b.size for b in krecords.entries(bytes(data))]
    data[sizes[0] + 40] ^= 0xFF
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(bytes(data))
    with pytest.raises(krecords.CorruptDataError) as e:
        krecords.read_table(f, isolation="read_uncommitted")
    assert e.value.file == str(f)
    data = krecords.build_batch(RECORDS)[:-3]
    f.write_bytes(data)
    with pytest.raises(krecords.CorruptDataError) as e:
        krecords.read_table(f, isolation="read_uncommitted")
    assert e.value.position == 0



def test_damage_in_the_middle_of_a_partition_directory_raises(tmp_path: Path) -> None:
    # Kafka's recovery would cut this log at the damage and delete the intact entries after
    # it: reading it is an error naming the damage, never the first entries alone.
    data = bytearray(krecords.build_batch(RECORDS, records_per_batch=1))
    sizes = [b.size for b in krecords.entries(bytes(data))]
    data[sizes[0] + 30] ^= 0xFF
    part = tmp_path / "t-0"
    part.mkdir()
    f = part / "00000000000000000000.log"
    f.write_bytes(bytes(data))
    for read in (krecords.read_table, lambda p: krecords.read_batches(p).read_all()):
        with pytest.raises(krecords.CorruptDataError) as e:
            read(part)
        assert e.value.file == str(f)
        assert e.value.position == sizes[0]
        assert "intact entries follow" in str(e.value)
    # A read that ends before the damage is whole; one whose end is past it is not.
    assert krecords.read_table(part, end=1).column("offset").to_pylist() == [0]
    with pytest.raises(krecords.CorruptDataError) as e:
        krecords.read_table(part, end=2)
    assert (e.value.file, e.value.position) == (str(f), sizes[0])
    assert f.read_bytes() == bytes(data)


def test_a_torn_tail_of_a_partition_directory_ends_its_log_with_a_warning(tmp_path: Path) -> None:
    # The last entry cut short (a crash, or a writer still writing) is not part of the log
    # Kafka serves: the rows before it, and a UserWarning naming the file; a file given
    # without its directory is read as it is (the truncated entry is an error).
    data = krecords.build_batch(RECORDS, records_per_batch=1)
    sizes = [b.size for b in krecords.entries(data)]
    part = tmp_path / "t-0"
    part.mkdir()
    f = part / "00000000000000000000.log"
    f.write_bytes(data[:-3])
    for isolation in ("read_committed", "read_uncommitted"):
        with pytest.warns(UserWarning, match="not a whole entry") as w:
            t = krecords.read_table(part, isolation=isolation)
        assert t.column("offset").to_pylist() == list(range(len(sizes) - 1))
        assert str(f) in str(w[0].message)
        s = krecords.scan(part, isolation=isolation)
        assert s.notes == []
        with pytest.warns(UserWarning):
            assert sum(b.num_rows for b in s) == len(sizes) - 1
        assert len(s.notes) == 1 and str(f) in s.notes[0]
    alone = tmp_path / "00000000000000000000.log"
    alone.write_bytes(data[:-3])
    with pytest.raises(krecords.CorruptDataError):
        krecords.read_table(alone, isolation="read_uncommitted")
    assert f.read_bytes() == data[:-3]


def _log(krec: str, part: Path, records: int, *extra: str) -> None:
    """Appends `records` JSON records to the partition directory `part` with `krec log`."""
    if not part.exists():
        subprocess.run([krec, "log", "create", str(part)], check=True, capture_output=True)
    lines = "".join('{"value":"v%d"}\n' % i for i in range(records))
    subprocess.run([krec, "log", "append", str(part), *extra], input=lines.encode(), check=True,
                   capture_output=True)


def test_a_position_outside_one_partition_of_several_leaves_it_out(krec: str, tmp_path: Path) -> None:
    # As every krec command that reads several partitions: the partition the start is past
    # the end of is left out with a warning, the others are read; only a range outside every
    # partition raises.
    _log(krec, tmp_path / "t-0", 3)
    _log(krec, tmp_path / "t-1", 20)
    with pytest.warns(UserWarning, match="nothing of it is in the range"):
        t = krecords.read_table(tmp_path, start=10)
    assert t.column("partition").to_pylist() == [1] * 10
    assert t.column("offset").to_pylist() == list(range(10, 20))
    with pytest.raises(krecords.UsageError, match="out of range"):
        krecords.read_table(tmp_path, start=50)


def test_a_partition_named_twice_is_read_once_with_a_warning(demo_partition: Path) -> None:
    once = krecords.read_table(demo_partition, isolation="read_uncommitted")
    with pytest.warns(UserWarning, match="named more than once, read once"):
        twice = krecords.read_table([demo_partition, demo_partition], isolation="read_uncommitted")
    assert twice.num_rows == once.num_rows

def test_a_stop_at_the_last_stable_offset_is_a_warning(krec: str, tmp_path: Path) -> None:
    # read_committed stops at an open transaction: the rows before it, and a warning naming
    # the transaction (it stopped silently before).
    part = tmp_path / "t-0"
    _log(krec, part, 3)
    _log(krec, part, 2, "--producer-id", "60", "--producer-epoch", "0", "--transactional")
    _log(krec, part, 2)
    with pytest.warns(UserWarning, match="stopped at last stable offset 3") as w:
        t = krecords.read_table(part)
    assert t.column("offset").to_pylist() == [0, 1, 2]
    assert "open transaction from producer 60" in str(w[0].message)
    assert krecords.read_table(part, isolation="read_uncommitted").num_rows == 7


# ---------------------------------------------------------------- threads


def test_threads_decode_in_parallel_to_the_same_results(demo_partition: Path) -> None:
    data = b"".join(f.read_bytes() for f in segments(demo_partition)[:1]) + krecords.build_batch(
        [{"timestamp": 1714000000000, "value": bytes(100)}] * 5000, compression="zstd", base_offset=10**6)
    want_records = [(r.offset, r.key, r.value, r.headers) for r in krecords.records(data)]
    want_table = krecords.read_table(demo_partition)
    results: List[Any] = [None] * 8
    errors: List[BaseException] = []

    def work(i: int) -> None:
        try:
            if i % 2:
                results[i] = [(r.offset, r.key, r.value, r.headers) for r in krecords.records(data)]
            else:
                results[i] = krecords.read_table(demo_partition)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, r in enumerate(results):
        if i % 2:
            assert r == want_records
        else:
            assert r.equals(want_table)


# ---------------------------------------------------------------- vectors


PEERS = REPO / "tests" / "vectors" / "peers"
# Vectors where a peer's expectation differs from Kafka's behaviour (crates/codec/tests/vectors.rs, PINNED).
PINNED = {
    "kafka-python/batch_v2_control_abort_marker_bad_crc.json",
    "kafkajs/fetch_resp_v4_v4_response_mixed_formats_p0.json",
    "sarama/message_bad_magic_2_in_legacy_layout.json",
    "sarama/message_v0_gzip_empty_payload.json",
    "sarama/message_v1_lz4_empty_payload.json",
    "sarama/message_v1_zstd_2_inner_nonstandard.json",
}


def peer_vectors() -> List[Path]:
    return sorted(p for p in PEERS.rglob("*.json") if "codec" not in p.parts and "primitives" not in p.parts)


def decode_all(data: bytes) -> Tuple[List[Any], Optional[BaseException]]:
    out: List[Any] = []
    try:
        for b in krecords.entries(data):
            out.extend(b.records())
    except krecords.KrecordsError as e:
        return out, e
    return out, None


@pytest.mark.parametrize("path", peer_vectors(), ids=lambda p: str(p.relative_to(PEERS)))
def test_peer_vectors(path: Path) -> None:
    v = json.loads(path.read_text())
    if str(path.relative_to(PEERS)) in PINNED or "hex" not in v or not isinstance(v.get("expect"), dict):
        pytest.skip("pinned to Kafka's behaviour in the Rust tests, or no bytes")
    expect = v["expect"]
    # A bare message (no offset and size prefix) is read as the entry the vector derives from it.
    records, error = decode_all(bytes.fromhex(v.get("hex_wrapped_offset0") or v["hex"]))
    if expect.get("error") is True or expect.get("decodes_ok") is False:
        assert error is not None
    elif "error" in expect or "decodes_ok" in expect:
        assert error is None, error
    for want, got in zip(expect.get("records", []), records):
        for key, value in want.items():
            if key in ("key", "value"):
                actual = getattr(got, key)
                assert (None if actual is None else actual.hex()) == value, key
            elif key in ("offset", "timestamp"):
                assert getattr(got, key) == value, key
            elif key == "headers" and isinstance(value, list) and all(isinstance(h, dict) for h in value):
                assert [(k, None if hv is None else hv.hex()) for k, hv in got.headers] == [
                    (h["key"], h["value"]) for h in value
                ]
    if "records" in expect:
        assert len(records) == len(expect["records"])


def test_kafka_java_vectors() -> None:
    seen = 0
    for path in sorted((REPO / "tests" / "vectors" / "kafka-java").rglob("*.json")):
        v = json.loads(path.read_text())
        if "hex" not in v or not isinstance(v.get("expect"), dict) or "records" not in v["expect"]:
            continue
        records, error = decode_all(bytes.fromhex(v["hex"]))
        assert error is None, (path, error)
        want = v["expect"]["records"]
        assert len(records) == len(want), path
        for w, g in zip(want, records):
            for key in ("key", "value"):
                if key in w:
                    actual = getattr(g, key)
                    assert (None if actual is None else actual.hex()) == w[key], (path, key)
            if "offset" in w:
                assert g.offset == w["offset"], path
        seen += 1
    assert seen > 0


# ---------------------------------------------------------------- hostile input


def hostile_inputs() -> List[Path]:
    root = REPO / "fuzz" / "regressions"
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", hostile_inputs(), ids=lambda p: p.name)
def test_fuzz_regressions_never_crash(path: Path) -> None:
    data = path.read_bytes()
    for strict in (False, True):
        try:
            for b in krecords.entries(data, strict=strict, max_decompressed_bytes=1 << 20):
                b.records()
        except krecords.KrecordsError:
            pass


def test_hostile_lengths_are_errors_with_bounded_memory(tmp_path: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    good = bytearray(krecords.build_batch([{"timestamp": 0, "value": b"v" * 100}] * 3))
    cases = []
    claims = bytearray(good)
    claims[57:61] = (2**31 - 1).to_bytes(4, "big")  # records count: 2^31-1, no bytes for them
    cases.append(bytes(claims))
    huge = bytearray(good)
    huge[61] = 0x7F  # first record's length varint made huge
    cases.append(bytes(huge))
    cases.append(bytes(12) + (2**31 - 1).to_bytes(4, "big") + bytes(60))  # entry size claims 2 GiB
    bomb = krecords.build_batch([{"timestamp": 0, "value": bytes(8 << 20)}], compression="zstd")
    for data in cases:
        for check in (True, False):
            try:
                for b in krecords.entries(data, check_crc=check):
                    b.records()
            except krecords.KrecordsError:
                pass
    # A record past the decompression limit is a data problem wherever it is met, as krec has
    # it (exit 1): from a buffer and from a partition directory alike.
    with pytest.raises(krecords.CorruptDataError, match="decompresses to more than"):
        krecords.records(bomb, max_decompressed_bytes=1 << 20)
    part = tmp_path / "bomb-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(bomb)
    with pytest.raises(krecords.CorruptDataError, match="decompresses to more than"):
        krecords.read_table(part, max_decompressed_bytes=1 << 20)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 256 * 1024


# ---------------------------------------------------------------- stubs


def test_stubs_type_check() -> None:
    """mypy --strict accepts a typed use of the API against the package's stubs, and rejects a
    wrong one (so the check can fail)."""
    mypy = pytest.importorskip("mypy.api")
    here = Path(__file__).parent
    out, err, status = mypy.run(["--strict", "--ignore-missing-imports", str(here / "typed_usage.py")])
    assert status == 0, out + err
    bad = here / "_wrong_usage.py"
    bad.write_text("import krecords\nx: int = krecords.build_batch([])\n")
    try:
        out, err, status = mypy.run(["--strict", "--ignore-missing-imports", str(bad)])
        assert status != 0 and "bytes" in out, out
    finally:
        bad.unlink()
