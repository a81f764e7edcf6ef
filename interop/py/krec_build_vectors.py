#!/usr/bin/env python3
"""krec build -> Apache Kafka: rebuild every Kafka vector with `krec build` and let Kafka judge.

    krec_build_vectors.py --krec KREC --vectors tests/vectors/kafka-java --out DIR --java-cp CP

For each vector file with a "build" section that `krec build` can express, the build's records
become krec's JSON-lines input (`--bytes hex`), the build's fields become `krec build` flags, and
the output goes to DIR/NAME.bin beside DIR/NAME.json (the build object). Then Kafka's
`ValidateBuilt` runs once over DIR (strict bytes for lz4/snappy, gzip/zstd compared decompressed
because their bytes depend on the compression library). A vector whose only failing check is
"bytes" on lz4/snappy is run again with `--tolerate-codecs all`: if that passes the vector passes
with a note that our compressed bytes differ from Kafka's (lz4-java / snappy-java). A vector at
an lz4 level other than 9 (Kafka's LZ4 HC) passes when krec refuses it with exit 2 and writes
nothing, as every krec command does.

Prints one line per vector: `PASS name: ...`, `FAIL name: ...`, `FAIL name [pending: compression]:
...` when krec reports the codec as not implemented yet, or `SKIP name: reason`. Standard library
only. Exit status 0 (the caller counts the lines).
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

PENDING = "[pending: compression]"


def krec_args(build):
    """krec build flags for a build object, or (None, reason) when krec cannot express it."""
    magic = build["magic"]
    args = ["build", "--magic", str(magic), "--bytes", "hex"]
    codec = build.get("compression") or "none"
    level = build.get("level")
    control = build.get("control")
    if build.get("records_per_batch") is not None:
        args += ["--records-per-batch", str(build["records_per_batch"])]
    if control is not None:
        if control.get("type") not in ("commit", "abort"):
            return None, "krec build --control writes commit/abort markers only, not %r" % control.get("type")
        if control.get("version", 0) != 0:
            return None, "krec build --control writes control version 0 only"
        if codec != "none" or build.get("records"):
            return None, "a compressed control batch, or one with records, is not a krec build input"
        args += [
            "--control", control["type"],
            "--producer-id", str(build.get("producer_id", -1)),
            "--producer-epoch", str(build.get("producer_epoch", -1)),
            "--coordinator-epoch", str(control["coordinator_epoch"]),
            "--timestamp", str(control["timestamp"]),
            "--base-offset", str(build.get("base_offset", 0)),
            "--partition-leader-epoch", str(build.get("partition_leader_epoch", -1)),
        ]
        return args, None
    args += ["--compression", codec if level is None else "%s:%d" % (codec, level)]
    args += ["--base-offset", str(build.get("base_offset", 0))]
    ts_type = build.get("timestamp_type") or ("none" if magic == 0 else "create_time")
    if magic == 0:
        if ts_type != "none":
            return None, "magic 0 has no timestamp type (%s)" % ts_type
    else:
        if ts_type == "none":
            return None, "timestamp_type none needs magic 0"
        args += ["--timestamp-type", ts_type]
        if ts_type == "log_append_time":
            if build.get("log_append_time") is None:
                return None, "log_append_time without a time"
            args += ["--log-append-time", str(build["log_append_time"])]
    if magic >= 2:
        args += [
            "--producer-id", str(build.get("producer_id", -1)),
            "--producer-epoch", str(build.get("producer_epoch", -1)),
            "--base-sequence", str(build.get("base_sequence", -1)),
            "--partition-leader-epoch", str(build.get("partition_leader_epoch", -1)),
        ]
        if build.get("transactional"):
            args.append("--transactional")
        if build.get("delete_horizon_ms") is not None:
            args += ["--delete-horizon-ms", str(build["delete_horizon_ms"])]
    else:
        # Kafka's builder takes these for every magic but only v2 writes them.
        if build.get("producer_id", -1) != -1 or build.get("transactional") or build.get("delete_horizon_ms") is not None:
            return None, "producer fields / delete horizon need magic 2"
    return args, None


def krec_records(build):
    """The build's records as krec's JSON lines (hex bytes, header keys as strings)."""
    lines = []
    for r in build.get("records", []):
        rec = {}
        if r.get("offset") is not None:
            rec["offset"] = r["offset"]
        rec["timestamp"] = r.get("timestamp", -1)
        rec["key"] = r.get("key")
        rec["value"] = r.get("value")
        rec["headers"] = [{"key": h["key"], "value": h.get("value")} for h in r.get("headers", [])]
        lines.append(json.dumps(rec, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


T0 = 1714000000000


def _recs(n, headers=False, offsets=None):
    out = []
    for i in range(n):
        r = {"timestamp": T0 + (i * 7919) % 13, "key": None if i % 4 == 0 else ("6b2d%02x" % i),
             "value": None if i % 5 == 3 else ("76616c7565" * (i + 1)), "headers": []}
        if headers:
            r["headers"] = [{"key": "h", "value": "%02x" % i}, {"key": "h", "value": None}]
        if offsets:
            r["offset"] = offsets[i]
        out.append(r)
    return out


# Inputs beyond the Kafka vectors: several entries per run (records_per_batch, which ValidateBuilt
# rebuilds with Kafka batch by batch, offsets and sequences running on) and offset edge cases.
EXTRA = [
    ("extra_v2_none_first_offset_after_base",
     {"magic": 2, "base_offset": 0, "records": _recs(2, offsets=[5, 7])}),
    ("extra_v2_none_txn_batches_seq_wrap",
     {"magic": 2, "base_offset": 100, "producer_id": 9, "producer_epoch": 1, "base_sequence": 2147483646,
      "transactional": True, "partition_leader_epoch": 4, "records_per_batch": 3, "records": _recs(10, headers=True)}),
    ("extra_v2_zstd_lat_batches",
     {"magic": 2, "compression": "zstd", "timestamp_type": "log_append_time", "log_append_time": T0 + 600000,
      "records_per_batch": 2, "records": _recs(5, headers=True)}),
    ("extra_v2_lz4_idempotent_batches",
     {"magic": 2, "compression": "lz4", "producer_id": 77, "producer_epoch": 0, "base_sequence": 0,
      "records_per_batch": 4, "records": _recs(9)}),
    ("extra_v1_none_batches", {"magic": 1, "base_offset": 40, "records_per_batch": 3, "records": _recs(7)}),
    ("extra_v1_lz4_batches", {"magic": 1, "compression": "lz4", "base_offset": 40, "records_per_batch": 3, "records": _recs(7)}),
    ("extra_v1_snappy_lat_batches",
     {"magic": 1, "compression": "snappy", "timestamp_type": "log_append_time", "log_append_time": T0 + 600000,
      "records_per_batch": 2, "records": _recs(5)}),
    ("extra_v0_gzip_batches", {"magic": 0, "compression": "gzip", "base_offset": 9, "records_per_batch": 3, "records": _recs(7)}),
    ("extra_v0_lz4_batches", {"magic": 0, "compression": "lz4", "records_per_batch": 2, "records": _recs(5)}),
]


def is_pending(text):
    return "not implemented" in text


def run_validate(java_cp, out_dir, tolerate, log_path):
    cmd = ["java", "-cp", java_cp, "dev.krecords.interop.ValidateBuilt", "--quiet"]
    if tolerate:
        cmd += ["--tolerate-codecs", tolerate]
    cmd.append(str(out_dir))
    with open(log_path, "w") as log:
        p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=300)
    text = Path(log_path).read_text(errors="replace")
    failures = {}
    skipped = {}
    for line in text.splitlines():
        m = re.match(r"FAIL (\S+) (\S+): (.*)", line)
        if m:
            name = re.sub(r"\[\d+\]$", "", m.group(1))
            failures.setdefault(name, []).append((m.group(2), m.group(3)))
        m = re.match(r"SKIP (\S+): (.*)", line)
        if m:
            skipped[m.group(1)] = m.group(2)
    if p.returncode not in (0, 1):
        raise RuntimeError("ValidateBuilt exited %d:\n%s" % (p.returncode, "\n".join(text.splitlines()[-20:])))
    return failures, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--java-cp", required=True)
    a = ap.parse_args()

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []  # (status, name, detail)
    built = {}  # name -> codec
    inputs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(a.vectors).glob("*.json"))]
    for name, build in EXTRA:
        inputs.append({"name": name, "layout": "records", "build": build})
    for vec in inputs:
        name = vec["name"]
        build = vec.get("build")
        if build is None:
            results.append(("SKIP", name, "no build section"))
            continue
        if vec.get("layout", "records") != "records":
            results.append(("SKIP", name, "layout %r: not reproducible by a builder" % vec.get("layout")))
            continue
        args, reason = krec_args(build)
        if args is None:
            results.append(("SKIP", name, reason))
            continue
        codec = build.get("compression") or "none"
        bin_path = out / (name + ".bin")
        stdin = "" if build.get("control") else krec_records(build)
        level = build.get("level")
        if codec == "lz4" and level is not None and level != 9:
            # Kafka writes lz4 at any level but its default with LZ4 HC (lz4-java's high
            # compressor), which krecords does not have: every krec command refuses such a level
            # with one message instead of writing other bytes than Kafka's.
            p = subprocess.run([a.krec] + args + ["--output", str(bin_path)], input=stdin.encode("utf-8"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            err = p.stderr.decode("utf-8", "replace").strip().replace("\n", " | ")[:300]
            if p.returncode == 2 and "LZ4 HC" in err and not bin_path.exists():
                results.append(("PASS", name, "lz4 level %d refused (exit 2, nothing written): %s" % (level, err)))
            else:
                results.append(("FAIL", name, "krec %s exited %d (expected 2: lz4 level %d needs LZ4 HC, "
                                "which krecords refuses): %s" % (" ".join(args), p.returncode, level, err)))
            if bin_path.exists():
                bin_path.unlink()
            continue
        try:
            p = subprocess.run([a.krec] + args + ["--output", str(bin_path)], input=stdin.encode("utf-8"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        except subprocess.TimeoutExpired:
            results.append(("FAIL", name, "krec build timed out after 60 s"))
            continue
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace").strip().replace("\n", " | ")[:300]
            label = " " + PENDING if codec != "none" and is_pending(err) else ""
            results.append(("FAIL", name + label, "krec %s exited %d: %s" % (" ".join(args), p.returncode, err)))
            if bin_path.exists():
                bin_path.unlink()
            continue
        (out / (name + ".json")).write_text(json.dumps(build, indent=1, ensure_ascii=False), encoding="utf-8")
        built[name] = codec

    if built:
        failures, skipped = run_validate(a.java_cp, out, None, str(out) + ".strict.log")
        # lz4/snappy vectors whose only problem is the byte comparison: try again, tolerating the codec.
        retry = sorted(n for n, f in failures.items()
                       if built.get(n) in ("lz4", "snappy") and all(check == "bytes" for check, _ in f))
        tolerated = {}
        if retry:
            rdir = Path(str(out) + ".retry")
            rdir.mkdir(exist_ok=True)
            for n in retry:
                for ext in (".bin", ".json"):
                    os.link(out / (n + ext), rdir / (n + ext)) if not (rdir / (n + ext)).exists() else None
            rfail, _ = run_validate(a.java_cp, rdir, "all", str(out) + ".tolerant.log")
            for n in retry:
                if n not in rfail:
                    tolerated[n] = failures.pop(n)
        for name, codec in sorted(built.items()):
            if name in skipped:
                results.append(("SKIP", name, "ValidateBuilt: " + skipped[name]))
            elif name in failures:
                detail = "; ".join("%s: %s" % (c, d) for c, d in failures[name])[:600]
                results.append(("FAIL", name, "ValidateBuilt: " + detail))
            elif name in tolerated:
                results.append(("PASS", name, "Kafka accepts it; %s bytes differ from Kafka's (%s), "
                                "headers and decompressed records equal [tolerated-codec]"
                                % (codec, "lz4-java" if codec == "lz4" else "snappy-java")))
            else:
                how = "byte-identical to Kafka" if codec in ("none", "lz4", "snappy") else \
                    "equal to Kafka's after decompression (%s bytes depend on the library)" % codec
                results.append(("PASS", name, "ValidateBuilt: all checks, " + how))

    order = {n: i for i, n in enumerate(sorted({r[1].split(" ")[0] for r in results}))}
    for status, name, detail in sorted(results, key=lambda r: order[r[1].split(" ")[0]]):
        print("%s %s: %s" % (status, name, detail))
    return 0


if __name__ == "__main__":
    sys.exit(main())
