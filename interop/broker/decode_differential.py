#!/usr/bin/env python3
"""krec's internal-topic decoders against DumpLogSegments' on records nobody would write.

    decode_differential.py --krec KREC --java-cp CP --fixtures DIR --work DIR [--seed N] [--records N]

For each decoder (--offsets-decoder, --transaction-log-decoder, --share-group-state-decoder,
--cluster-metadata-decoder, --remote-log-metadata-decoder) builds one segment of N records, one
per batch, with `krec build --bytes hex`: half random bytes behind a valid-looking prefix (record
type and version, or frame version, apiKey and version), half the real records of the fixture
partition (crates/cli/tests/fixtures/internal/TOPIC-N) with bytes changed, cut or inserted. Then
`krec dump --print-data` (decoder from the directory name) must print DumpLogSegments' text with
that decoder flag, line for line: every unknown type, bad version, short read, bad tag and
constructor check shown as Kafka shows it. Records without a key are left out of the coordinator
topics (kafka-dump-log stops on them with an exception; krec prints its message and goes on,
which crates/cli/tests/cli/decode.rs pins).

Prints PASS/FAIL lines; standard library only; exit status 0 (the caller counts).
"""
import argparse
import json
import random
import subprocess
from pathlib import Path

# (partition directory of the fixtures, decoder flag, coordinator?, prefix for random records)
DECODERS = [
    ("__consumer_offsets-0", "--offsets-decoder", True, lambda r: bytes([0, r.randrange(26)]),
     lambda r: bytes([0, r.randrange(6)])),
    ("__transaction_state-0", "--transaction-log-decoder", True, lambda r: bytes([0, r.randrange(2)]),
     lambda r: bytes([0, r.randrange(3)])),
    ("__share_group_state-27", "--share-group-state-decoder", True, lambda r: bytes([0, r.randrange(3)]),
     lambda r: bytes([0, r.randrange(2)])),
    ("__cluster_metadata-0", "--cluster-metadata-decoder", False, None,
     lambda r: bytes([1, r.randrange(30), r.randrange(4)])),
    ("__cluster_metadata-1", "--cluster-metadata-decoder", False, None,
     lambda r: bytes([1, r.randrange(30), r.randrange(4)])),
    ("__remote_log_metadata-0", "--remote-log-metadata-decoder", False, None,
     lambda r: bytes([1, r.randrange(5), r.randrange(2)])),
]


def report(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


def noise(r, n):
    """Bytes biased to small values, so that lengths and counts often fit."""
    return bytes(r.choice([0, 1, 2, 3, 4, 0x7f, 0x80, 0xff, r.randrange(256)]) for _ in range(n))


def mutate(r, b):
    b = bytearray(b)
    op = r.random()
    if op < 0.6 and b:
        for _ in range(r.randint(1, 3)):
            b[r.randrange(len(b))] = r.choice([0, 1, 2, 0x7f, 0x80, 0xff, r.randrange(256)])
    elif op < 0.8 and b:
        del b[r.randrange(len(b)):]
    else:
        p = r.randrange(len(b) + 1)
        b[p:p] = noise(r, r.randint(1, 4))
    return bytes(b)


def seeds(krec, segment):
    p = subprocess.run([krec, "dump", "--deep", "--format", "json", "--bytes", "hex", "--decode", "none",
                        str(segment)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=True)
    out = []
    for line in p.stdout.decode("utf-8").split("\n"):
        if not line.strip():
            continue
        e = json.loads(line)
        if e.get("control"):
            continue
        for rec in e.get("records", []):
            out.append((bytes.fromhex(rec["key"]) if rec["key"] is not None else None,
                        bytes.fromhex(rec["value"]) if rec["value"] is not None else None))
    return out


def records(r, n, coordinator, key_prefix, value_prefix, real):
    out = []
    for i in range(n):
        if i % 2 == 0 or not real:
            key = key_prefix(r) + noise(r, r.randrange(30)) if coordinator else None
            value = value_prefix(r) + noise(r, r.randrange(90))
            if coordinator and r.random() < 0.1:
                value = None  # a tombstone
        else:
            key, value = r.choice(real)
            if value is not None and (key is None or r.random() < 0.8):
                value = mutate(r, value)
            elif key is not None:
                key = mutate(r, key)
        if coordinator and key is None:
            key = b""
        out.append({"timestamp": 1, "key": key.hex() if key is not None else None,
                    "value": value.hex() if value is not None else None})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=20260421)
    ap.add_argument("--records", type=int, default=1000)
    a = ap.parse_args()
    work = Path(a.work)
    for name, flag, coordinator, key_prefix, value_prefix in DECODERS:
        r = random.Random("%d/%s" % (a.seed, name))
        try:
            real = seeds(a.krec, Path(a.fixtures) / name / "00000000000000000000.log")
            recs = records(r, a.records, coordinator, key_prefix, value_prefix, real)
            d = work / name
            d.mkdir(parents=True, exist_ok=True)
            seg = d / "00000000000000000000.log"
            (work / (name + ".jsonl")).write_text("".join(json.dumps(x) + "\n" for x in recs))
            subprocess.run([a.krec, "build", "--bytes", "hex", "--records-per-batch", "1", "--output", str(seg)],
                           input="".join(json.dumps(x) + "\n" for x in recs).encode(), check=True, timeout=120,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            java = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8",
                                   "-Dstdout.encoding=UTF-8", "-cp", a.java_cp, "org.apache.kafka.tools.DumpLogSegments",
                                   "--deep-iteration", "--print-data-log", flag, "--files", str(seg)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
            ours = subprocess.run([a.krec, "dump", "--print-data", str(seg)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=300)
        except Exception as ex:  # one decoder's trouble is one failed check
            report("FAIL", name, "could not run: %r" % ex)
            continue
        theirs = java.stdout.decode("utf-8", "replace").split("\n")
        mine = ours.stdout.decode("utf-8", "replace").split("\n")
        (work / (name + ".kafka.txt")).write_text("\n".join(theirs))
        (work / (name + ".krec.txt")).write_text("\n".join(mine))
        if java.returncode != 0:
            report("FAIL", name, "DumpLogSegments %s exited %d: %s"
                   % (flag, java.returncode, java.stderr.decode("utf-8", "replace")[-300:]))
            continue
        diff = [(i, x, y) for i, (x, y) in enumerate(zip(theirs, mine)) if x != y]
        decoded = sum(1 for l in theirs if " payload: {" in l or " payload: Remote" in l)
        if diff or len(theirs) != len(mine):
            first = diff[0] if diff else (min(len(theirs), len(mine)), "", "")
            report("FAIL", name, "%d of %d lines differ (Kafka %d lines, krec %d); first at line %d: Kafka %r, krec %r"
                   % (len(diff), len(theirs), len(theirs), len(mine), first[0] + 1, first[1][-240:], first[2][-240:]))
        else:
            report("PASS", name, "%d random and mutated records (%d of them decoded, the others Kafka's error "
                                 "messages): krec dump --print-data prints DumpLogSegments %s's %d lines exactly"
                   % (a.records, decoded, flag, len(theirs) - 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
