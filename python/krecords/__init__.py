"""Kafka segments, partition directories and live topics in Python, as Arrow, at native speed.

A thin layer over the krecords Rust crates:

- ``read_table(source, ...)`` / ``read_batches(source, ...)``: a source (a segment file, a list
  of files, a partition directory, a ``log.dirs`` root, a ``kafka://`` URL) as a
  ``pyarrow.Table`` or a streaming ``pyarrow.RecordBatchReader``; ``scan(source, ...)`` gives
  the underlying object, which polars and DuckDB take directly (``__arrow_c_stream__``).
- ``entries(data)`` / ``records(data)``: the entries and records of any bytes-like object.
- ``build_batch(records, ...)``: log entries, byte for byte what ``krec build`` writes.
- ``explain(data)``: what every byte of the entries means, as ``krec explain --format json``
  shows it (damaged input is described, not refused).
- ``ship(sources, "kafka://HOST:PORT/TOPIC", job=...)``: ``krec ship``, exactly once.
- ``verify(path)``: ``krec verify``'s checks of a partition directory or a segment file.
- ``what_if(data)``: the sizing table of ``krec stats --what-if`` (every magic, codec and level).

Every error is a ``KrecordsError`` (``CorruptDataError``, ``UsageError``, ``KrecordsIOError``),
with ``file`` and ``position`` where known. ``UsageError`` is also a ``ValueError``: every
integer argument is an ``int`` (never a ``bool``) in its range, else ``UsageError`` names the
argument and the range (``magic: between 0 and 2, not 3``; ``max_rows: at least 1, not 0``),
and any other argument of the wrong type raises ``UsageError`` naming it and what was given
(``isolation: expected a str, not int``), never ``TypeError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:
    import pyarrow

from ._krecords import (
    DEFAULT_DECOMPRESS_LIMIT,
    ArrowBatch,
    Batch,
    CorruptDataError,
    Entries,
    KrecordsError,
    KrecordsIOError,
    Record,
    Scan,
    UsageError,
    __version__,
    build_batch,
    entries,
    explain,
    records,
    scan,
    ship,
    verify,
    what_if,
)

__all__ = [
    "DEFAULT_DECOMPRESS_LIMIT",
    "ArrowBatch",
    "Batch",
    "CorruptDataError",
    "Entries",
    "KrecordsError",
    "KrecordsIOError",
    "Record",
    "Scan",
    "UsageError",
    "__version__",
    "build_batch",
    "entries",
    "explain",
    "read_batches",
    "read_table",
    "records",
    "scan",
    "ship",
    "verify",
    "what_if",
]


def read_batches(
    source: Any,
    *,
    start: Union[int, str, None] = None,
    end: Union[int, str, None] = None,
    isolation: str = "read_committed",
    columns: Optional[Sequence[str]] = None,
    config: Optional[Mapping[str, str]] = None,
    key_format: str = "binary",
    value_format: str = "binary",
    max_rows: int = 8192,
    max_decompressed_bytes: int = DEFAULT_DECOMPRESS_LIMIT,
) -> "pyarrow.RecordBatchReader":
    """Read ``source`` as a streaming ``pyarrow.RecordBatchReader`` (bounded memory).

    ``start``/``end``: an offset, ``-N`` (N before the end), ``"earliest"``, ``"latest"``, an ISO
    8601 time or ``"@<ms>"``; ``end`` is exclusive (a ``bool`` is refused). ``isolation``:
    ``read_committed`` (aborted transactions left out, up to the last stable offset) or
    ``read_uncommitted``. ``columns``: the projection, a list of column names, each named once
    (default: all 15 columns of the schema; a ``str`` is refused). ``max_rows``: the most rows in
    a record batch (at least 1). An integer ``start``/``end`` is between -(2**63-1) and 2**63-1;
    ``max_decompressed_bytes`` is at least 0. ``config``: librdkafka-style properties for ``kafka://``
    sources; a non-empty ``config`` when no source is ``kafka://`` raises ``UsageError`` (nothing
    would read it; remote tier locations, ``s3://`` and the like, take no options here). Errors while reading raise ``KrecordsError`` subclasses from the reader's
    iteration. With ``key_format``/``value_format`` ``"string"``,
    bytes that are not UTF-8 are read as null and counted: a ``UserWarning`` at the end of the
    read says how many per column (``scan(...).invalid`` gives the counts). What a reader should
    know of the read is a ``UserWarning`` at its end too (``scan(...).notes`` gives the lines):
    a partition of several that a position is outside of, left out (a read of one such
    partition raises ``UsageError``); a stop at the last stable offset (read_committed: an open
    transaction holds the rest back); a torn last entry of a partition directory's log, which
    Kafka's recovery would cut, passed over. Ctrl-C raises ``KeyboardInterrupt`` even while a
    source gives nothing.
    """
    import pyarrow as pa

    s = scan(
        source,
        start=start,
        end=end,
        isolation=isolation,
        columns=columns,
        config=config,
        key_format=key_format,
        value_format=value_format,
        max_rows=max_rows,
        max_decompressed_bytes=max_decompressed_bytes,
    )
    schema = pa.schema(s)

    def batches() -> Iterator["pa.RecordBatch"]:
        for b in s:
            yield pa.record_batch(b)

    return pa.RecordBatchReader.from_batches(schema, batches())


def read_table(
    source: Any,
    *,
    start: Union[int, str, None] = None,
    end: Union[int, str, None] = None,
    isolation: str = "read_committed",
    columns: Optional[Sequence[str]] = None,
    config: Optional[Mapping[str, str]] = None,
    key_format: str = "binary",
    value_format: str = "binary",
    max_rows: int = 8192,
    max_decompressed_bytes: int = DEFAULT_DECOMPRESS_LIMIT,
) -> "pyarrow.Table":
    """Read ``source`` into a ``pyarrow.Table``; the arguments are ``read_batches``'."""
    options = dict(locals())
    del options["source"]
    return read_batches(source, **options).read_all()
