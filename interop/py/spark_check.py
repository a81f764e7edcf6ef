#!/usr/bin/env python3
"""`krec export` of a real broker's partition directories, read back by Apache Spark (pyspark,
local mode), against what Kafka's Java consumer returned at read_committed.

The same scenario as interop/py/export_check.py (the broker step's saved partition directories
and scenario.json; its expected rows, canonical form and digest are interop/py/rows.py's):
  1. `krec export --jobs 2` writes every scenario topic's partition directory as one Parquet
     dataset (read_committed, the default; partitions exported by two threads);
  2. one local SparkSession reads the dataset (`spark.read.parquet`, Hive partition columns
     `topic=`/`partition=` discovered by Spark); for every topic, its rows must equal the
     consumer's records field by field (offset, timestamp, key, value, headers in order):
     a count and a digest per partition are printed;
  3. Spark's own aggregation (rows per topic and partition, `groupBy().count()`) agrees.

Output: PASS/FAIL lines (interop/run.sh counts them). Needs pyspark (interop/.venv) and Java 17+.
Usage: spark_check.py --krec KREC --logs SAVED_DIR --work DIR
"""
import argparse
import json
import os
import subprocess
import sys

from rows import canonical, compare, consumer_rows, hexed


def export(krec, dirs, out):
    p = subprocess.run([krec, "export", *dirs, "--output", out, "--jobs", "2", "--format-report", "json"],
                       capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def spark_session():
    from pyspark.sql import SparkSession
    return (SparkSession.builder.master("local[2]").appName("krec-export-check")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "512m")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate())


def spark_rows(spark, root):
    """Every row of the dataset by (topic, partition), sorted by offset, in canonical form."""
    from pyspark.sql import functions as F
    df = spark.read.parquet(root)
    rows = (df.select("topic", "partition", "offset",
                      F.unix_millis("timestamp").alias("ts"), "key", "value", "headers")
            .orderBy("topic", "partition", "offset").collect())
    out = {}
    for r in rows:
        out.setdefault((r["topic"], r["partition"]), []).append(canonical(
            r["offset"], r["ts"], hexed(r["key"]), hexed(r["value"]),
            [(h["key"], hexed(h["value"])) for h in r["headers"] or []]))
    counts = {(r["topic"], r["partition"]): r["count"]
              for r in df.groupBy("topic", "partition").count().collect()}
    return out, counts


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
        print("FAIL spark/scenario: no scenario topic has a partition directory in " + args.logs)
        return
    os.makedirs(args.work, exist_ok=True)
    root = os.path.join(args.work, "dataset-spark")
    dirs = [os.path.join(args.logs, t + "-0") for t in sorted(topics)]
    code, out, err = export(args.krec, dirs, root)
    if code != 0:
        print("FAIL spark/export: krec export --jobs 2 exited %d: %s" % (code, err.strip()[:400]))
        return
    print("PASS spark/export: %d partition directories of the 4.4 broker exported with --jobs 2" % len(dirs))
    try:
        spark = spark_session()
    except Exception as e:
        print("FAIL spark/session: cannot start a local SparkSession: %s" % str(e)[:400])
        return
    try:
        got_all, counts = spark_rows(spark, root)
        print("PASS spark/read: Spark %s read %d partitions of the dataset" % (spark.version, len(got_all)))
    except Exception as e:  # Spark refusing the dataset is a failure, not a crash
        print("FAIL spark/read: reading the dataset failed: %s" % str(e)[:400])
        spark.stop()
        return
    spark.stop()
    for topic, sc in sorted(topics.items()):
        want = consumer_rows(sc["read_committed"])
        if not want:
            print("FAIL spark/%s: the consumer returned no records, the check would prove nothing" % topic)
            continue
        compare("spark/%s-0" % topic, got_all.get((topic, 0), []), want)
        n = counts.get((topic, 0))
        if n == len(want):
            print("PASS spark/%s-0/count: groupBy(topic, partition).count() = %d" % (topic, n))
        else:
            print("FAIL spark/%s-0/count: groupBy(topic, partition).count() = %r, the consumer %d"
                  % (topic, n, len(want)))
    extra = sorted(set(got_all) - {(t, 0) for t in topics})
    if extra:
        print("FAIL spark/partitions: rows of partitions not in the scenario: %s" % extra)


if __name__ == "__main__":
    sys.exit(main())
