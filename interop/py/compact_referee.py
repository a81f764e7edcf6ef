#!/usr/bin/env python3
"""Kafka's own log cleaner as the referee for `krec log compact` (issue 17).

For each case a partition directory is built with `krec log create/append/end-txn` (fixed
seeds, fixed timestamps), copied twice, and cleaned: one copy by Kafka 4.4.0's `Cleaner`
(`dev.krecords.interop.CleanerReferee`: a `UnifiedLog` over the directory, the cleanable range
of `LogCleanerManager`, one `doClean` with a fixed clock), the other by `krec log compact --now`,
with the same settings. Each case runs two passes: the second after the delete horizon of the
first (`now + delete.retention.ms + 1`), so tombstones and markers that got a horizon in the
first pass go in the second. Between the passes the first dirty offset is either reset (the
checkpoint removed, so everything is cleaned again, as Kafka's `runTwoPassClean` does) or new
data is appended to both copies by krec (so the old active segment becomes cleanable).

After each pass the two directories must hold:
  - the same decision (cleaned or not), first dirty, first uncleanable and next dirty offsets;
  - the same `.log` files, entry for entry: equal bytes, or, only where both entries are
    compressed and the bytes differ (codec libraries differ), equal framing and records as
    `krec dump --deep --format json` shows them (everything but crc and sizes);
  - the same `.txnindex` files, byte for byte, and the same `krec-cleaner-offset`;
  - `krec verify` clean on both.

With --broker DIR, a real broker's partition directories instead (its compacted internal
topics among them): each is verified, copied twice with cleanup.policy=compact, rolled (an empty
segment at its log end, as a broker's roll leaves it), cleaned by both and compared the same way.

Prints `PASS name` / `FAIL name: why` per case and pass; exit 1 on any failure.
KEEP_PASS1=1 keeps a copy of both directories after the first pass (DIR.pass1), for debugging.

Usage: compact_referee.py --krec KREC --java-cp CP [--work DIR] [--only SUBSTRING] [--broker DIR]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

# Timestamps start an hour before the run (rounded to the second): the log engine expires
# producers against the system clock while appending, and an input whose producers a writer
# already forgot is no test of which producers the cleaner keeps.
T0 = (int(time.time()) - 3600) * 1000
PKG = "dev.krecords.interop"


class Failure(Exception):
    pass


def run(cmd, stdin=None, check=True):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise Failure(f"{' '.join(cmd[:4])}... exit {p.returncode}: {p.stderr.strip()[-800:]} {p.stdout.strip()[-400:]}")
    return p.stdout


class Builder:
    """Builds one partition directory through the krec log engine."""

    def __init__(self, krec, path, config, seed):
        self.krec, self.path, self.rng = krec, path, random.Random(seed)
        self.ts = T0
        self.seq = {}
        args = [krec, "log", "create", path]
        for k, v in config.items():
            args += ["--config", f"{k}={v}"]
        run(args)

    def records(self, n, keys, tombstones=0.0, keyless=0.0, size=8):
        out = []
        for _ in range(n):
            self.ts += 1
            r = self.rng.random()
            key = None if r < keyless else f"key-{self.rng.randrange(keys)}"
            tomb = self.rng.random() < tombstones
            value = None if tomb else "v" + "".join(self.rng.choice("abcdefgh") for _ in range(size))
            out.append(json.dumps({"timestamp": self.ts, "key": key, "value": value}))
        return "\n".join(out) + "\n"

    def append(self, n, keys, per_batch=5, magic=None, codec=None, pid=None, txn=False, **kw):
        args = [self.krec, "log", "append", self.path, "--records-per-batch", str(per_batch)]
        if magic is not None:
            args += ["--magic", str(magic)]
        if codec is not None:
            args += ["--compression", codec]
        if pid is not None:
            seq = self.seq.get(pid, 0)
            args += ["--producer-id", str(pid), "--producer-epoch", "0", "--base-sequence", str(seq)]
            self.seq[pid] = seq + n
            if txn:
                args.append("--transactional")
        run(args, stdin=self.records(n, keys, **kw))

    def end_txn(self, pid, commit):
        self.ts += 1
        run([self.krec, "log", "end-txn", self.path, "--producer-id", str(pid), "--producer-epoch", "0",
             "--coordinator-epoch", "0", "--commit" if commit else "--abort", "--timestamp", str(self.ts)])

    def set_config(self, name, value):
        """Changes one setting in place (message.format.version: a topic upgraded over time)."""
        p = os.path.join(self.path, "krec-log.json")
        with open(p) as f:
            cfg = json.load(f)
        cfg[name] = value
        with open(p, "w") as f:
            json.dump(cfg, f, indent=2)


# ---------------------------------------------------------------- the cases

BASE = {"cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "1000", "producer.id.expiration.ms": "2147483647"}
FORMATS = {0: "0.9.0", 1: "0.10.2", 2: "3.0"}


def keyed(magic, codec):
    def build(b):
        for _ in range(6):
            b.append(40, keys=25, per_batch=7, magic=magic, codec=codec, tombstones=0.15)
    return build


def transactions(codec):
    def build(b):
        for round_ in range(8):
            b.append(6, keys=12, per_batch=3, codec=codec, pid=1, txn=True, tombstones=0.1)
            b.append(5, keys=12, per_batch=5, codec=codec, pid=2, txn=True)
            b.append(4, keys=12, per_batch=2, codec=codec)
            b.end_txn(1, commit=round_ % 3 != 2)
            b.append(3, keys=12, per_batch=3, codec=codec, pid=3, tombstones=0.3)
            b.end_txn(2, commit=round_ % 2 == 0)
        b.append(5, keys=12, per_batch=5, codec=codec)
    return build


def open_transaction(b):
    """Transactions, then one left open: the last stable offset stops the cleaner mid-segment."""
    transactions("none")(b)
    b.append(4, keys=12, per_batch=2, pid=9, txn=True)
    for _ in range(4):
        b.append(20, keys=12, per_batch=5, tombstones=0.1)


def mixed_formats(b):
    for version in ("0.9.0", "0.10.2", "3.0"):
        b.set_config("message.format.version", version)
        for _ in range(3):
            b.append(30, keys=20, per_batch=6, codec="gzip", tombstones=0.1)
            b.append(20, keys=20, per_batch=4, tombstones=0.1)


def small_map(b):
    for _ in range(8):
        b.append(50, keys=200, per_batch=10, tombstones=0.05)


def keyless(b):
    # A compacted log refuses records without a key; a topic switched from delete has them.
    b.set_config("cleanup.policy", "delete")
    for _ in range(5):
        b.append(30, keys=10, per_batch=6, keyless=0.3, tombstones=0.1)
    b.set_config("cleanup.policy", "compact")


def cases():
    out = []
    for magic in (0, 1, 2):
        for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
            if codec == "zstd" and magic < 2:
                continue  # Kafka has no zstd in v0/v1
            cfg = dict(BASE, **{"message.format.version": FORMATS[magic]})
            out.append((f"keyed-v{magic}-{codec}", cfg, keyed(magic, codec), "reset"))
    for codec in ("none", "lz4"):
        out.append((f"transactions-{codec}", dict(BASE), transactions(codec), "reset"))
        out.append((f"transactions-{codec}-append", dict(BASE), transactions(codec), "append"))
    out.append(("open-transaction", dict(BASE), open_transaction, "append"))
    for magic, codec in ((1, "none"), (1, "lz4"), (2, "gzip")):
        cfg = dict(BASE, **{"message.format.version": FORMATS[magic], "message.timestamp.type": "LogAppendTime"})
        out.append((f"log-append-time-v{magic}-{codec}", cfg, keyed(magic, codec), "reset"))
    out.append(("mixed-v0-v1-v2", dict(BASE, **{"message.format.version": "0.9.0"}), mixed_formats, "reset"))
    out.append(("partial-small-map", dict(BASE, **{"log.cleaner.dedupe.buffer.size": str(24 * 60)}),
                small_map, "append"))
    out.append(("dirty-ratio-not-reached", dict(BASE, **{"min.cleanable.dirty.ratio": "0.9"}),
                small_map, "append"))
    out.append(("min-compaction-lag", dict(BASE, **{"min.compaction.lag.ms": "1200"}), small_map, "append"))
    out.append(("keyless-and-grouping", dict(BASE, **{"segment.bytes": "1024"}), keyless, "reset"))
    return out


# ---------------------------------------------------------------- comparison

def entries(path):
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big")
        out.append((pos, data[pos:pos + 12 + size]))
        pos += 12 + size
    if pos != len(data):
        raise Failure(f"{path}: {len(data) - pos} trailing bytes")
    return out


def dump(krec, path):
    lines = run([krec, "dump", "--deep", "--format", "json", "--bytes", "hex", path]).splitlines()
    out = {}
    for line in lines:
        e = json.loads(line)
        if "position" in e:
            out[e["position"]] = e
    return out


def framing(e):
    return {k: v for k, v in e.items() if k not in ("file", "position", "size_bytes", "crc", "crc_valid")}


def compare_dirs(krec, kafka_dir, ours_dir):
    names = lambda d, ext: sorted(n for n in os.listdir(d) if n.endswith(ext))
    for ext in (".log", ".txnindex"):
        if names(kafka_dir, ext) != names(ours_dir, ext):
            raise Failure(f"{ext} files differ: kafka {names(kafka_dir, ext)} ours {names(ours_dir, ext)}")
    for n in names(kafka_dir, ".txnindex"):
        with open(os.path.join(kafka_dir, n), "rb") as a, open(os.path.join(ours_dir, n), "rb") as b:
            if a.read() != b.read():
                raise Failure(f"{n} differs")
    stats = {"entries": 0, "decoded": 0}
    for n in names(kafka_dir, ".log"):
        ka, ou = os.path.join(kafka_dir, n), os.path.join(ours_dir, n)
        ke, oe = entries(ka), entries(ou)
        if len(ke) != len(oe):
            raise Failure(f"{n}: kafka has {len(ke)} entries, ours {len(oe)}")
        kd = od = None
        for i, ((kp, kb), (op, ob)) in enumerate(zip(ke, oe)):
            stats["entries"] += 1
            if kb == ob:
                continue
            if kd is None:
                kd, od = dump(krec, ka), dump(krec, ou)
            kj, oj = framing(kd[kp]), framing(od[op])
            if kj.get("compression") == "none" or oj.get("compression") == "none":
                raise Failure(f"{n} entry {i}: uncompressed bytes differ: kafka {kj} ours {oj}")
            if kj != oj:
                raise Failure(f"{n} entry {i} ({kj.get('compression')}): decoded differ: kafka {kj} ours {oj}")
            stats["decoded"] += 1
    for d in (kafka_dir, ours_dir):
        p = subprocess.run([krec, "verify", d], capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise Failure(f"krec verify {d}: {p.stdout.strip()[-600:]} {p.stderr.strip()[-300:]}")
    read = lambda d: open(os.path.join(d, "krec-cleaner-offset")).read().strip() \
        if os.path.exists(os.path.join(d, "krec-cleaner-offset")) else None
    if read(kafka_dir) != read(ours_dir):
        raise Failure(f"krec-cleaner-offset: kafka {read(kafka_dir)} ours {read(ours_dir)}")
    return stats


def settings(cfg):
    """The referee's settings: the topic configs Kafka 4 knows, plus the cleaner's."""
    out = []
    for k, v in cfg.items():
        if k == "message.format.version":
            continue  # gone from Kafka 4's topic configs; the cleaner keeps each batch's magic
        out.append(f"{k}={v}")
    return out


def broker(a, work):
    """A real broker's partitions (its compacted internal topics among them), read, verified and
    cleaned by us and by Kafka's cleaner as compacted logs, with the same comparison."""
    failed = 0
    now = int(time.time() * 1000)
    cfg = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"}
    for name in sorted(os.listdir(a.broker)):
        src = os.path.join(a.broker, name)
        if not os.path.isdir(src) or name.startswith("__cluster_metadata") or "-" not in name:
            continue
        root = os.path.join(work, "broker", name)
        shutil.rmtree(root, ignore_errors=True)
        kafka, ours = os.path.join(root, "kafka", name), os.path.join(root, "ours", name)
        try:
            run([a.krec, "verify", src])
            info = json.loads(run([a.krec, "log", "info", src]).strip().splitlines()[-1])
            leo = info["segments"][-1]["next_offset"]
            for d in (kafka, ours):
                shutil.copytree(src, d, symlinks=True)
                # A roll, as the broker makes one: an empty active segment at the log end, so
                # every batch the broker wrote is in a cleanable segment.
                if info["segments"][-1]["size_bytes"] > 0:
                    open(os.path.join(d, f"{leo:020d}.log"), "wb").close()
                with open(os.path.join(d, "krec-log.json"), "w") as f:
                    json.dump({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01}, f)
            kr = json.loads(run(["java", "-cp", a.java_cp, f"{PKG}.CleanerReferee", kafka, str(now), "--always"]
                                + settings(cfg)).strip().splitlines()[-1])
            ou = json.loads(run([a.krec, "log", "compact", ours, "--now", str(now), "--always"]
                                ).strip().splitlines()[-1])
            for k in ("cleaned", "first_dirty_offset", "first_uncleanable_offset", "next_dirty_offset"):
                if kr[k] != ou[k]:
                    raise Failure(f"{k}: kafka {kr[k]} ours {ou[k]}")
            st = compare_dirs(a.krec, kafka, ours)
            print(f"PASS {name}: verified, cleaned={ou['cleaned']} next_dirty={ou['next_dirty_offset']} "
                  f"removed={ou.get('records_removed', 0)} entries={st['entries']} as Kafka's cleaner")
        except Failure as e:
            failed += 1
            print(f"FAIL {name}: {e}")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--work")
    ap.add_argument("--only")
    ap.add_argument("--broker", help="a broker's data directory: re-clean its partitions instead")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="compact-referee-")
    if a.broker:
        sys.exit(broker(a, work))
    failed = 0
    for seed, (name, cfg, build, between) in enumerate(cases()):
        if a.only and a.only not in name:
            continue
        root = os.path.join(work, name)
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        src, kafka, ours = (os.path.join(root, d, "topic-0") for d in ("src", "kafka", "ours"))
        try:
            b = Builder(a.krec, src, cfg, seed)
            build(b)
            b.append(3, keys=5, per_batch=3)  # a last batch so the data before it may be cleaned
            shutil.copytree(src, kafka, symlinks=True)
            shutil.copytree(src, ours, symlinks=True)
        except Failure as e:
            failed += 1
            print(f"FAIL {name}: building the input: {e}")
            continue
        now = b.ts + 1000
        for pas in (1, 2):
            label = f"{name} pass {pas}"
            try:
                if pas == 2:
                    if os.environ.get("KEEP_PASS1"):
                        for d in (kafka, ours):
                            shutil.copytree(d, d + ".pass1", symlinks=True)
                    now += int(cfg["delete.retention.ms"]) + 1
                    if between == "reset":
                        for d in (kafka, ours):
                            os.remove(os.path.join(d, "krec-cleaner-offset"))
                    else:
                        more = b.records(80, keys=20, tombstones=0.2)
                        for d in (kafka, ours):
                            run([a.krec, "log", "append", d, "--records-per-batch", "5"], stdin=more)
                kr = json.loads(run(["java", "-cp", a.java_cp, f"{PKG}.CleanerReferee", kafka, str(now)]
                                    + settings(cfg)).strip().splitlines()[-1])
                ou = json.loads(run([a.krec, "log", "compact", ours, "--now", str(now)]).strip().splitlines()[-1])
                for k in ("cleaned", "first_dirty_offset", "first_uncleanable_offset", "next_dirty_offset"):
                    if kr[k] != ou[k]:
                        raise Failure(f"{k}: kafka {kr[k]} ours {ou[k]}")
                st = compare_dirs(a.krec, kafka, ours)
                print(f"PASS {label}: cleaned={ou['cleaned']} next_dirty={ou['next_dirty_offset']} "
                      f"entries={st['entries']} (decoded-equal {st['decoded']}) removed={ou.get('records_removed', 0)}"
                      f" horizons={ou.get('delete_horizons_set', 0)}")
            except Failure as e:
                failed += 1
                print(f"FAIL {label}: {e}")
                break
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
