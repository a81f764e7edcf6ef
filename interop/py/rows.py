"""Rows of the broker scenario in one canonical form, for the checks that compare a reader's rows
with Kafka's Java consumer (export_check.py, spark_check.py, python_package_check.py).

Only the standard library: the checks run in different virtual environments.
"""
import hashlib
import json


def canonical(offset, timestamp, key, value, headers):
    """A record as a comparable tuple; keys and values in hex (None stays None)."""
    return (offset, timestamp, key, value, tuple((k, v) for k, v in headers))


def hexed(b):
    return None if b is None else bytes(b).hex()


def consumer_rows(records):
    """The Java consumer's records of scenario.json in canonical form."""
    return [canonical(r["offset"], r["timestamp"], r["key"], r["value"],
                      [(h["key"], h["value"]) for h in r["headers"]]) for r in records]


def digest(rows):
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def compare(name, got, want):
    """Prints PASS with the count and digest when `got` equals `want`, else FAIL with the
    first difference."""
    if got == want:
        print("PASS %s: %d rows equal to the Java consumer's at read_committed (digest %s)"
              % (name, len(got), digest(got)))
        return
    first = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
    print("FAIL %s: %d rows, the consumer %d; first difference at row %d: %s vs %s"
          % (name, len(got), len(want), first, got[first] if first < len(got) else None,
             want[first] if first < len(want) else None))
