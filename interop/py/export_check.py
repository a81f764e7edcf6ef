#!/usr/bin/env python3
"""`krec export` of a real broker's partition directories, read back by pyarrow and DuckDB,
against what Kafka's Java consumer returned at read_committed.

The broker step of interop/run.sh saves the 4.4 broker's partition directories and the scenario
(interop/java BrokerScenario: every codec, keys and null keys, headers with duplicate keys and
null values, CreateTime and LogAppendTime, idempotent and transactional producers with aborted
transactions) with the records the Java consumer received at read_committed. Here:
  1. `krec export` writes every scenario topic's partition directory as one Parquet dataset
     (read_committed, the default);
  2. pyarrow (pyarrow.dataset, Hive partitioning) and DuckDB (read_parquet, hive_partitioning)
     each read the dataset; for every topic, their rows must equal the consumer's records field
     by field (offset, timestamp, key, value, headers in order) — counts and a digest per
     partition are printed;
  3. `krec export` run again writes nothing (the dataset already holds every record once).

Output: PASS/FAIL lines (interop/run.sh counts them). Needs pyarrow and duckdb (interop/.venv).
Usage: export_check.py --krec KREC --logs SAVED_DIR --work DIR
"""
import argparse
import json
import os
import subprocess
import sys

import duckdb
import pyarrow.dataset as ds

from rows import canonical, compare, consumer_rows, hexed


def pyarrow_rows(root):
    table = ds.dataset(root, format="parquet", partitioning="hive").to_table(
        columns=["topic", "offset", "timestamp", "key", "value", "headers"])
    out = {}
    ts = table.column("timestamp").cast("int64").to_pylist()
    for i, row in enumerate(table.to_pylist()):
        out.setdefault(row["topic"], []).append(canonical(
            row["offset"], ts[i], hexed(row["key"]), hexed(row["value"]),
            [(h["key"], hexed(h["value"])) for h in row["headers"] or []]))
    return {t: sorted(rows) for t, rows in out.items()}


def duckdb_rows(root):
    con = duckdb.connect()
    q = ("SELECT topic, \"offset\", epoch_ms(\"timestamp\"), key, value, headers FROM read_parquet(?, "
         "hive_partitioning = true) ORDER BY topic, \"offset\"")
    out = {}
    for topic, offset, ts, key, value, headers in con.execute(q, [os.path.join(root, "*", "*", "*.parquet")]).fetchall():
        out.setdefault(topic, []).append(canonical(
            offset, ts, hexed(key), hexed(value), [(h["key"], hexed(h["value"])) for h in headers or []]))
    return out


def export(krec, dirs, out):
    p = subprocess.run([krec, "export", *dirs, "--output", out, "--format-report", "json"],
                       capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--krec", required=True)
    a.add_argument("--logs", required=True)
    a.add_argument("--work", required=True)
    args = a.parse_args()
    scenario = json.load(open(os.path.join(args.logs, "scenario.json")))
    topics = {t: sc for t, sc in scenario["topics"].items()
              if os.path.isdir(os.path.join(args.logs, t + "-0"))}
    if not topics:
        print("FAIL export/scenario: no scenario topic has a partition directory in " + args.logs)
        return
    root = os.path.join(args.work, "dataset")
    os.makedirs(args.work, exist_ok=True)
    dirs = [os.path.join(args.logs, t + "-0") for t in sorted(topics)]
    code, out, err = export(args.krec, dirs, root)
    if code != 0:
        print("FAIL export/run: krec export exited %d: %s" % (code, err.strip()[:400]))
        return
    print("PASS export/run: %d partition directories of the 4.4 broker exported" % len(dirs))
    readers = {}
    for name, fn in (("pyarrow", pyarrow_rows), ("duckdb", duckdb_rows)):
        try:
            readers[name] = fn(root)
        except Exception as e:  # a reader refusing the dataset is a failure, not a crash
            print("FAIL export/%s: reading the dataset failed: %s" % (name, e))
    for topic, sc in sorted(topics.items()):
        want = consumer_rows(sc["read_committed"])
        if not want:
            print("FAIL export/%s: the consumer returned no records, the check would prove nothing" % topic)
            continue
        for name, got_all in readers.items():
            compare("export/%s/%s-0" % (name, topic), got_all.get(topic, []), want)
    code, out, err = export(args.krec, dirs, root)
    try:
        records = json.loads(out.strip().splitlines()[-1]).get("records")
    except (ValueError, IndexError, AttributeError):
        records = None
    if code == 0 and records == 0:
        print("PASS export/rerun: a second export of the same directories adds no record")
    else:
        print("FAIL export/rerun: exit %d, records %r: %s" % (code, records, (err or out).strip()[:300]))


if __name__ == "__main__":
    sys.exit(main())
