#!/usr/bin/env python3
"""Checks for `krec ship`'s interop step (standard library only).

  ship_check.py records SOURCE.jsonl TARGET.jsonl
      SOURCE: `krec log read --isolation read-committed --bytes hex` of the source (what a
      read_committed consumer of the source sees); TARGET: ShipConsume's lines for the target at
      read_committed. Equal keys, values, headers and timestamps, in order (a v0 record's null
      timestamp is -1 in the target: Kafka's up-conversion writes NO_TIMESTAMP).

  ship_check.py uncommitted SOURCE.jsonl TARGET_RU.jsonl
      Every record the target shows at read_uncommitted is a source record (aborted target
      transactions only repeat source records, they never invent or lose any), and the source's
      records appear at least once.

  ship_check.py sections SOURCE_DUMP.jsonl TARGET_DUMP.jsonl AS_IS
      SOURCE_DUMP, TARGET_DUMP: `krec dump --format json` of the source and target partition
      directories. The records sections (after the 61-byte v2 header) of the target's data
      batches, read from the files at the dumped positions, contain the source's sections in
      order: exactly AS_IS of them (the report's batches_as_is) byte-equal.

Prints "PASS name: detail" / "FAIL name: detail" lines; exits 0.
"""
import hashlib
import json
import mmap
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def norm(r):
    ts = r.get("timestamp")
    return (
        -1 if ts is None else ts,
        r.get("key"),
        r.get("value"),
        tuple((h.get("key"), h.get("value")) for h in r.get("headers", [])),
    )


def records(src, tgt, name):
    s = [norm(r) for r in load(src)]
    t = [norm(r) for r in load(tgt)]
    if s == t:
        print(f"PASS {name}: {len(t)} records equal in order (keys, values, headers, timestamps)")
        return
    first = next((i for i, (a, b) in enumerate(zip(s, t)) if a != b), min(len(s), len(t)))
    print(f"FAIL {name}: source has {len(s)} records, target {len(t)}; first difference at #{first}: "
          f"{s[first] if first < len(s) else None} vs {t[first] if first < len(t) else None}")


def uncommitted(src, tgt, name):
    s = [norm(r) for r in load(src)]
    t = [norm(r) for r in load(tgt)]
    known = set(s)
    foreign = [r for r in t if r not in known]
    missing = known - set(t)
    if foreign or missing:
        print(f"FAIL {name}: {len(foreign)} target records not in the source, {len(missing)} source records missing")
    else:
        print(f"PASS {name}: {len(t)} records at read_uncommitted, {len(t) - len(s)} from aborted "
              f"transactions, all repeats of source records")


def sections_of(dump):
    """The SHA-256 of each v2 data batch's records section, in order (files mapped, not read:
    segments may be 1 GiB)."""
    out = []
    maps = {}
    try:
        for e in load(dump):
            if e.get("magic") != 2 or e.get("control"):
                continue
            f = e["file"]
            if f not in maps:
                with open(f, "rb") as fh:
                    maps[f] = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            pos, size = e["position"], e["size_bytes"]
            out.append(hashlib.sha256(maps[f][pos + 61:pos + size]).digest())
    finally:
        for m in maps.values():
            m.close()
    return out


def sections(src, tgt, as_is, name):
    s = sections_of(src)
    t = sections_of(tgt)
    # Greedy in-order matching of target sections against source sections.
    i = 0
    equal = 0
    for sec in t:
        j = i
        while j < len(s) and s[j] != sec:
            j += 1
        if j < len(s):
            equal += 1
            i = j + 1
    if equal == int(as_is):
        print(f"PASS {name}: {equal} target v2 batches carry a source batch's records section "
              f"byte for byte, as the report's batches_as_is says ({len(t)} target data batches)")
    else:
        print(f"FAIL {name}: {equal} byte-equal records sections, the report says {as_is} batches as is")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    args = sys.argv[2:]
    name = "ship"
    if args and args[-1].startswith("name="):
        name = args.pop()[5:]
    if cmd == "records" and len(args) == 2:
        records(*args, name)
    elif cmd == "uncommitted" and len(args) == 2:
        uncommitted(*args, name)
    elif cmd == "sections" and len(args) == 3:
        sections(*args, name)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
