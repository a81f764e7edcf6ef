#!/usr/bin/env python3
"""DuckDB's side of scripts/bench-tables.sh (python duckdb, in the script's venv).

  bench-tables-duckdb.py json2parquet OUTPUT.parquet
      `krec dump --deep --format json` on stdin (JSON Lines, one object per entry with its
      records) to Parquet (zstd) through read_json: one row per record of the data batches
      (control batches left out), the columns offset, timestamp (ms, UTC), timestamp_type, key,
      value, headers, producer_id, producer_epoch, transactional, compression. The columns are
      declared (no sampling of a pipe) and DuckDB uses every core.
  bench-tables-duckdb.py sql DATASET_DIR
      SELECT key, count(*) AS n ... GROUP BY key ORDER BY 2 DESC LIMIT 10 on every *.parquet
      file under DATASET_DIR (a `krec export` dataset); prints the rows.
"""
import sys

import duckdb

QUERY = "SELECT key, count(*) AS n FROM t GROUP BY key ORDER BY 2 DESC LIMIT 10"
ENTRY_COLUMNS = {
    "magic": "TINYINT",
    "compression": "VARCHAR",
    "timestamp_type": "VARCHAR",
    "producer_id": "BIGINT",
    "producer_epoch": "SMALLINT",
    "transactional": "BOOLEAN",
    "control": "BOOLEAN",
    "records": "STRUCT(\"offset\" BIGINT, \"timestamp\" BIGINT, \"key\" VARCHAR, "
               "\"value\" VARCHAR, headers STRUCT(\"key\" VARCHAR, \"value\" VARCHAR)[])[]",
}


def json2parquet(output):
    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in ENTRY_COLUMNS.items()) + "}"
    duckdb.sql(f"""
        COPY (
            SELECT r."offset", epoch_ms(r."timestamp") AS "timestamp", timestamp_type,
                   r."key", r."value", r.headers, producer_id, producer_epoch, transactional,
                   compression
            FROM (SELECT unnest(records) AS r, * EXCLUDE (records)
                  FROM read_json('/dev/stdin', format = 'newline_delimited',
                                 columns = {columns}, maximum_object_size = 268435456)
                  WHERE NOT control)
        ) TO '{output}' (FORMAT parquet, COMPRESSION zstd)
    """)


def sql(dataset):
    con = duckdb.connect()
    con.sql(f"CREATE VIEW t AS SELECT * FROM read_parquet('{dataset}/**/*.parquet')")
    for key, n in con.sql(QUERY).fetchall():
        print(f"{key!r}\t{n}")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("json2parquet", "sql"):
        print(__doc__, file=sys.stderr)
        return 2
    (json2parquet if sys.argv[1] == "json2parquet" else sql)(sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
