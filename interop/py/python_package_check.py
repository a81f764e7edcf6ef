#!/usr/bin/env python3
"""The `krecords` Python package on a real broker's data, against Kafka's Java consumer.

The broker step of interop/run.sh saves the 4.4 broker's partition directories and the scenario
(every codec, keys and null keys, headers with duplicate keys and null values, CreateTime and
LogAppendTime, idempotent and transactional producers with aborted transactions) with the
records the Java consumer received at read_committed. Here, with the package that
`pip install ./python` built (python/test.sh):

  1. `krecords.read_table(partition_dir)` of every scenario topic: its rows equal the
     consumer's, field by field (offset, timestamp, key, value, headers in order);
  2. `krecords.read_table(root)` of the whole saved `log.dirs` root: the same rows per topic
     (the root holds the internal topics too: only the scenario's topics are compared);
  3. `krecords.scan(..., max_rows=100)` streams the same rows in bounded batches, taken by
     pyarrow through the Arrow C stream interface (`__arrow_c_stream__`).

Output: PASS/FAIL lines (interop/run.sh counts them).
Usage: python_package_check.py --logs SAVED_DIR   (run with python/.venv/bin/python)
"""
import argparse
import json
import os
import sys

import pyarrow as pa

import krecords
from rows import canonical, compare, consumer_rows, hexed


def table_rows(table):
    out = {}
    ts = table.column("timestamp").cast("int64").to_pylist()
    for i, row in enumerate(table.select(["topic", "offset", "key", "value", "headers"]).to_pylist()):
        out.setdefault(row["topic"], []).append(canonical(
            row["offset"], ts[i], hexed(row["key"]), hexed(row["value"]),
            [(h["key"], hexed(h["value"])) for h in row["headers"] or []]))
    return {t: sorted(rows) for t, rows in out.items()}


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--logs", required=True)
    args = a.parse_args()
    scenario = json.load(open(os.path.join(args.logs, "scenario.json")))
    topics = {t: sc for t, sc in scenario["topics"].items()
              if os.path.isdir(os.path.join(args.logs, t + "-0"))}
    if not topics:
        print("FAIL python/scenario: no scenario topic has a partition directory in " + args.logs)
        return
    try:
        whole = table_rows(krecords.read_table(args.logs))
    except krecords.KrecordsError as e:
        whole = {}
        print("FAIL python/root: read_table of the log.dirs root failed: %s" % e)
    for topic, sc in sorted(topics.items()):
        want = consumer_rows(sc["read_committed"])
        if not want:
            print("FAIL python/%s: the consumer returned no records, the check would prove nothing" % topic)
            continue
        part = os.path.join(args.logs, topic + "-0")
        try:
            compare("python/read_table/%s-0" % topic, table_rows(krecords.read_table(part)).get(topic, []), want)
            reader = pa.RecordBatchReader.from_stream(krecords.scan(part, max_rows=100))
            batches = list(reader)
            biggest = max((b.num_rows for b in batches), default=0)
            streamed = table_rows(pa.Table.from_batches(batches, reader.schema)).get(topic, [])
            if biggest > 100:
                print("FAIL python/scan/%s-0: a batch of %d rows (max_rows=100)" % (topic, biggest))
            else:
                compare("python/scan-c-stream/%s-0" % topic, streamed, want)
        except krecords.KrecordsError as e:
            print("FAIL python/%s-0: %s" % (topic, e))
        if whole:
            compare("python/read_table-root/%s" % topic, whole.get(topic, []), want)


if __name__ == "__main__":
    sys.exit(main())
