"""Type stubs of the compiled extension ``krecords._krecords``."""

import os
from typing import (Any, ClassVar, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

__version__: str
DEFAULT_DECOMPRESS_LIMIT: int

class KrecordsError(Exception):
    file: Optional[str]
    position: Optional[int]

class CorruptDataError(KrecordsError): ...
class UsageError(KrecordsError, ValueError):
    """Bad arguments, or a source that cannot be read as asked (krec's exit code 2). Also a
    ``ValueError``. An integer argument that is not an ``int`` (a ``bool`` included) or is out
    of its range raises it, naming the argument and the range."""
class KrecordsIOError(KrecordsError): ...

class Record:
    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> Optional[int]: ...
    @property
    def key(self) -> Optional[bytes]: ...
    @property
    def value(self) -> Optional[bytes]: ...
    @property
    def headers(self) -> List[Tuple[str, Optional[bytes]]]: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

class Batch:
    @property
    def position(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def magic(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def first_offset(self) -> Optional[int]: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def record_count(self) -> Optional[int]: ...
    @property
    def crc(self) -> int: ...
    @property
    def crc_valid(self) -> bool: ...
    @property
    def attributes(self) -> int: ...
    @property
    def compression(self) -> Optional[str]: ...
    @property
    def timestamp_type(self) -> str: ...
    @property
    def base_timestamp(self) -> Optional[int]: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def partition_leader_epoch(self) -> int: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control(self) -> bool: ...
    @property
    def delete_horizon_ms(self) -> Optional[int]: ...
    def records(self) -> List[Record]: ...
    def to_bytes(self) -> bytes: ...
    def __iter__(self) -> Iterator[Record]: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Entries:
    def __iter__(self) -> Iterator[Batch]: ...
    def __next__(self) -> Batch: ...
    @property
    def trailing_bytes(self) -> int: ...

class ArrowBatch:
    @property
    def num_rows(self) -> int: ...
    def __arrow_c_array__(self, requested_schema: Any = None) -> Tuple[Any, Any]: ...

class Scan:
    def __iter__(self) -> Iterator[ArrowBatch]: ...
    def __next__(self) -> ArrowBatch: ...
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    @property
    def invalid(self) -> Dict[str, int]: ...
    @property
    def notes(self) -> List[str]: ...

Bytes = Union[bytes, bytearray, memoryview, Any]

def entries(
    data: Bytes,
    *,
    check_crc: bool = True,
    strict: bool = False,
    max_decompressed_bytes: int = ...,
) -> Entries:
    """The entries of ``data`` as ``Batch`` objects. A truncated last entry ends the iteration
    quietly (``trailing_bytes`` counts its bytes) unless ``strict=True``, which raises
    ``CorruptDataError`` for it; a malformed entry raises ``CorruptDataError`` either way."""
def records(
    data: Bytes,
    *,
    check_crc: bool = True,
    strict: bool = False,
    max_decompressed_bytes: int = ...,
) -> List[Record]:
    """Every record of the data entries of ``data``. A truncated last entry is left out quietly
    (part of one entry alone gives ``[]``) unless ``strict=True``, which raises
    ``CorruptDataError`` for it."""
def explain(
    data: Bytes,
    *,
    max_decompressed_bytes: int = ...,
) -> List[Dict[str, Any]]: ...
def what_if(
    data: Bytes,
    *,
    timing: bool = False,
    min_time_ms: int = 50,
    threads: int = 1,
    levels: Sequence[Tuple[str, int]] = ...,
    records_per_batch: Optional[int] = None,
    max_decompressed_bytes: int = ...,
) -> Dict[str, Any]: ...
def verify(
    path: Union[str, "os.PathLike[str]"],
    *,
    threads: Optional[int] = None,
    max_decompressed_bytes: int = ...,
) -> Dict[str, Any]: ...
def ship(
    sources: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    target: str,
    *,
    job: Optional[str] = None,
    config: Optional[Mapping[str, str]] = None,
    source_config: Optional[Mapping[str, str]] = None,
    txn_bytes: int = ...,
    parallel: int = 4,
) -> Dict[str, Any]: ...
def build_batch(
    records: Iterable[Union[Mapping[str, Any], Record]],
    *,
    magic: int = 2,
    compression: Optional[str] = None,
    level: Optional[int] = None,
    base_offset: int = 0,
    producer: Optional[Tuple[int, int]] = None,
    base_sequence: int = -1,
    transactional: bool = False,
    partition_leader_epoch: int = -1,
    timestamp_type: str = "create_time",
    log_append_time: Optional[int] = None,
    records_per_batch: int = 0,
    delete_horizon_ms: Optional[int] = None,
) -> bytes:
    """Log entries from ``records``, byte for byte what ``krec build`` writes. A record's
    ``headers`` is a list of ``(key, value)`` tuples, or of dicts ``{"key": ..., "value": ...}``
    as in ``krec build``'s JSON (``value`` optional); both forms build the same bytes.

    ``timestamp_type``: ``"create_time"`` (each record's ``timestamp``) or
    ``"log_append_time"`` (every record reads as ``log_append_time``, default: now).
    ``log_append_time`` is written only with ``timestamp_type="log_append_time"``: given with
    another timestamp type it raises ``UsageError``. Magic 0 has no timestamps: records'
    timestamps are not written, and ``timestamp_type="log_append_time"`` or ``log_append_time``
    raises ``UsageError`` (``"none"``, magic 0's timestamp type, is refused with magic 1 and 2).

    Offsets are not negative: ``base_offset`` or a record's ``offset`` below 0 raises
    ``UsageError``, and so do records whose offsets would run past 2**63-1. ``magic`` is 0 to 2,
    ``records_per_batch`` at least 0, ``producer`` a 64-bit id and a 16-bit epoch; an integer
    argument out of its range (or a ``bool``) raises ``UsageError`` naming it and the range.
    """
def scan(
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
    max_decompressed_bytes: int = ...,
) -> Scan: ...
