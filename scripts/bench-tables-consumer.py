#!/usr/bin/env python3
"""A topic to Parquet the way people do it today: a confluent-kafka consumer building pyarrow
record batches and writing them with pyarrow's ParquetWriter (zstd), for scripts/bench-tables.sh.

Usage: bench-tables-consumer.py BOOTSTRAP TOPIC OUTPUT.parquet

Reads every partition of TOPIC from the earliest offset to its end (read_committed, librdkafka's
default; enable.partition.eof marks each partition's end) and writes the columns topic, partition,
offset, timestamp (ms, UTC), timestamp_type, key, value and headers. Written as a competent user
would: messages are taken in batches of 10,000 with consume(), kept in plain Python lists per
column (no per-row dicts), turned into one pyarrow RecordBatch per 500,000 rows and written as
one row group each; librdkafka prefetches up to 64 MiB per partition meanwhile. Prints
"ROWS rows" at the end.
"""
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka import Consumer, KafkaError, TopicPartition, OFFSET_BEGINNING

ROWS_PER_BATCH = 500_000
SCHEMA = pa.schema([
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.timestamp("ms", tz="UTC")),
    ("timestamp_type", pa.string()),
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
])
TIMESTAMP_TYPES = {0: "NoTimestamp", 1: "CreateTime", 2: "LogAppendTime"}


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    bootstrap, topic, output = sys.argv[1:]
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "bench-tables-consumer",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "queued.max.messages.kbytes": 65536,
        "fetch.max.bytes": 52428800,
        "max.partition.fetch.bytes": 10485760,
    })
    partitions = list(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    pending = set(partitions)
    cols = [[] for _ in SCHEMA]
    rows = 0
    with pq.ParquetWriter(output, SCHEMA, compression="zstd") as writer:

        def flush():
            if cols[0]:
                writer.write_batch(pa.RecordBatch.from_arrays(
                    [pa.array(c, type=f.type) for c, f in zip(cols, SCHEMA)], schema=SCHEMA))
                for c in cols:
                    c.clear()

        topics, parts, offsets, stamps, types, keys, values, headers = cols
        while pending:
            for msg in consumer.consume(num_messages=10_000, timeout=1.0):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        pending.discard(msg.partition())
                        continue
                    raise RuntimeError(err.str())
                ts_type, ts = msg.timestamp()
                topics.append(msg.topic())
                parts.append(msg.partition())
                offsets.append(msg.offset())
                stamps.append(ts if ts_type else None)
                types.append(TIMESTAMP_TYPES[ts_type])
                keys.append(msg.key())
                values.append(msg.value())
                headers.append(msg.headers() or [])
                rows += 1
            if len(offsets) >= ROWS_PER_BATCH:
                flush()
        flush()
    consumer.close()
    print(f"{rows} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
