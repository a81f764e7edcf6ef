#!/usr/bin/env python3
"""`krec sql` against DuckDB on the same data.

The records are generated here (keys and null keys, JSON values and tombstones, headers with
duplicate keys and null values, timestamps over several minutes, two partitions of `orders` and
a `users` topic). They are written twice, independently:
  - as Kafka segments by `krec build` (one partition directory per partition), which `krec sql`
    reads straight;
  - as Parquet by pyarrow, in the layout of an exported dataset, which DuckDB reads (the
    oracle: nothing of krec in it).
The segments are also exported by `krec export --jobs 2` (string keys and values), and DuckDB
reads that dataset too. Each query runs in krec sql (on the segments), in DuckDB on the pyarrow
dataset and in DuckDB on krec's exported dataset: the three results must be equal row for row.
The queries: group by key, count distinct keys (overall and per partition), tombstone counts
and ratio per partition, time buckets, header filters (header values and records carrying a
header), offset ranges and time ranges, and a join of two topics.

Needs: duckdb and pyarrow (pip), and a built krec (KREC=path, default target/debug/krec).
Usage: python3 interop/py/sql_duckdb_check.py
"""
import json
import os
import subprocess
import sys
import tempfile

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

KREC = os.environ.get("KREC", os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug", "krec"))
T0 = 1714000000000


def records(topic, partition, n):
    out = []
    for i in range(n):
        m = i + partition * 7
        if topic == "users":
            out.append(dict(offset=i, timestamp=T0, key=f"u{i}", value=json.dumps({"name": f"name-{i}"}), headers=[]))
            continue
        headers = []
        if m % 3 == 0:
            headers.append(("trace", f"t{m}"))
        if m % 4 == 0:
            headers += [("trace", None), ("source", "app")]
        out.append(dict(
            offset=i,
            timestamp=T0 + partition * 30000 + i * 1700,
            key=None if m % 13 == 0 else f"k{m % 23}",
            value=None if m % 11 == 0 else json.dumps({"user": f"u{m % 5}", "amount": m % 97}),
            headers=headers,
        ))
    return out


def write_segments(dir_, topic, partition, recs):
    part = os.path.join(dir_, f"{topic}-{partition}")
    os.makedirs(part)
    lines = "".join(json.dumps({
        "timestamp": r["timestamp"], "key": r["key"], "value": r["value"],
        "headers": [{"key": k, "value": v} for k, v in r["headers"]],
    }) + "\n" for r in recs)
    subprocess.run([KREC, "build", "--records-per-batch", "10", "--output",
                    os.path.join(part, "00000000000000000000.log")],
                   input=lines.encode(), check=True)
    return part


HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])


def write_parquet(dir_, topic, partition, recs):
    out = os.path.join(dir_, f"topic={topic}", f"partition={partition}")
    os.makedirs(out)
    table = pa.table({
        "topic": pa.array([topic] * len(recs), pa.string()),
        "partition": pa.array([partition] * len(recs), pa.int32()),
        "offset": pa.array([r["offset"] for r in recs], pa.int64()),
        "timestamp": pa.array([r["timestamp"] for r in recs], pa.timestamp("ms", tz="UTC")),
        "key": pa.array([r["key"] for r in recs], pa.string()),
        "value": pa.array([r["value"] for r in recs], pa.string()),
        "headers": pa.array([[{"key": k, "value": None if v is None else v.encode()} for k, v in r["headers"]]
                             for r in recs], pa.list_(HEADER)),
    })
    last = recs[-1]["offset"]
    pq.write_table(table, os.path.join(out, f"{0:020}-{last:020}.parquet"))


QUERIES = [
    ("group by key",
     "SELECT key, count(*) AS n FROM orders GROUP BY key ORDER BY key NULLS FIRST"),
    ("count distinct keys",
     "SELECT count(DISTINCT key) AS keys, count(*) AS n FROM orders"),
    ("tombstone ratio per partition",
     "SELECT partition, sum(CASE WHEN value IS NULL THEN 1 ELSE 0 END) AS tombstones, count(*) AS n "
     "FROM orders GROUP BY partition ORDER BY partition"),
    ("tombstone ratio",
     "SELECT partition, CAST(sum(CASE WHEN value IS NULL THEN 1 ELSE 0 END) AS DOUBLE) / count(*) AS ratio "
     "FROM orders GROUP BY partition ORDER BY partition"),
    ("count distinct keys per partition",
     "SELECT partition, count(DISTINCT key) AS keys FROM orders GROUP BY partition ORDER BY partition"),
    ("time buckets",
     "SELECT epoch_ms(date_trunc('minute', timestamp)) AS minute, count(*) AS n FROM orders "
     "GROUP BY minute ORDER BY minute"),
    ("header filter",
     "SELECT count(*) AS n FROM (SELECT unnest(headers) AS h FROM orders) "
     "WHERE h['key'] = 'trace' AND h['value'] IS NULL"),
    ("records with a header",
     "SELECT partition, count(*) AS n FROM (SELECT DISTINCT partition, \"offset\" FROM "
     "(SELECT partition, \"offset\", unnest(headers) AS h FROM orders) WHERE h['key'] = 'source') "
     "GROUP BY partition ORDER BY partition"),
    ("header value filter",
     "SELECT count(*) AS n FROM (SELECT unnest(headers) AS h FROM orders) "
     "WHERE h['key'] = 'trace' AND h['value'] IS NOT NULL"),
    ("offset range",
     "SELECT partition, min(\"offset\") AS lo, max(\"offset\") AS hi, count(*) AS n FROM orders "
     "WHERE partition = 1 AND \"offset\" >= 120 AND \"offset\" < 175 GROUP BY partition"),
    ("time range",
     f"SELECT count(*) AS n, min(\"offset\") AS lo FROM orders WHERE partition = 0 "
     f"AND timestamp >= TIMESTAMP '2024-04-24 23:09:00' AND timestamp < TIMESTAMP '2024-04-24 23:11:00'"),
    ("offset and time range",
     "SELECT partition, count(*) AS n, max(\"offset\") AS hi FROM orders WHERE \"offset\" >= 50 "
     "AND timestamp < TIMESTAMP '2024-04-24 23:10:00' GROUP BY partition ORDER BY partition"),
    ("join of two topics",
     "SELECT json_value_name AS name, count(*) AS n FROM ("
     "SELECT {uname} AS json_value_name FROM orders o JOIN users u ON {ouser} = u.key"
     ") GROUP BY name ORDER BY name"),
]

JSON = {
    "krec": {"uname": "json_get_str(u.value, 'name')", "ouser": "json_get_str(o.value, 'user')"},
    "duckdb": {"uname": "json_extract_string(u.value, '$.name')", "ouser": "json_extract_string(o.value, '$.user')"},
}

# DataFusion spells a few things differently.
KREC_SPELLING = [("epoch_ms(date_trunc('minute', timestamp))",
                  "CAST(to_unixtime(date_trunc('minute', timestamp)) AS BIGINT) * 1000")]


def krec_rows(sql, tables):
    for a, b in KREC_SPELLING:
        sql = sql.replace(a, b)
    args = [KREC, "sql", sql, "--format", "json", "--key-format", "string", "--value-format", "string"]
    for name, source in tables.items():
        args += ["--table", f"{name}={source}"]
    p = subprocess.run(args, capture_output=True, check=False)
    if p.returncode != 0:
        sys.exit(f"krec sql failed ({p.returncode}): {p.stderr.decode()}\n{sql}")
    return [tuple(json.loads(line).get(c) for c in cols_of(line)) for line in p.stdout.decode().splitlines()]


def cols_of(line):
    return list(json.loads(line).keys())


def norm(rows):
    return [tuple(None if v is None else (int(v) if isinstance(v, (int, float)) and float(v).is_integer() else v)
                  for v in r) for r in rows]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        seg, ds = os.path.join(tmp, "segments"), os.path.join(tmp, "dataset")
        os.makedirs(seg)
        orders = []
        for p in range(2):
            recs = records("orders", p, 300)
            orders.append(write_segments(seg, "orders", p, recs))
            write_parquet(ds, "orders", p, recs)
        users = records("users", 0, 4)
        users_dir = write_segments(seg, "users", 0, users)
        write_parquet(ds, "users", 0, users)

        exported = os.path.join(tmp, "exported")
        subprocess.run([KREC, "export", *orders, users_dir, "--output", exported, "--jobs", "2",
                        "--key-format", "string", "--value-format", "string"],
                       capture_output=True, check=True)

        def duck(root):
            db = duckdb.connect()
            for t in ("orders", "users"):
                db.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{root}/topic={t}/*/*.parquet')")
            db.execute("SET TimeZone = 'UTC'")
            return db

        db, dbx = duck(ds), duck(exported)
        failed = 0
        for name, sql in QUERIES:
            want = norm(db.execute(sql.format(**JSON["duckdb"])).fetchall())
            exp = norm(dbx.execute(sql.format(**JSON["duckdb"])).fetchall())
            got = norm(krec_rows(sql.format(**JSON["krec"]), {"orders": ",".join(orders), "users": users_dir}))
            ok = got == want == exp
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} sql/{name}: {len(want)} rows, krec sql = DuckDB on krec export's "
                  f"dataset = DuckDB on pyarrow's" + ("" if ok else f"\n  duckdb {want[:5]}\n  export {exp[:5]}\n  krec   {got[:5]}"))
            if not want:
                sys.exit(f"{name}: no rows, the check would prove nothing")
        # The exported dataset through krec sql too: the same answers as from the segments.
        want = norm(db.execute(QUERIES[0][1]).fetchall())
        got = norm(krec_rows(QUERIES[0][1], {"orders": os.path.join(ds, "topic=orders")}))
        print(f"{'PASS' if got == want else 'FAIL'} sql/dataset: group by key on the Parquet dataset through krec sql equals DuckDB")
        failed += got != want
        if failed:
            sys.exit(f"{failed} check(s) failed")
        print("sql_duckdb_check: all equal")


if __name__ == "__main__":
    main()
