#!/usr/bin/env python3
"""interop/py/broker39_check.py: old produce and fetch versions against a Kafka 3.9 broker, and krec.

Runs in interop/.venv (kafka-python). Two phases:

  broker39_check.py run --bootstrap HOST:PORT --out run.json
      With the broker running: creates one topic per (magic, codec) and produces to it with
      kafka-python pinned to an old protocol: api_version=(0, 9) writes magic 0 message sets
      (produce v1), (0, 10, 0) magic 1 (produce v2) -- KafkaProducer.max_usable_produce_magic.
      Then consumes every topic with fetch versions the broker must down-convert for:
      api_version=(0, 10, 0) (fetch v2: magic 1) and (0, 9) (fetch v1: magic 0), and with the
      newest fetch (no conversion). Everything produced and received goes to run.json. The produce
      requests are watched (Sender._produce_request): every message set must carry the intended
      magic and codec, or the phase fails.

  broker39_check.py compare --run run.json --logs DIR --krec KREC --work DIR
      After the broker stopped: for every topic, on DIR/TOPIC-0's segment,
      - stored/TOPIC: `krec dump --deep` of what the broker stored (Kafka 3.x forces message format
        v2, so the v0/v1 produce was up-converted) equals the produced records: offsets 0..n-1,
        keys, values, timestamps (v0 has none: -1, CreateTime), every entry magic 2 and in the
        producer's codec;
      - fetch-v2/TOPIC, fetch-v1/TOPIC (magic 1 / magic 0 down-conversion): `krec convert SEGMENT
        OUT --magic 1|0` then `krec dump --deep OUT` equals the records the old consumer received
        (offset, timestamp, timestamp type, key, value);
      - fetch-latest/TOPIC: the newest consumer received the stored records.

Prints PASS/FAIL/SKIP lines for interop/run.sh.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MAGICS = {0: (0, 9), 1: (0, 10, 0)}
CODECS = ["none", "gzip", "snappy", "lz4"]
T0 = 1_700_000_000_000


def hx(b):
    return None if b is None else b.hex()


def records_for(magic, codec):
    """The produced records: (key, value, timestamp_ms) per batch (a flush between batches)."""
    rnd = bytes((i * 131 + 7) % 256 for i in range(3000))
    b1 = [(b"key", b"value", T0), (None, b"null key", T0 + 1), (b"", b"", T0 + 2),
          (b"null value", None, T0 - 5), (b"\x00\xff\xfe", rnd, T0 + 3),
          ("kéy".encode(), ("välue-%s-%d" % (codec, magic)).encode(), T0 + 4)]
    b2 = [(b"k%d" % i, b"v%d" % i * (i + 1), T0 + 100 + (i * 7) % 5) for i in range(30)]
    b3 = [(b"big", b"abcdefgh" * 8192, T0 + 1000)]
    return [b1, b2, b3]


def topic_name(magic, codec):
    return "v%d-%s" % (magic, codec)


def phase_run(args):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    # What kafka-python puts on the wire: the magic byte (offset 16, legacy and v2 alike) and the
    # codec bits of every message set in its produce requests.
    from kafka.producer.sender import Sender
    sent = {}
    orig = Sender._produce_request

    def spy(self, node_id, acks, timeout, batches):
        for b in batches:
            buf = bytes(b.records.buffer())
            attr = buf[17] if buf[16] < 2 else buf[22]
            sent.setdefault(b.topic_partition.topic, set()).add((buf[16], attr & 0x07))
        return orig(self, node_id, acks, timeout, batches)
    Sender._produce_request = spy
    admin = KafkaAdminClient(bootstrap_servers=args.bootstrap, request_timeout_ms=30000)
    topics = [topic_name(m, c) for m in MAGICS for c in CODECS]
    admin.create_topics([NewTopic(t, 1, 1) for t in topics], timeout_ms=30000)
    admin.close()
    time.sleep(1)
    out = {"topics": {}}
    for magic, api in MAGICS.items():
        assert KafkaProducer.max_usable_produce_magic(api) == magic
        for codec in CODECS:
            t = topic_name(magic, codec)
            prod = KafkaProducer(bootstrap_servers=args.bootstrap, api_version=api,
                                 compression_type=None if codec == "none" else codec,
                                 acks=1, linger_ms=100, batch_size=1 << 20,
                                 max_request_size=4 << 20, request_timeout_ms=30000)
            produced = []
            for batch in records_for(magic, codec):
                for k, v, ts in batch:
                    prod.send(t, key=k, value=v, timestamp_ms=ts, partition=0)
                    produced.append({"key": hx(k), "value": hx(v), "timestamp": ts})
                prod.flush(timeout=30)
            prod.close(timeout=10)
            want = {(magic, CODECS.index(codec) if codec != "lz4" else 3)}
            if sent.get(t) != want:
                raise SystemExit("kafka-python sent (magic, codec id) %s to %s, want %s"
                                 % (sorted(sent.get(t) or []), t, sorted(want)))
            out["topics"][t] = {"magic": magic, "codec": codec, "produced": produced}
    for label, api in (("fetch-v2", (0, 10, 0)), ("fetch-v1", (0, 9)), ("fetch-latest", None)):
        for t, info in out["topics"].items():
            kw = {} if api is None else {"api_version": api}
            cons = KafkaConsumer(bootstrap_servers=args.bootstrap, group_id=None,
                                 enable_auto_commit=False, auto_offset_reset="earliest",
                                 fetch_max_bytes=8 << 20, max_partition_fetch_bytes=8 << 20,
                                 request_timeout_ms=30000, **kw)
            tp = TopicPartition(t, 0)
            cons.assign([tp])
            cons.seek_to_beginning(tp)
            got, deadline = [], time.time() + 30
            while len(got) < len(info["produced"]) and time.time() < deadline:
                for recs in cons.poll(timeout_ms=1000).values():
                    for r in recs:
                        got.append({"offset": r.offset, "timestamp": r.timestamp,
                                    "timestamp_type": r.timestamp_type,
                                    "key": hx(r.key), "value": hx(r.value)})
            cons.close()
            info[label] = got
    Path(args.out).write_text(json.dumps(out, indent=1))
    print("produced %d topics, consumed each with fetch v2, v1 and the newest" % len(out["topics"]),
          file=sys.stderr)


def krec_dump(krec, path):
    p = subprocess.run([krec, "dump", "--deep", "--format", "json", "--bytes", "hex", str(path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("krec dump %s: exit %d: %s" % (path, p.returncode, p.stderr.decode()[-300:]))
    return [json.loads(l) for l in p.stdout.decode("utf-8").splitlines() if l.strip()]


def tstype(e):
    return e.get("timestamp_type")


def diff_records(want, have, fields):
    problems = []
    if len(want) != len(have):
        problems.append("%d records, want %d" % (len(have), len(want)))
    for i, (w, h) in enumerate(zip(want, have)):
        for f in fields:
            if w.get(f) != h.get(f):
                problems.append("record %d %s: krec %r, broker/kafka-python %r"
                                % (i, f, str(h.get(f))[:60], str(w.get(f))[:60]))
                break
        if len(problems) > 3:
            break
    return problems


def emit(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


def flat(entries):
    out = []
    for e in entries:
        for r in e.get("records") or []:
            r = dict(r)
            r["_entry"] = e
            out.append(r)
    return out


def phase_compare(args):
    run = json.loads(Path(args.run).read_text())
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    for t, info in run["topics"].items():
        magic, codec = info["magic"], info["codec"]
        segs = sorted((Path(args.logs) / (t + "-0")).glob("*.log"))
        if len(segs) != 1:
            emit("FAIL", "stored/" + t, "want one segment, found %d" % len(segs))
            continue
        seg = segs[0]
        # What the broker stored: the produced records, up-converted to v2.
        try:
            entries = krec_dump(args.krec, seg)
        except Exception as ex:  # noqa: BLE001
            emit("FAIL", "stored/" + t, str(ex))
            continue
        recs = flat(entries)
        want = [dict(p, offset=i, timestamp=(-1 if magic == 0 else p["timestamp"]))
                for i, p in enumerate(info["produced"])]
        problems = diff_records(want, recs, ("offset", "key", "value", "timestamp"))
        mags = sorted({e.get("magic") for e in entries})
        codecs = sorted({str(e.get("compression", e.get("codec"))) for e in entries})
        types = sorted({str(tstype(e)) for e in entries})
        if mags != [2]:
            problems.append("entry magics %s, want [2] (message format forced to v2)" % mags)
        if codecs != [codec]:
            problems.append("entry codecs %s, want [%s]" % (codecs, codec))
        if types != ["create_time"]:
            problems.append("timestamp types %s, want create_time" % types)
        if problems:
            emit("FAIL", "stored/" + t, "; ".join(problems))
        else:
            emit("PASS", "stored/" + t, "%d records in %d v2 %s batches, as produced with magic %d%s"
                 % (len(recs), len(entries), codec, magic, " (timestamps -1)" if magic == 0 else ""))
        # The newest consumer: no conversion.
        got = info.get("fetch-latest") or []
        p = diff_records([dict(r, key=r["key"], value=r["value"]) for r in got], recs,
                         ("offset", "key", "value", "timestamp"))
        emit("FAIL" if p else "PASS", "fetch-latest/" + t,
             "; ".join(p) if p else "%d records, krec dump = the newest consumer's" % len(got))
        # Down-conversion: the broker's for the old consumers, krec convert's for the segment.
        for label, to in (("fetch-v2", 1), ("fetch-v1", 0)):
            name = "%s/%s" % (label, t)
            out = work / ("%s-%s.log" % (t, label))
            cp = subprocess.run([args.krec, "convert", str(seg), str(out), "--magic", str(to)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            if cp.returncode != 0:
                emit("FAIL", name, "krec convert --magic %d: exit %d: %s"
                     % (to, cp.returncode, cp.stderr.decode()[-300:]))
                continue
            try:
                conv = krec_dump(args.krec, out)
            except Exception as ex:  # noqa: BLE001
                emit("FAIL", name, str(ex))
                continue
            crecs = flat(conv)
            problems = []
            cm = sorted({e.get("magic") for e in conv})
            if cm != [to]:
                problems.append("converted entry magics %s, want [%d]" % (cm, to))
            have = []
            for r in crecs:
                tt = tstype(r["_entry"])
                have.append({"offset": r["offset"], "key": r["key"], "value": r["value"],
                             "timestamp": r.get("timestamp") if to == 1 else -1,
                             "timestamp_type": {"create_time": 0, "log_append_time": 1}.get(tt, -1)
                             if to == 1 else -1})
            got = info.get(label) or []
            # kafka-python reports magic 0 records with timestamp -1 and no timestamp type (-1 here).
            got = [dict(g, timestamp=(-1 if g["timestamp"] is None else g["timestamp"]),
                        timestamp_type=(-1 if g["timestamp_type"] is None else g["timestamp_type"]))
                   for g in got]
            problems += diff_records(got, have, ("offset", "key", "value", "timestamp", "timestamp_type"))
            if not got:
                problems.append("the old consumer received nothing")
            if problems:
                emit("FAIL", name, "; ".join(problems))
            else:
                emit("PASS", name, "%d records: krec convert --magic %d = the broker's down-conversion"
                     " for %s" % (len(got), to, label.replace("fetch-", "fetch ")))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="phase", required=True)
    r = sub.add_parser("run")
    r.add_argument("--bootstrap", required=True)
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--run", required=True)
    c.add_argument("--logs", required=True)
    c.add_argument("--krec", required=True)
    c.add_argument("--work", required=True)
    args = ap.parse_args()
    if args.phase == "run":
        phase_run(args)
    else:
        phase_compare(args)


if __name__ == "__main__":
    main()
