"""Benchmark (not a test): krecords against kafka-python's MemoryRecords and aiokafka's Cython
_crecords reader, side by side in one run on the same bytes.

Segments of N records of 100-byte values (uncompressed, lz4, zstd; 16 KiB-ish batches of 160
records as a producer with batch.size 16384 makes them) are built with krecords.build_batch, then:

- iterate the records as Python objects, touching offset, timestamp, key and value:
  krecords.records vs kafka-python MemoryRecords vs aiokafka _crecords MemoryRecords, each
  reader's records of the whole segment made first (a list), as the first columns;
- the same streamed, one batch at a time (the records of a batch made, read and freed before
  the next: `for b in krecords.entries(data): b.records()` against iterating aiokafka's
  batches), each reader at its fastest, in the "streamed" columns;
- a pyarrow.Table (offset, timestamp, key, value) of a partition directory holding the segment:
  krecords.read_table vs building the same table from aiokafka's records;
- krecords.read_table with no columns (decode, decompress and check only: the decode rate under
  the Arrow layer) for the ratio.

Each figure is the best of REPEAT runs, in records per second.

Usage: pip install kafka-python aiokafka lz4 zstandard cramjam pyarrow; python python/bench/compare.py [N]
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pyarrow as pa

import krecords

REPEAT = 5
PER_BATCH = 160


def best(f: Callable[[], Any]) -> float:
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def kafka_python(data: bytes) -> int:
    from kafka.record.memory_records import MemoryRecords

    n = 0
    mr = MemoryRecords(data)
    while True:
        batch = mr.next_batch()
        if batch is None:
            break
        for r in batch:
            r.offset, r.timestamp, r.key, r.value
            n += 1
    return n


def aiokafka_batches(data: bytes) -> Iterator[Any]:
    """aiokafka's batches of ``data``, in order (its records are made as a batch is iterated)."""
    from aiokafka.record._crecords import MemoryRecords  # type: ignore[import-not-found]

    mr = MemoryRecords(data)
    while True:
        batch = mr.next_batch()
        if batch is None:
            return
        yield batch


def aiokafka_records(data: bytes) -> List[Any]:
    out = []
    for batch in aiokafka_batches(data):
        out.extend(batch)
    return out


def aiokafka_iter(data: bytes) -> int:
    n = 0
    for r in aiokafka_records(data):
        r.offset, r.timestamp, r.key, r.value
        n += 1
    return n


def krecords_iter(data: bytes) -> int:
    n = 0
    for r in krecords.records(data):
        r.offset, r.timestamp, r.key, r.value
        n += 1
    return n


def krecords_stream(data: bytes) -> int:
    n = 0
    for b in krecords.entries(data):
        if b.is_control:
            continue
        for r in b.records():
            r.offset, r.timestamp, r.key, r.value
            n += 1
    return n


def aiokafka_stream(data: bytes) -> int:
    n = 0
    for batch in aiokafka_batches(data):
        for r in batch:
            r.offset, r.timestamp, r.key, r.value
            n += 1
    return n


def aiokafka_table(data: bytes) -> pa.Table:
    recs = aiokafka_records(data)
    return pa.table({
        "offset": pa.array([r.offset for r in recs], pa.int64()),
        "timestamp": pa.array([r.timestamp for r in recs], pa.timestamp("ms", tz="UTC")),
        "key": pa.array([r.key for r in recs], pa.binary()),
        "value": pa.array([r.value for r in recs], pa.binary()),
    })


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    value = bytes(range(100))
    records = [{"timestamp": 1714000000000 + i, "key": b"user-%d" % (i % 1000), "value": value} for i in range(n)]
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print(f"CPU: {cpu}; {os.cpu_count()} CPUs; Python {platform.python_version()}; krecords {krecords.__version__}; "
          f"pyarrow {pa.__version__}; {n} records of 100-byte values, {PER_BATCH} per batch, best of {REPEAT}")
    print()
    print("| codec | krecords records/s | kafka-python | aiokafka _crecords | × kafka-python | × aiokafka "
          "| streamed: krecords | streamed: aiokafka | × "
          "| read_table rec/s | table from aiokafka | × | decode only (no columns) | read_table / decode |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for codec in (None, "lz4", "zstd"):
        data = krecords.build_batch(records, compression=codec, records_per_batch=PER_BATCH)
        with tempfile.TemporaryDirectory() as d:
            part = Path(d) / "bench-0"
            part.mkdir()
            (part / "00000000000000000000.log").write_bytes(data)
            assert krecords_iter(data) == n and aiokafka_iter(data) == n
            t_k = best(lambda: krecords_iter(data))
            t_kp = best(lambda: kafka_python(data))
            t_a = best(lambda: aiokafka_iter(data))
            assert krecords_stream(data) == n and aiokafka_stream(data) == n
            t_ks = best(lambda: krecords_stream(data))
            t_as = best(lambda: aiokafka_stream(data))
            cols = ["offset", "timestamp", "key", "value"]
            table = krecords.read_table(part, columns=cols, isolation="read_uncommitted")
            theirs = aiokafka_table(data)
            assert table.column("value").to_pylist() == theirs.column("value").to_pylist()
            assert table.column("offset").to_pylist() == theirs.column("offset").to_pylist()
            t_t = best(lambda: krecords.read_table(part, columns=cols, isolation="read_uncommitted"))
            t_at = best(lambda: aiokafka_table(data))
            t_d = best(lambda: krecords.read_table(part, columns=[], isolation="read_uncommitted"))
        rate: Callable[[float], str] = lambda t: f"{n / t / 1e6:.2f} M"
        print(f"| {codec or 'none'} | {rate(t_k)} | {rate(t_kp)} | {rate(t_a)} | {t_kp / t_k:.0f}× | {t_a / t_k:.1f}× "
              f"| {rate(t_ks)} | {rate(t_as)} | {t_as / t_ks:.1f}× "
              f"| {rate(t_t)} | {rate(t_at)} | {t_at / t_t:.0f}× | {rate(t_d)} | {t_d / t_t:.2f} |")


if __name__ == "__main__":
    main()
