"""Type-checked use of the public API (mypy --strict runs on this file in scripts/test.sh and in
test_stubs_type_check): the stubs must describe what the functions take and return."""

from __future__ import annotations

from typing import List, Optional, Tuple

import pyarrow as pa

import krecords


def use(path: str) -> Tuple[int, List[Optional[bytes]]]:
    data: bytes = krecords.build_batch([{"value": b"x", "timestamp": 1}], compression="zstd", producer=(1, 0))
    values: List[Optional[bytes]] = []
    for batch in krecords.entries(data, check_crc=True):
        n: Optional[int] = batch.record_count
        epoch: int = batch.producer_epoch
        same: bool = batch == batch and hash(batch) == hash(batch)
        del same
        for r in batch.records():
            equal: bool = r == r
            del equal
            values.append(r.value)
            headers: List[Tuple[str, Optional[bytes]]] = r.headers
            ts: Optional[int] = r.timestamp
            del headers, ts
        del n, epoch
    table: pa.Table = krecords.read_table(path, start="-10", columns=["offset", "value"])
    reader: pa.RecordBatchReader = krecords.read_batches(path, isolation="read_uncommitted")
    del reader
    try:
        krecords.records(b"\\x00")
    except krecords.CorruptDataError as e:
        pos: Optional[int] = e.position
        del pos
    return table.num_rows, values
