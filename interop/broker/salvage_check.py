#!/usr/bin/env python3
"""`krec salvage` on damaged copies of a real 4.4 broker's partitions (issue 31).

Usage: salvage_check.py --krec KREC --java-cp CP --dir DIR [--keep]

Starts its own broker in DIR/broker (interop/broker/broker.sh), creates two topics of one
partition per damage case with segment.bytes=1 MiB (so each partition has several segments):
sv-plain written by Kafka's ProducerPerformance (uncompressed, 16 KiB batches, values from a
payload file) and sv-txn by dev.krecords.interop.AbortedTransactions (Kafka's transactional
producer, lz4, every third transaction of each partition aborted). Kafka's ConsoleConsumer reads
both topics at read_committed (offset and value of each record), then the broker is stopped
cleanly.

Damage cases, partition N of both topics getting case N, each applied to the partition's middle
segment (never its last, active one) in a copy of the whole stopped log dir: flip (one byte
flipped in the middle of the segment, where its batch's CRC covers it), zeros (64 KiB zeroed from a third of it), truncate (the segment cut at half its
length), garbage (4,000 random bytes inserted in the middle), base-offset (bit 20 set in the base
offset of the batch in the middle, a field no CRC covers: the batch stays valid at an offset
about a million too high), marker (the first end marker of an aborted transaction after the
middle of the segment zeroed, the producer's next transaction kept: Kafka would end the aborted
one with the next one's commit marker and serve its records, so salvage must write an ABORT
marker at the lost marker's offset; in sv-plain, which has no markers, the batch in the middle
zeroed). Then, per damaged partition:

- salvage: `krec salvage PARTITION --output OUT --format json` exits 1 (something lost) and
  reports damage in the damaged segment (for base-offset: exactly that batch left out, at its
  position, and nothing damaged; for sv-txn's marker: an ABORT marker written at the lost
  one's offset);
- verify / dump-log (a): `krec verify OUT` is clean, and Kafka's DumpLogSegments
  --deep-iteration reads every output segment without an error, with as many records as the
  report says were kept (and the ABORT markers salvage wrote);
- broker-clean / broker-unclean (b): in a copy of the stopped log dir whose partition directory
  is replaced by OUT (partition.metadata kept), a broker started on it serves at read_committed
  exactly the records of the original consumption whose offsets salvage kept and that the
  kept batches make visible as Kafka reads them (a producer's open transaction ends with its
  next marker; one left open at the end keeps the last stable offset at its first offset),
  aborted records never served; the same again after an unclean shutdown (no clean-shutdown marker,
  recovery point 0, so the broker's own recovery checks every salvaged batch and keeps them
  all);
- versus-broker (c): the damaged copy given to a broker directly (unclean, recovery point 0):
  the records its recovery kept (DumpLogSegments on its partition directory afterwards) against
  the records salvage kept; salvage must keep at least as many, and the report's prediction of
  Kafka's recovery must be what the broker kept. The base-offset partitions go to a broker of
  their own (Kafka's recovery does not check that offsets increase; its offset index refuses the
  batch after the damaged one, which may take the whole log dir offline): what that broker
  serves of them is printed, and salvage must keep at least as many records.

Prints "PASS name: detail" / "FAIL name: detail" lines for interop/run.sh (count_results).
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEGMENT_BYTES = 1 << 20  # Kafka 4.x refuses less
CASES = ("flip", "zeros", "truncate", "garbage", "base-offset", "marker")
PLAIN_RECORDS = 60000
TXN_RECORDS = 64000
PER_TXN = 200
TOPICS = ("sv-plain", "sv-txn")


def out(name, ok, detail):
    print(("PASS" if ok else "FAIL") + f" {name}: {detail}", flush=True)


def sh(cmd, ok_codes=(0,), **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if r.returncode not in ok_codes:
        raise RuntimeError(f"{' '.join(cmd[:5])}... exit {r.returncode}: {r.stderr[-2000:]}{r.stdout[-1000:]}")
    return r


def java(cp, cls, *args):
    return sh(["java", "-cp", cp, cls, *args]).stdout


def consume(cp, bootstrap, topic, n=None):
    """ConsoleConsumer at read_committed: {"TOPIC-PARTITION": {offset: value}} (all records
    when n is None: stops after 8 s without a record)."""
    args = ["--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
            "--isolation-level", "read_committed", "--property", "print.offset=true",
            "--property", "print.partition=true",
            "--timeout-ms", "8000" if n is None else "60000"]
    if n is not None:
        args += ["--max-messages", str(n)]
    # On its timeout ConsoleConsumer logs an error and exits 0 or 1 depending on the version.
    r = sh(["java", "-cp", cp, "org.apache.kafka.tools.consumer.ConsoleConsumer", *args], ok_codes=(0, 1))
    res = {f"{topic}-{p}": {} for p in range(len(CASES))}
    for line in r.stdout.splitlines():
        m = re.match(r"Partition:(\d+)\tOffset:(\d+)\t(.*)$", line)
        if m:
            res.setdefault(f"{topic}-{m.group(1)}", {})[int(m.group(2))] = m.group(3)
    return res


def dump_log(cp, files):
    """DumpLogSegments --deep-iteration of files in one run: ({file: batches [(base, last, count,
    pid, transactional, control, marker)]}, {file: error lines})."""
    text = java(cp, "org.apache.kafka.tools.DumpLogSegments", "--deep-iteration", "--files", ",".join(files))
    batches = {f: [] for f in files}
    errors = {f: [] for f in files}
    cur = None
    for line in text.splitlines():
        m = re.match(r"Dumping (\S+)$", line)
        if m:
            cur = m.group(1)
            batches.setdefault(cur, [])
            errors.setdefault(cur, [])
            continue
        m = re.match(r"baseOffset: (-?\d+) lastOffset: (-?\d+) count: (\d+) .*producerId: (-?\d+) .*"
                     r"isTransactional: (\w+) isControl: (\w+)", line)
        if m and cur is not None:
            batches[cur].append([int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                                 m.group(5) == "true", m.group(6) == "true", None])
            continue
        m = re.search(r"endTxnMarker: (\w+)", line)
        if m and cur is not None and batches[cur]:
            batches[cur][-1][6] = m.group(1)
            continue
        low = line.lower()
        if ("error" in low or "exception" in low or "corrupt" in low or "mismatch" in low
                or "invalid" in low or "not equal" in low):
            errors.setdefault(cur, []).append(line)
    return batches, errors


def per_partition(dirs, batches, errors):
    """The batches and errors of dump_log grouped by partition: {name: (batches, errors)}."""
    res = {}
    for k, d in dirs.items():
        files = [os.path.join(d, s) for s in segments(d)]
        res[k] = ([b for f in files for b in batches.get(f, [])],
                  [e for f in files for e in errors.get(f, [])], len(files))
    return res


def visible(batches):
    """Offsets a read_committed consumer sees in these batches: non-transactional records and
    committed transactions' records, below the first offset of a transaction left open (its
    marker lost: the last stable offset stays there)."""
    res, open_txn = set(), {}
    for base, last, _count, pid, txn, control, marker in sorted(batches):
        if control:
            ranges = open_txn.pop(pid, [])
            if marker == "COMMIT":
                for f, l in ranges:
                    res.update(range(f, l + 1))
        elif txn:
            open_txn.setdefault(pid, []).append((base, last))
        else:
            res.update(range(base, last + 1))
    if open_txn:
        lso = min(r[0][0] for r in open_txn.values())
        res = {o for o in res if o < lso}
    return res


def segments(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".log"))


def damage(case, path, rng):
    """Damages the segment file at path in place; returns a description."""
    data = bytearray(open(path, "rb").read())
    n = len(data)
    if case == "flip":
        # Inside the part of the middle batch its CRC covers (from the attributes at byte 21
        # on): the leader epoch field before it is covered by nothing, so neither Kafka nor
        # salvage could see a flip there.
        start = 0
        while start + 12 <= n:
            size = 12 + int.from_bytes(data[start + 8:start + 12], "big")
            if start + size > n // 2:
                break
            start += size
        pos = max(n // 2, start + 21)
        data[pos] ^= 0x5A
        what = f"byte {pos} flipped"
    elif case == "zeros":
        pos = n // 3
        ln = min(64 << 10, n - pos)
        data[pos:pos + ln] = bytes(ln)
        what = f"{ln} bytes zeroed at {pos}"
    elif case == "truncate":
        pos = n // 2
        del data[pos:]
        what = f"cut at {pos} of {n}"
    elif case == "base-offset":
        pos, starts = 0, []
        while pos + 12 <= n:
            starts.append(pos)
            pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        pos = starts[len(starts) // 2]
        base = int.from_bytes(data[pos:pos + 8], "big")
        data[pos:pos + 8] = (base | 1 << 20).to_bytes(8, "big")
        what = f"base offset of the batch at byte {pos} raised from {base} to {base | 1 << 20}"
    elif case == "marker":
        entries, pos = [], 0
        while pos + 12 <= n:
            size = 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
            entries.append((pos, size))
            pos += size
        # A v2 control batch (attributes bit 5) whose record's key (after one-byte length,
        # attributes, timestamp delta, offset delta and key length) has type 0: abort.
        markers = [(p, z) for p, z in entries if p >= n // 2 and data[p + 16] == 2
                   and data[p + 22] & 0x20 and data[p + 68:p + 70] == b"\0\0"]
        if markers:
            pos, size = markers[0]
            offset = int.from_bytes(data[pos:pos + 8], "big")
            what = f"the abort marker at offset {offset}, byte {pos} ({size} bytes) zeroed"
        else:
            pos, size = entries[len(entries) // 2]
            what = f"the batch at byte {pos} ({size} bytes) zeroed"
        data[pos:pos + size] = bytes(size)
    elif case == "garbage":
        pos = n // 2
        data[pos:pos] = bytes(rng.getrandbits(8) for _ in range(4000))
        what = f"4000 random bytes inserted at {pos}"
    else:
        raise ValueError(case)
    with open(path, "wb") as f:
        f.write(data)
    return f"{os.path.basename(path)}: {what}"


def copy_broker(src, dst):
    """A copy of a stopped broker's directory whose configuration names the copy."""
    shutil.copytree(src, dst, symlinks=True)
    for name in ("server.properties", "log4j2.properties", "log4j.properties"):
        p = os.path.join(dst, name)
        if os.path.exists(p):
            text = open(p).read().replace(src, dst)
            open(p, "w").write(text)
    for name in ("broker.pid", "broker.log", "broker.out"):
        p = os.path.join(dst, name)
        if os.path.exists(p):
            os.remove(p)


def make_unclean(logs, partitions):
    """No clean-shutdown marker and recovery point 0 for partitions: the broker recovers them."""
    for f in os.listdir(logs):
        if "cleanshutdown" in f:
            os.remove(os.path.join(logs, f))
    cp = os.path.join(logs, "recovery-point-offset-checkpoint")
    lines = open(cp).read().splitlines()
    res = lines[:2]
    for line in lines[2:]:
        topic, part, off = line.split()
        if f"{topic}-{part}" in partitions:
            off = "0"
        res.append(f"{topic} {part} {off}")
    open(cp, "w").write("\n".join(res) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--keep", action="store_true", help="leave DIR in place")
    a = ap.parse_args()
    broker = os.path.join(HERE, "broker.sh")
    env = dict(os.environ, KAFKA_CP=a.java_cp)
    root = os.path.abspath(a.dir)
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    bdir = os.path.join(root, "broker")
    rng = random.Random(31)
    running = []
    # "sv-plain-2" -> its damage case.
    parts = {f"{t}-{p}": c for t in TOPICS for p, c in enumerate(CASES)}

    def start(d):
        running.append(d)
        verb = "restart" if os.path.exists(os.path.join(d, "server.properties")) else "start"
        return sh(["bash", broker, verb, d], env=env).stdout.strip().splitlines()[-1]

    def stop(d):
        sh(["bash", broker, "stop", d], env=env)
        running.remove(d)

    def consume_all(bootstrap, counts=None):
        res = {}
        for t in TOPICS:
            res.update(consume(a.java_cp, bootstrap, t, None if counts is None else counts[t]))
        return res

    def base_offset_broker(lone, reports, what):
        """The base-offset partitions' damaged copies given to a broker of their own."""
        d = os.path.join(root, "direct-base-offset")
        copy_broker(bdir, d)
        for k in lone:
            shutil.rmtree(os.path.join(d, "logs", k))
            shutil.copytree(os.path.join(root, "damaged", "logs", k), os.path.join(d, "logs", k))
        make_unclean(os.path.join(d, "logs"), lone)
        try:
            bs = start(d)
            served = consume_all(bs)
            stop(d)
            outcome = {k: f"served {len(served.get(k, {}))} records at read_committed" for k in lone}
            got = {k: len(served.get(k, {})) for k in lone}
        except Exception as e:  # noqa: BLE001 - the broker may refuse the partition
            if d in running:
                subprocess.run(["bash", broker, "stop", d], env=env, capture_output=True, timeout=120)
                running.remove(d)
            log = open(os.path.join(d, "broker.log")).read().splitlines() \
                if os.path.exists(os.path.join(d, "broker.log")) else []
            why = [l for l in log if "InvalidOffset" in l or "offline" in l.lower()
                   or "Attempt to append" in l][:1]
            outcome = {k: f"did not serve it ({type(e).__name__}; {why[0][-200:] if why else 'no log line'})"
                       for k in lone}
            got = {k: 0 for k in lone}
        for k in sorted(lone):
            rep = reports[k]
            out(f"versus-broker/{k}", rep["kept_records"] >= got[k],
                f"{what[k]}: a broker on the damaged copy {outcome[k]}; krec salvage kept "
                f"{rep['kept_records']} records, leaving out the one batch "
                f"({rep['left_out'][0]['first_offset'] if rep['left_out'] else '?'}..)")

    try:
        bootstrap = start(bdir)
        for t in TOPICS:
            java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                 "--create", "--topic", t, "--partitions", str(len(CASES)), "--replication-factor", "1",
                 "--config", f"segment.bytes={SEGMENT_BYTES}")
        # Distinct values (ProducerPerformance picks one of the file's lines for each record).
        payloads = os.path.join(root, "payloads.txt")
        with open(payloads, "w") as f:
            for i in range(2000):
                f.write(f"payload-{i:05d}-" + "x" * (i % 300) + "\n")
        java(a.java_cp, "org.apache.kafka.tools.ProducerPerformance", "--topic", "sv-plain",
             "--num-records", str(PLAIN_RECORDS), "--payload-file", payloads, "--throughput", "-1",
             "--producer-props", f"bootstrap.servers={bootstrap}", "batch.size=16384",
             "linger.ms=5", "compression.type=none")
        java(a.java_cp, "dev.krecords.interop.AbortedTransactions", bootstrap, str(TXN_RECORDS), "sv-txn")
        committed = sum(min(PER_TXN, TXN_RECORDS - s)
                        for n, s in enumerate(range(0, TXN_RECORDS, PER_TXN), 1) if (n // len(CASES)) % 3 != 2)
        counts = {"sv-plain": PLAIN_RECORDS, "sv-txn": committed}
        original = consume_all(bootstrap, counts)
        got = {t: sum(len(v) for k, v in original.items() if k.startswith(t + "-")) for t in TOPICS}
        stop(bdir)
        logs = os.path.join(bdir, "logs")
        nseg = {k: len(segments(os.path.join(logs, k))) for k in parts}
        out("produce", got == counts and min(nseg.values()) >= 2,
            f"sv-plain: {PLAIN_RECORDS} records by ProducerPerformance, sv-txn: {TXN_RECORDS} by the "
            f"transactional producer ({committed} committed), {len(CASES)} partitions each; read back "
            f"at read_committed: {got}; segments per partition {min(nseg.values())}..{max(nseg.values())}")

        # The damaged copy of the whole log dir (every partition damaged by its case).
        damaged_dir = os.path.join(root, "damaged")
        copy_broker(bdir, damaged_dir)
        dlogs = os.path.join(damaged_dir, "logs")
        what = {}
        for k, c in parts.items():
            pdir = os.path.join(dlogs, k)
            segs = segments(pdir)
            # The middle segment, never the last (active) one: the keyless producer may fill a
            # partition with two segments only.
            what[k] = f"{c}: " + damage(c, os.path.join(pdir, segs[min(len(segs) // 2, len(segs) - 2)]), rng)

        # krec salvage of each damaged partition, and the checks on its output alone.
        reports, outdirs, vis = {}, {}, {}
        for k, c in parts.items():
            src = os.path.join(dlogs, k)
            dst = os.path.join(root, "salvaged", k)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            r = sh([a.krec, "salvage", src, "--output", dst, "--format", "json"], ok_codes=(0, 1))
            rep = json.loads(r.stdout.splitlines()[-1])
            reports[k], outdirs[k] = rep, dst
            if c == "base-offset":
                at = int(re.search(r"batch at byte (\d+)", what[k]).group(1))
                ok = (r.returncode == 1 and not rep["damaged"] and len(rep["left_out"]) == 1
                      and rep["left_out"][0]["position"] == at)
            else:
                ok = r.returncode == 1 and rep["lost_anything"] and len(rep["damaged"]) >= 1
            m = re.search(r"abort marker at offset (\d+)", what[k])
            if m:
                ok = ok and [t["aborted_at"] for t in rep["transactions"]] == [int(m.group(1))]
            out(f"salvage/{k}", ok,
                f"{what[k]}: kept {rep['kept_records']} records in {rep['kept_entries']} entries, "
                f"{len(rep['damaged'])} damaged ranges ({sum(d['length'] for d in rep['damaged'])} bytes), "
                f"{len(rep['left_out'])} left out, "
                f"{sum(t['aborted_at'] is not None for t in rep['transactions'])} ABORT markers "
                f"written, exit {r.returncode}")
            v = subprocess.run([a.krec, "verify", dst], capture_output=True, text=True, timeout=300)
            out(f"verify/{k}", v.returncode == 0,
                (v.stdout.strip().splitlines() or [""])[-1] if v.returncode == 0
                else f"exit {v.returncode}: {v.stdout[-600:]} {v.stderr[-300:]}")
            if not os.path.exists(os.path.join(dst, "partition.metadata")):
                shutil.copy(os.path.join(src, "partition.metadata"), dst)
        files = [os.path.join(d, s) for d in outdirs.values() for s in segments(d)]
        dumped = per_partition(outdirs, *dump_log(a.java_cp, files))
        for k, rep in reports.items():
            batches, errors, nfiles = dumped[k]
            records = sum(b[2] for b in batches)
            markers = sum(t["aborted_at"] is not None for t in rep["transactions"])
            out(f"dump-log/{k}", not errors and records == rep["kept_records"] + markers
                and len(batches) == rep["kept_entries"] + markers,
                f"DumpLogSegments --deep-iteration read {nfiles} segments, {len(batches)} batches, "
                f"{records} records (report: {rep['kept_entries']} entries, {rep['kept_records']} "
                f"records, {markers} ABORT markers written)"
                + (f"; errors: {errors[:3]}" if errors else ""))
            vis[k] = visible(batches)

        # (b) a broker on the salvaged partitions, after a clean and after an unclean shutdown.
        for mode in ("clean", "unclean"):
            d = os.path.join(root, f"salvaged-{mode}")
            copy_broker(bdir, d)
            dl = os.path.join(d, "logs")
            for k in parts:
                shutil.rmtree(os.path.join(dl, k))
                shutil.copytree(outdirs[k], os.path.join(dl, k))
            if mode == "unclean":
                make_unclean(dl, set(parts))
            bs = start(d)
            if mode == "unclean":
                # The broker's own recovery went over every salvaged segment and cut nothing.
                log = open(os.path.join(d, "broker.log")).read().splitlines()
                mine = [l for l in log if any(f"partition={k}," in l or f"/{k}/" in l for k in parts)]
                recovered = [l for l in mine if "Recovering unflushed segment" in l]
                cut = [l for l in mine if "Corruption found" in l or "Found invalid" in l
                       or "truncating" in l.lower()]
                nsegs = sum(len(segments(p)) for p in outdirs.values())
                out("broker-unclean/recovery", len(recovered) == nsegs and not cut,
                    f"the broker recovered {len(recovered)} of the {nsegs} salvaged segments after the "
                    f"unclean shutdown and truncated nothing" + (f": {cut[:2]}" if cut else ""))
            expect = {}
            for k in parts:
                kept = [(r["first"], r["last"]) for r in reports[k]["kept_ranges"]]
                expect[k] = {o: v for o, v in original[k].items()
                             if o in vis[k] and any(f <= o <= l for f, l in kept)}
            # Everything the broker serves (until 8 s without a record), not up to a topic's total:
            # one partition serving more than expected must not show as another serving less.
            served = consume_all(bs)
            stop(d)
            for k in parts:
                g, e = served.get(k, {}), expect[k]
                extra = ("" if g == e else
                         f"; missing {sorted(set(e) - set(g))[:5]}, unexpected "
                         f"{sorted(set(g) - set(e))[:5]}, differing "
                         f"{[o for o in g if o in e and g[o] != e[o]][:5]}")
                out(f"broker-{mode}/{k}", g == e and len(g) > 0,
                    f"ConsoleConsumer (read_committed) got {len(g)} records, each the original's value "
                    f"at its offset; expected {len(e)}: the original's {len(original[k])} minus "
                    f"{len(original[k]) - len(e)} in lost ranges or hidden by a lost marker (salvage "
                    f"kept {reports[k]['kept_records']} records"
                    + (", control and aborted ones included)" if k.startswith("sv-txn") else ")") + extra)

        # (c) the same damaged copies given to the broker directly, after an unclean shutdown;
        # the base-offset ones to a broker of their own (the others' stay undamaged there).
        lone = {k for k, c in parts.items() if c == "base-offset"}
        d = os.path.join(root, "direct")
        copy_broker(damaged_dir, d)
        for k in lone:
            shutil.rmtree(os.path.join(d, "logs", k))
            shutil.copytree(os.path.join(bdir, "logs", k), os.path.join(d, "logs", k))
        make_unclean(os.path.join(d, "logs"), set(parts) - lone)
        bs = start(d)
        served = consume_all(bs)
        stop(d)
        base_offset_broker(lone, reports, what)
        pdirs = {k: os.path.join(d, "logs", k) for k in parts if k not in lone}
        dumped = per_partition(pdirs, *dump_log(
            a.java_cp, [os.path.join(p, s) for p in pdirs.values() for s in segments(p)]))
        for k in pdirs:
            broker_kept = sum(b[2] for b in dumped[k][0])
            rep = reports[k]
            predicted = rep["kafka_recovery"]["records"]
            out(f"versus-broker/{k}", rep["kept_records"] >= broker_kept and predicted == broker_kept,
                f"{what[k]}: the broker's own recovery kept {broker_kept} records, krec salvage kept "
                f"{rep['kept_records']} (its report's prediction of Kafka's recovery: {predicted}); "
                f"served at read_committed: broker {len(served.get(k, {}))}, "
                f"from the salvaged partition {len(vis[k] & set(original[k]))}")
    except Exception as e:  # noqa: BLE001 - every failure is a FAIL line
        out("script", False, f"{type(e).__name__}: {e}")
    finally:
        for d in list(running):
            subprocess.run(["bash", broker, "stop", d], env=env, capture_output=True, timeout=120)
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
