"""Every integer argument of the public API: an int (never a bool) in its range, else a
``UsageError`` (also a ``ValueError``) naming the argument and the range; never Python's
``OverflowError`` or ``TypeError``. And the rules of offsets and of sources with no segments,
the same as krec's."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import pytest

import krecords

I16 = (-(2**15), 2**15 - 1)
I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)
U64_MAX = 2**64 - 1
RECORDS = [{"value": "a"}, {"value": "b"}, {"value": "c"}]
DATA = krecords.build_batch(RECORDS, timestamp_type="create_time")
KAFKA = "kafka://127.0.0.1:1/t"


class IntArg(NamedTuple):
    """An integer argument: how to call with a value, its name in messages, its range."""

    label: str
    name: str
    lo: int
    hi: int
    call: Callable[[Path, Any], Any]
    # A value in range whose call is expected to succeed (None: do not call, e.g. a broker).
    ok: Optional[int] = None
    # The range is `at least LO` (a count or a size, bounded only by its Rust type above).
    at_least: bool = False


def size_arg(label: str, name: str, call: Callable[[Path, Any], Any], lo: int = 0,
             ok: Optional[int] = 1 << 20) -> IntArg:
    return IntArg(label, name, lo, U64_MAX, call, ok, at_least=True)


def partition(tmp: Path) -> Path:
    part = tmp / "t-0"
    part.mkdir(exist_ok=True)
    (part / "00000000000000000000.log").write_bytes(DATA)
    return part


def build(**kwargs: Any) -> bytes:
    return krecords.build_batch(RECORDS, **kwargs)


ARGS: List[IntArg] = [
    size_arg("entries", "max_decompressed_bytes",
             lambda t, v: list(krecords.entries(DATA, max_decompressed_bytes=v))),
    size_arg("records", "max_decompressed_bytes",
             lambda t, v: krecords.records(DATA, max_decompressed_bytes=v)),
    size_arg("explain", "max_decompressed_bytes",
             lambda t, v: krecords.explain(DATA, max_decompressed_bytes=v)),
    size_arg("what_if", "max_decompressed_bytes",
             lambda t, v: krecords.what_if(DATA, max_decompressed_bytes=v)),
    size_arg("what_if", "min_time_ms", lambda t, v: krecords.what_if(DATA, min_time_ms=v), ok=5),
    size_arg("what_if", "threads", lambda t, v: krecords.what_if(DATA, threads=v), ok=2),
    IntArg("what_if", "records_per_batch", 1, 2**31 - 1,
           lambda t, v: krecords.what_if(DATA, records_per_batch=v), ok=2),
    IntArg("what_if", "levels[0] level", *I32,
           lambda t, v: krecords.what_if(DATA, levels=[("zstd", v)]), ok=3),
    size_arg("verify", "threads", lambda t, v: krecords.verify(partition(t), threads=v), ok=2),
    size_arg("verify", "max_decompressed_bytes",
             lambda t, v: krecords.verify(partition(t), max_decompressed_bytes=v)),
    size_arg("ship", "txn_bytes", lambda t, v: krecords.ship(partition(t), KAFKA, txn_bytes=v),
             ok=None),
    size_arg("ship", "parallel", lambda t, v: krecords.ship(partition(t), KAFKA, parallel=v),
             ok=None),
    IntArg("build_batch", "magic", 0, 2, lambda t, v: build(magic=v), ok=1),
    IntArg("build_batch", "level", *I32, lambda t, v: build(compression="gzip", level=v), ok=9),
    IntArg("build_batch", "base_offset", 0, I64[1], lambda t, v: build(base_offset=v), ok=5,
           at_least=True),
    IntArg("build_batch", "producer id", *I64, lambda t, v: build(producer=(v, 0), base_sequence=0), ok=7),
    IntArg("build_batch", "producer epoch", *I16, lambda t, v: build(producer=(7, v), base_sequence=0), ok=3),
    IntArg("build_batch", "base_sequence", *I32, lambda t, v: build(base_sequence=v), ok=0),
    IntArg("build_batch", "partition_leader_epoch", *I32,
           lambda t, v: build(partition_leader_epoch=v), ok=0),
    IntArg("build_batch", "log_append_time", *I64,
           lambda t, v: build(timestamp_type="log_append_time", log_append_time=v), ok=5),
    size_arg("build_batch", "records_per_batch", lambda t, v: build(records_per_batch=v), ok=2),
    IntArg("build_batch", "delete_horizon_ms", *I64, lambda t, v: build(delete_horizon_ms=v),
           ok=5),
    IntArg("build_batch", "records[0]: offset", 0, I64[1],
           lambda t, v: krecords.build_batch([{"value": "a", "offset": v}]), ok=5, at_least=True),
    IntArg("build_batch", "records[0]: timestamp", *I64,
           lambda t, v: krecords.build_batch([{"value": "a", "timestamp": v}]), ok=5),
]
def scan_call(fn: str, name: str) -> Callable[[Path, Any], Any]:
    def call(tmp: Path, value: Any) -> Any:
        return getattr(krecords, fn)(partition(tmp), **{name: value})
    return call


for fn in ("scan", "read_table", "read_batches"):
    ARGS.append(IntArg(fn, "max_rows", 1, U64_MAX, scan_call(fn, "max_rows"), ok=2,
                       at_least=True))
    ARGS.append(size_arg(fn, "max_decompressed_bytes", scan_call(fn, "max_decompressed_bytes")))
    for position in ("start", "end"):
        ARGS.append(IntArg(fn, position, -I64[1], I64[1], scan_call(fn, position), ok=1))


def scan_call_with(fn: str, **kwargs: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        return getattr(krecords, fn)(partition(tmp), **kwargs)
    return call


def range_message(arg: IntArg, value: int) -> str:
    if arg.at_least and value < arg.lo:
        return f"at least {arg.lo}, not {value}"
    return f"between {arg.lo} and {arg.hi}, not {value}"


@pytest.mark.parametrize("arg", ARGS, ids=[f"{a.label}-{a.name}" for a in ARGS])
def test_integer_arguments_out_of_range_or_not_ints_are_usage_errors(
        arg: IntArg, tmp_path: Path) -> None:
    name = re.escape(arg.name)
    # Just past each end of the range, and far past it (beyond any machine integer).
    for value in (arg.lo - 1, arg.hi + 1, -(2**200), 2**200):
        with pytest.raises(krecords.UsageError, match=f"^{name}: {range_message(arg, value)}$"):
            arg.call(tmp_path, value)
    # A bool is an int to Python, but never one of these (True is not 1 here); nor a float.
    not_ints: List[Tuple[Any, str]] = [(True, "bool"), (False, "bool"), (1.0, "float")]
    for not_int, type_name in not_ints:
        if arg.name in ("start", "end"):
            expected = f"^{name}: expected an offset \\(int\\), .*, not {type_name}$"
        else:
            expected = f"^{name}: expected an int, not {type_name}$"
        with pytest.raises(krecords.UsageError, match=expected):
            arg.call(tmp_path, not_int)
    if arg.ok is not None:
        arg.call(tmp_path, arg.ok)


def test_usage_error_is_a_value_error_and_still_a_krecords_error() -> None:
    assert issubclass(krecords.UsageError, krecords.KrecordsError)
    assert issubclass(krecords.UsageError, ValueError)
    assert krecords.UsageError.__module__ == "krecords"
    assert krecords.UsageError.__doc__
    for e in (krecords.CorruptDataError, krecords.KrecordsIOError):
        assert not issubclass(e, ValueError)
    with pytest.raises(ValueError, match="^magic: between 0 and 2, not 3$"):
        build(magic=3)
    try:
        build(magic=-1)
    except krecords.UsageError as e:
        assert e.file is None and e.position is None
    # Errors raised from the Rust side carry the class too.
    with pytest.raises(ValueError):
        krecords.read_table("/", isolation="sometimes")


def test_the_trial_s_cases_raise_usage_errors_not_overflow_errors(tmp_path: Path) -> None:
    part = partition(tmp_path)
    cases: List[Callable[[], Any]] = [
        lambda: krecords.read_table(part, max_decompressed_bytes=-1),
        lambda: list(krecords.entries(DATA, max_decompressed_bytes=-1)),
        lambda: krecords.verify(part, threads=-1),
        lambda: build(magic=-1),
        lambda: build(records_per_batch=-1),
        lambda: build(producer=(1, 2**20)),
        lambda: build(base_offset=2**63),
        lambda: krecords.what_if(DATA, min_time_ms=-1),
    ]
    for case in cases:
        with pytest.raises(krecords.UsageError):
            case()
    # `magic=True` and `max_rows=True` were taken as 1.
    with pytest.raises(krecords.UsageError, match="^magic: expected an int, not bool$"):
        build(magic=True)
    with pytest.raises(krecords.UsageError, match="^max_rows: expected an int, not bool$"):
        krecords.read_table(part, max_rows=True)
    # The producer is an (id, epoch) tuple.
    with pytest.raises(krecords.UsageError, match="^producer: expected an \\(id, epoch\\) tuple"):
        build(producer="7")


def test_positions_out_of_range_say_the_range(tmp_path: Path) -> None:
    part = partition(tmp_path)
    with pytest.raises(krecords.UsageError, match=(
            "^start: between -9223372036854775807 and 9223372036854775807, "
            "not 9223372036854775808$")):
        krecords.read_table(part, start=2**63)
    with pytest.raises(krecords.UsageError, match=(
            "^start: between -9223372036854775807 and 9223372036854775807, "
            "not -9223372036854775808$")):
        krecords.read_table(part, start=-(2**63))
    # The ends of the range are positions: all of the partition, and an offset past its end.
    assert krecords.read_table(part, start=-(2**63 - 1)).num_rows == 3
    with pytest.raises(krecords.UsageError, match="offset 9223372036854775807 is out of range"):
        krecords.read_table(part, end=2**63 - 1)


def test_offsets_are_not_negative_nor_past_i64_max() -> None:
    with pytest.raises(krecords.UsageError, match="^base_offset: at least 0, not -1$"):
        build(base_offset=-1)
    with pytest.raises(krecords.UsageError,
                       match="^base_offset: at least 0, not -9223372036854775808$"):
        build(base_offset=-(2**63))
    with pytest.raises(krecords.UsageError, match="^records\\[1\\]: offset: at least 0, not -1$"):
        krecords.build_batch([{"value": "a"}, {"value": "b", "offset": -1}])
    # Refused up front, not as an offset that "does not follow" a wrapped-around one.
    for per in (0, 1, 2):
        with pytest.raises(krecords.UsageError,
                           match="the batch's last offset would be past 9223372036854775807"):
            build(base_offset=2**63 - 2, records_per_batch=per)
    # Up to i64::MAX exactly.
    (entry,) = krecords.entries(build(base_offset=2**63 - 3))
    assert entry.last_offset == 2**63 - 1
    assert [r.offset for r in entry.records()] == [2**63 - 3, 2**63 - 2, 2**63 - 1]
    assert len(krecords.records(krecords.build_batch([{"value": "a"}], base_offset=2**63 - 1))) == 1


def test_a_directory_with_no_segments_is_the_same_usage_error_everywhere(tmp_path: Path) -> None:
    empty_partition = tmp_path / "t-0"
    empty_partition.mkdir()
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    for path in (empty_partition, nothing):
        with pytest.raises(krecords.UsageError, match="no .log files to verify"):
            krecords.verify(path)
        for fn in (krecords.read_table, krecords.read_batches, krecords.scan):
            with pytest.raises(krecords.UsageError, match="no .log segments here"):
                fn(path)


class WrongType(NamedTuple):
    """An argument given a value of the wrong type, and the start of the message naming it."""

    label: str
    call: Callable[[Path], Any]
    message: str


def ship(tmp: Path, *args: Any, **kwargs: Any) -> Any:
    if not args:
        args = (partition(tmp), KAFKA)
    return krecords.ship(*args, **kwargs)


NOT_A_PATH = "expected a path, a kafka:// URL or a list of them"
WRONG_TYPES: List[WrongType] = [
    # ship's sources are a path or a list of paths; str() of anything was taken as one.
    WrongType("ship-sources-int", lambda t: ship(t, 123, KAFKA), f"sources: {NOT_A_PATH}, not int"),
    WrongType("ship-sources-bytes", lambda t: ship(t, b"t-0", KAFKA),
              f"sources: {NOT_A_PATH}, not bytes"),
    WrongType("ship-sources-none", lambda t: ship(t, None, KAFKA),
              f"sources: {NOT_A_PATH}, not NoneType"),
    WrongType("ship-sources-item", lambda t: ship(t, [partition(t), 5], KAFKA),
              "sources[1]: expected a path (str or os.PathLike), not int"),
    WrongType("ship-sources-item-list", lambda t: ship(t, [[str(partition(t))]], KAFKA),
              "sources[0]: expected a path (str or os.PathLike), not list"),
    WrongType("ship-target", lambda t: ship(t, partition(t), 5), "target: expected a str, not int"),
    WrongType("ship-job", lambda t: ship(t, job=5), "job: expected a str, not int"),
    WrongType("ship-config", lambda t: ship(t, config=["a=b"]),
              "config: expected a dict of str to str, not list"),
    WrongType("ship-config-value", lambda t: ship(t, config={"retries": 0}),
              'config["retries"]: expected a str, not int'),
    WrongType("ship-config-key", lambda t: ship(t, config={1: "x"}),
              "config: key 1: expected a str, not int"),
    WrongType("ship-source_config", lambda t: ship(t, source_config="a=b"),
              "source_config: expected a dict of str to str, not str"),
    # what_if's levels are (codec, level) pairs.
    WrongType("what_if-levels-int", lambda t: krecords.what_if(DATA, levels=5),
              "levels: expected a list of (codec, level) pairs, not int"),
    WrongType("what_if-levels-str", lambda t: krecords.what_if(DATA, levels="zstd:3"),
              "levels: expected a list of (codec, level) pairs, not str"),
    WrongType("what_if-levels-item", lambda t: krecords.what_if(DATA, levels=["zstd"]),
              "levels[0]: expected a (codec, level) pair, not str"),
    WrongType("what_if-levels-short", lambda t: krecords.what_if(DATA, levels=[("zstd",)]),
              "levels[0]: expected a (codec, level) pair, not tuple"),
    WrongType("what_if-levels-codec", lambda t: krecords.what_if(DATA, levels=[(19, "zstd")]),
              "levels[0] codec: expected a str, not int"),
    WrongType("what_if-levels-level", lambda t: krecords.what_if(DATA, levels=[("zstd", "19")]),
              "levels[0] level: expected an int, not str"),
    WrongType("what_if-timing", lambda t: krecords.what_if(DATA, timing=1),
              "timing: expected a bool, not int"),
    # bools are bools, strs are strs.
    WrongType("entries-check_crc", lambda t: krecords.entries(DATA, check_crc=1),
              "check_crc: expected a bool, not int"),
    WrongType("records-strict", lambda t: krecords.records(DATA, strict="yes"),
              "strict: expected a bool, not str"),
    WrongType("build_batch-transactional", lambda t: build(transactional=None),
              "transactional: expected a bool, not NoneType"),
    WrongType("build_batch-compression", lambda t: build(compression=1),
              "compression: expected a str, not int"),
    WrongType("build_batch-timestamp_type", lambda t: build(timestamp_type=0),
              "timestamp_type: expected a str, not int"),
]
for fn in ("scan", "read_table", "read_batches"):
    WRONG_TYPES += [
        WrongType(f"{fn}-isolation", scan_call_with(fn, isolation=1),
                  "isolation: expected a str, not int"),
        WrongType(f"{fn}-key_format", scan_call_with(fn, key_format=b"string"),
                  "key_format: expected a str, not bytes"),
        WrongType(f"{fn}-value_format", scan_call_with(fn, value_format=None),
                  "value_format: expected a str, not NoneType"),
        WrongType(f"{fn}-config", scan_call_with(fn, config=5),
                  "config: expected a dict of str to str, not int"),
        WrongType(f"{fn}-config-value", scan_call_with(fn, config={"a": b"b"}),
                  'config["a"]: expected a str, not bytes'),
    ]


@pytest.mark.parametrize("case", WRONG_TYPES, ids=[c.label for c in WRONG_TYPES])
def test_arguments_of_the_wrong_type_are_usage_errors(case: WrongType, tmp_path: Path) -> None:
    # Not PyO3's TypeError: a UsageError naming the argument and what was given.
    with pytest.raises(krecords.UsageError, match=f"^{re.escape(case.message)}$"):
        case.call(tmp_path)


def test_arguments_of_the_right_type_still_work(tmp_path: Path) -> None:
    got = krecords.what_if(DATA, levels=[("zstd", 3)], timing=False)
    assert any(r["compression"] == "zstd" and r["level"] == 3 for r in got["rows"])
    assert krecords.what_if(DATA, levels=(p for p in [("gzip", 1)]))["rows"]
    assert len(krecords.records(DATA, check_crc=False, strict=True)) == 3
    assert krecords.entries(DATA, check_crc=True, strict=False) is not None
    assert build(transactional=True, producer=(1, 0), base_sequence=0, compression="gzip",
                 timestamp_type="create_time")
    part = partition(tmp_path)
    assert krecords.read_table(part, isolation="read_uncommitted", key_format="string",
                               value_format="binary").num_rows == 3
    # A mapping that is not a dict is a mapping all the same.
    from types import MappingProxyType
    with pytest.raises(krecords.UsageError, match="^config applies to kafka:// sources only"):
        krecords.read_table(part, config=MappingProxyType({"a": "b"}))
    # ship takes a path, an os.PathLike or a list of them; its checks pass and the broker is
    # what fails (nothing listens on port 1).
    fast = {"socket.connection.setup.timeout.ms": "1000", "retries": "0"}
    for sources in (part, str(part), [part], (str(part),)):
        with pytest.raises(krecords.KrecordsIOError, match="127.0.0.1:1"):
            krecords.ship(sources, KAFKA, job="j", config=fast, source_config={})


def test_signatures_keep_their_defaults() -> None:
    sig = inspect.signature(krecords.build_batch)
    assert sig.parameters["magic"].default == 2
    assert sig.parameters["base_offset"].default == 0
    assert sig.parameters["base_sequence"].default == -1
    assert sig.parameters["records_per_batch"].default == 0
    assert inspect.signature(krecords.scan).parameters["max_rows"].default == 8192
    what_if = inspect.signature(krecords.what_if).parameters
    assert (what_if["min_time_ms"].default, what_if["threads"].default) == (50, 1)
    assert inspect.signature(krecords.ship).parameters["parallel"].default == 4
    entries = inspect.signature(krecords.entries).parameters
    assert (entries["check_crc"].default, entries["strict"].default) == (True, False)
    assert inspect.signature(krecords.scan).parameters["isolation"].default == "read_committed"
    assert inspect.signature(krecords.what_if).parameters["timing"].default is False
