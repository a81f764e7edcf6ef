#!/usr/bin/env python3
"""krecords against kafka-python (the legacy formats' other independent implementation).

    interop/.venv/bin/python interop/py/kafka_python_check.py --krec KREC --work DIR

(a) read: kafka-python's builders write v0/v1 message sets for every codec kafka-python has for
    them (none, gzip, snappy, lz4 with the v0 header-checksum quirk) and v2 batches (also zstd);
    DIR/read/NAME.bin holds the bytes and DIR/read/NAME.expect.json what kafka-python's own reader
    (MemoryRecords -> LegacyRecordBatch / DefaultRecordBatch) reports for them. Then
    `krec dump --deep --format json --bytes hex NAME.bin` must report the same entries and records.
(b) write: `krec build --magic 0|1|2 --compression C` output is decoded by kafka-python, which must
    find every batch (CRC valid, legacy inner CRCs valid) and every record, field by field. For
    lz4 the frame header is checked too: magic 0 must carry Kafka's historical (wrong) header
    checksum, magic 1/2 the correct one (kafka-python's v0 decoder silently repairs the byte, so
    this is checked explicitly).

Prints `PASS name: ...` / `FAIL name: ...` per case; failures caused only by krec reporting a codec
as "not implemented" are labelled `[pending: compression]`. Exit status 0 (the caller counts).
"""
import argparse
import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import xxhash
from kafka.record.default_records import ControlRecord, DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

import kafka
from kafka import codec as kcodec

PENDING = "[pending: compression]"
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}
T0 = 1714000000000

def report(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


def hx(b):
    return None if b is None else bytes(b).hex()


# ------------------------------------------------------------------------------------------ shapes

def shapes(magic):
    """(shape name, list of (timestamp, key, value, headers)) for a magic."""
    rnd = random.Random(42)
    out = [
        ("small", [(T0, b"key", b"value", [])]),
        ("hello_world", [(T0, None, b"hello", []), (T0, None, b"world", [])]),
        ("null_empty", [(T0, None, None, []), (T0 + 1, b"", b"", []), (T0 + 2, None, b"", []), (T0 + 3, b"", None, [])]),
        ("binary", [(T0, bytes(range(256)), bytes(range(255, -1, -1)), [])]),
        ("hundred", [(T0 + i, b"key-%d" % i, (b"value-%d-" % i).ljust(100, b"x"), []) for i in range(100)]),
        ("large_compressible", [(T0, b"big", (b"krecords interop " * 8000)[:131072], [])]),
        ("large_random", [(T0, b"rnd", bytes(rnd.getrandbits(8) for _ in range(100 * 1024)), [])]),
    ]
    if magic >= 1:
        out.append(("ts_unordered", [(T0 + 5000, b"a", b"1", []), (T0, b"b", b"2", []), (T0 + 3000, b"c", b"3", [])]))
    if magic >= 2:
        out.append(("headers", [
            (T0, b"k0", b"with headers", [("trace", b"a"), ("trace", b"b"), ("null-value", None), ("empty-value", b""),
                                          ("", b"empty key"), ("cl\u00e9-\u00fc-\u20ac", b"\x00\xff\x7f\x80")]),
            (T0 + 1, None, None, [("trace", None)]),
            (T0 + 2, b"k2", b"no headers", []),
        ]))
    return out


# ------------------------------------------------------------------------------------------ (a) read

def _always_compress(self):
    """kafka-python's v2 builder sends a batch uncompressed when compressing does not shrink it;
    here it always compresses (with kafka-python's own codec functions), so that every v2 case
    named after a codec really uses it."""
    if self._compression_type == self.CODEC_NONE:
        return False
    encode = {self.CODEC_GZIP: kcodec.gzip_encode, self.CODEC_SNAPPY: kcodec.snappy_encode,
              self.CODEC_LZ4: kcodec.lz4_encode, self.CODEC_ZSTD: kcodec.zstd_encode}[self._compression_type]
    header_size = self.HEADER_STRUCT.size
    compressed = encode(bytes(self._buffer[header_size:]))
    del self._buffer[header_size:]
    self._buffer.extend(compressed)
    return True


DefaultRecordBatchBuilder._maybe_compress = _always_compress


def kp_build(magic, codec, records, base_offset=0, producer=None, batch_size=1 << 30):
    """kafka-python's MemoryRecordsBuilder over the records: one entry (batch or wrapper), or for
    uncompressed v0/v1 one entry per message. Returns the bytes."""
    kw = {}
    if producer:
        kw = dict(producer_id=producer[0], producer_epoch=producer[1], base_sequence=producer[2],
                  transactional=producer[3])
    b = MemoryRecordsBuilder(magic, CODEC_IDS[codec], batch_size, offset=base_offset, **kw)
    for ts, k, v, h in records:
        if b.append(ts, k, v, h if magic >= 2 else None) is None:
            raise RuntimeError("kafka-python builder refused a record")
    b.close()
    return bytes(b.buffer())


def kp_read(buf):
    """kafka-python's reading of a buffer: entries with their records."""
    entries = []
    pos = 0
    mr = MemoryRecords(bytes(buf))
    while mr.has_next():
        batch = mr.next_batch()
        e = {"position": pos, "size_bytes": batch.size_in_bytes}
        raw = bytes(buf[pos:pos + batch.size_in_bytes])
        pos += batch.size_in_bytes
        if isinstance(batch, DefaultRecordBatch):
            e.update(magic=2, base_offset=batch.base_offset, last_offset=batch.last_offset,
                     count=batch.records_count, crc=batch.crc, crc_valid=batch.validate_crc(),
                     compression=CODEC_NAMES[batch.compression_type],
                     timestamp_type=["create_time", "log_append_time"][batch.timestamp_type],
                     base_timestamp=batch.first_timestamp, max_timestamp=batch.max_timestamp,
                     partition_leader_epoch=batch.leader_epoch, producer_id=batch.producer_id,
                     producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                     transactional=batch.is_transactional, control=batch.is_control_batch)
            recs = []
            for r in batch:
                rec = {"offset": r.offset, "timestamp": r.timestamp, "key": hx(r.key), "value": hx(r.value),
                       "headers": [{"key": k, "value": hx(v)} for k, v in r.headers]}
                if isinstance(r, ControlRecord):
                    rec["control"] = {"type": {0: "abort", 1: "commit"}.get(r.type, r.type), "version": r.version}
                recs.append(rec)
        else:
            assert isinstance(batch, LegacyRecordBatch)
            magic = batch.magic
            wrapper_offset, _, crc = struct.unpack_from(">qiI", raw, 0)
            ts = None if magic == 0 else struct.unpack_from(">q", raw, 18)[0]
            e.update(magic=magic, wrapper_offset=wrapper_offset, crc=crc, crc_valid=batch.validate_crc(),
                     compression=CODEC_NAMES[batch.compression_type],
                     timestamp_type="none" if magic == 0 else ["create_time", "log_append_time"][batch.timestamp_type],
                     base_timestamp=ts, max_timestamp=ts, partition_leader_epoch=-1, producer_id=-1,
                     producer_epoch=-1, base_sequence=-1, transactional=False, control=False)
            recs = []
            for r in batch:
                if not r.validate_crc():
                    raise RuntimeError("kafka-python: inner message at offset %d has a bad CRC" % r.offset)
                recs.append({"offset": r.offset, "timestamp": r.timestamp if magic >= 1 else None,
                             "key": hx(r.key), "value": hx(r.value), "headers": []})
            e["count"] = len(recs)
            e["base_offset"] = recs[0]["offset"] if recs else wrapper_offset
            e["last_offset"] = wrapper_offset
        e["records"] = recs
        entries.append(e)
    if pos != len(buf):
        raise RuntimeError("kafka-python left %d bytes unread" % (len(buf) - pos))
    return entries


def read_cases():
    """(name, bytes) cases written by kafka-python."""
    cases = []
    for magic in (0, 1, 2):
        codecs = ["none", "gzip", "snappy", "lz4"] + (["zstd"] if magic == 2 else [])
        for codec in codecs:
            for shape, recs in shapes(magic):
                if magic < 2 and codec == "none" and shape == "large_random":
                    continue
                cases.append(("v%d_%s_%s" % (magic, codec, shape), kp_build(magic, codec, recs)))
            # Producer-side offsets (what a producer sends) and broker-side ones (what a consumer
            # fetches): the broker stamps the v2 base offset and, for v1 wrappers, the wrapper's
            # offset (absolute offset of the last inner message; inner offsets stay relative).
            recs = [(T0 + i, b"k%d" % i, b"v%d" % i, []) for i in range(5)]
            if magic == 2:
                parts = []
                for n, first in ((5, 1000), (3, 1005), (4, 1008)):
                    b = bytearray(kp_build(2, codec, recs[:n]))
                    struct.pack_into(">q", b, 0, first)
                    parts.append(bytes(b))
                cases.append(("v2_%s_broker_offsets" % codec, b"".join(parts)))
                cases.append(("v2_%s_idempotent_wrap" % codec,
                              kp_build(2, codec, recs * 4, producer=(1234567, 5, 2147483640, False))))
                cases.append(("v2_%s_transactional" % codec,
                              kp_build(2, codec, recs[:3], producer=(1234567, 5, 0, True))))
            elif codec != "none":
                cases.append(("v%d_%s_producer_base_offset" % (magic, codec), kp_build(magic, codec, recs, base_offset=7)))
                if magic == 1:
                    b = bytearray(kp_build(1, codec, recs))
                    struct.pack_into(">q", b, 0, 1000 + len(recs) - 1)  # the wrapper offset is outside the CRC
                    cases.append(("v1_%s_broker_wrapper_offset" % codec, bytes(b)))
            else:
                cases.append(("v%d_none_base_offset" % magic, kp_build(magic, codec, recs, base_offset=1000000)))
    return cases


ENTRY_FIELDS = ["magic", "base_offset", "last_offset", "count", "size_bytes", "crc", "crc_valid", "compression",
                "timestamp_type", "base_timestamp", "max_timestamp", "partition_leader_epoch", "producer_id",
                "producer_epoch", "base_sequence", "transactional", "control"]


def compare_entries(expect, got):
    """Differences between kafka-python's reading (expect) and krec dump JSON (got)."""
    p = []
    if len(expect) != len(got):
        p.append("%d entries, krec printed %d" % (len(expect), len(got)))
    for i, (e, g) in enumerate(zip(expect, got)):
        if "error" in g:
            # A codec krec does not have yet: the only acceptable kind of failure while compression
            # has not landed (the caller labels the case pending when every problem is of this kind).
            tag = PENDING if e["compression"] != "none" and "not implemented" in g["error"] else ""
            p.append("entry %d: krec error: %s%s" % (i, g["error"], tag and " " + tag))
            continue
        if g.get("partial"):
            p.append("entry %d: krec says partial" % i)
            continue
        for f in ["position"] + ENTRY_FIELDS:
            if e.get(f) != g.get(f):
                p.append("entry %d %s: kafka-python %r, krec %r" % (i, f, e.get(f), g.get(f)))
        er, gr = e["records"], g.get("records") or []
        if len(er) != len(gr):
            p.append("entry %d: %d records, krec %d" % (i, len(er), len(gr)))
        for j, (a, b) in enumerate(zip(er, gr)):
            for f in ("offset", "timestamp", "key", "value", "headers"):
                if a.get(f) != b.get(f):
                    p.append("entry %d record %d %s: kafka-python %s, krec %s"
                             % (i, j, f, short(a.get(f)), short(b.get(f))))
            if "control" in a:
                bc = b.get("control") or {}
                for f in ("type", "version"):
                    if a["control"][f] != bc.get(f):
                        p.append("entry %d record %d control.%s: kafka-python %r, krec %r" % (i, j, f, a["control"][f], bc.get(f)))
    return p


def short(v):
    s = json.dumps(v)
    return s if len(s) <= 80 else s[:60] + "...(%d chars)" % len(s)


def krec_dump(krec, path):
    p = subprocess.run([krec, "dump", "--deep", "--format", "json", "--bytes", "hex", str(path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    lines = [json.loads(l) for l in p.stdout.decode("utf-8").splitlines() if l.strip()]
    return p.returncode, lines, p.stderr.decode("utf-8", "replace").strip()


def pending_label(codec, texts):
    return " " + PENDING if codec != "none" and any("not implemented" in t for t in texts) else ""


def step_read(krec, work):
    d = work / "read"
    d.mkdir(parents=True, exist_ok=True)
    for name, buf in read_cases():
        label = "read/" + name
        codec = name.split("_")[1]
        try:
            expect = kp_read(buf)
        except Exception as ex:  # a broken case is a failure of this script, not of krec
            report("FAIL", label, "kafka-python cannot read its own bytes: %r" % ex)
            continue
        (d / (name + ".bin")).write_bytes(buf)
        (d / (name + ".expect.json")).write_text(json.dumps(expect, indent=1, ensure_ascii=False), encoding="utf-8")
        try:
            rc, got, err = krec_dump(krec, d / (name + ".bin"))
        except Exception as ex:
            report("FAIL", label, "krec dump failed: %r" % ex)
            continue
        problems = compare_entries(expect, got)
        if problems:
            pending = all(PENDING in q for q in problems)
            if rc != 0:
                problems.insert(0, "krec dump exited %d%s" % (rc, (": " + err[:200]) if err else ""))
            report("FAIL", label + (" " + PENDING if pending else ""),
                   "; ".join(q.replace(" " + PENDING, "") for q in problems[:6])
                   + (" (+%d more)" % (len(problems) - 6) if len(problems) > 6 else ""))
        elif rc != 0:
            report("FAIL", label, "krec dump exited %d although every entry matched: %s" % (rc, err[:200]))
        else:
            nrec = sum(len(e["records"]) for e in expect)
            codecs = sorted({e["compression"] for e in expect})
            report("PASS", label, "%d entries, %d records, codec %s as kafka-python reads them"
                   % (len(expect), nrec, "/".join(codecs)))


# ------------------------------------------------------------------------------------------ (b) write

def write_records(magic):
    """A mixed record set for krec build (timestamps, keys/values null/empty/binary/large, headers)."""
    recs = [
        (T0, None, b"hello", []),
        (T0, None, b"world", []),
        (T0 + 7, b"", b"", []),
        (T0 + 3, None, None, []),
        (T0 + 9, b"\x00\xff", b"\x80binary\x00", []),
        (T0 + 1, "cl\u00e9".encode(), "\u20ac value".encode(), []),
        (T0 + 20, b"big", (b"compressible " * 7000)[:90000], []),
        (T0 + 21, b"k7", b"after big", []),
    ]
    recs += [(T0 + 30 + i, b"key-%d" % i, (b"v%d-" % i) * 10, []) for i in range(12)]
    if magic >= 1:
        recs.append((-1, b"nots", b"timestamp -1", []))
    if magic >= 2:
        recs[0] = (T0, None, b"hello", [("trace", b"a"), ("trace", b"b"), ("null", None), ("", b"empty key"),
                                        ("cl\u00e9-\u20ac", b"\x00\xff")])
        recs[3] = (T0 + 3, None, None, [("only-null", None)])
    return recs


def to_jsonl(recs):
    out = []
    for ts, k, v, h in recs:
        out.append(json.dumps({"timestamp": ts, "key": hx(k), "value": hx(v),
                               "headers": [{"key": hk, "value": hx(hv)} for hk, hv in h]}, ensure_ascii=False))
    return "".join(l + "\n" for l in out).encode("utf-8")


def lz4_frames(buf):
    """(magic, lz4 frame bytes) for every lz4-compressed entry in buf (v0/v1 wrappers, v2 batches)."""
    out = []
    pos = 0
    while pos + 17 <= len(buf):
        size = struct.unpack_from(">i", buf, pos + 8)[0]
        entry = buf[pos:pos + 12 + size]
        magic = entry[16]
        if magic < 2:
            if entry[17] & 7 == 3:
                kpos = 18 if magic == 0 else 26
                klen = struct.unpack_from(">i", entry, kpos)[0]
                vpos = kpos + 4 + max(klen, 0)
                vlen = struct.unpack_from(">i", entry, vpos)[0]
                out.append((magic, entry[vpos + 4:vpos + 4 + vlen]))
        elif struct.unpack_from(">h", entry, 21)[0] & 7 == 3:
            out.append((magic, entry[61:]))
        pos += 12 + size
    return out


def check_lz4_header(magic, frame):
    """Kafka's LZ4 frame header: the header checksum of magic 0 is the historical one, xxh32 over
    the magic number and the descriptor (bytes 0..5) instead of the descriptor alone (bytes 4..5)."""
    if frame[:4] != b"\x04\x22\x4d\x18":
        return "lz4 frame magic %s" % frame[:4].hex()
    flg = frame[4]
    hlen = 7 + (8 if flg & 0x08 else 0)
    right = xxhash.xxh32(frame[4:hlen - 1]).digest()[-2]
    wrong = xxhash.xxh32(frame[0:hlen - 1]).digest()[-2]
    hc = frame[hlen - 1]
    want = wrong if magic == 0 else right
    if hc != want:
        return ("magic %d lz4 header checksum 0x%02x, want 0x%02x (%s; the %s one would be 0x%02x)"
                % (magic, hc, want, "Kafka's historical v0 checksum" if magic == 0 else "the correct checksum",
                   "correct" if magic == 0 else "historical v0", right if magic == 0 else wrong))
    return None


def expected_records(magic, recs, base_offset, ts_type, log_append_time):
    out = []
    for i, (ts, k, v, h) in enumerate(recs):
        if magic == 0:
            t = None
        elif ts_type == "log_append_time":
            t = log_append_time
        else:
            t = ts
        out.append({"offset": base_offset + i, "timestamp": t, "key": hx(k), "value": hx(v),
                    "headers": [{"key": hk, "value": hx(hv)} for hk, hv in h]})
    return out


def write_cases():
    """(name, magic, codec, krec extra args, records, options) for krec build."""
    cases = []
    for magic in (0, 1, 2):
        codecs = ["none", "gzip", "snappy", "lz4"] + (["zstd"] if magic == 2 else [])
        recs = write_records(magic)
        for codec in codecs:
            cases.append(("v%d_%s_one_entry" % (magic, codec), magic, codec, [], recs, {}))
            cases.append(("v%d_%s_per_batch_6" % (magic, codec), magic, codec, ["--records-per-batch", "6"], recs, {}))
        if magic >= 1:
            for codec in ("none", "gzip", "lz4"):
                cases.append(("v%d_%s_log_append_time" % (magic, codec), magic, codec,
                              ["--timestamp-type", "log_append_time", "--log-append-time", str(T0 + 600000),
                               "--base-offset", "500"], recs[:8],
                              {"ts_type": "log_append_time", "lat": T0 + 600000, "base": 500}))
    recs2 = write_records(2)
    for codec in ("none", "zstd", "snappy"):
        cases.append(("v2_%s_transactional_seq_wrap" % codec, 2, codec,
                      ["--producer-id", "987654321", "--producer-epoch", "7", "--base-sequence", "2147483645",
                       "--transactional", "--partition-leader-epoch", "11", "--records-per-batch", "4",
                       "--base-offset", "3000"],
                      recs2, {"producer": (987654321, 7, 2147483645, True), "ple": 11, "base": 3000, "per": 4}))
    # lz4 takes its default level (9) only: Kafka's other lz4 levels are LZ4 HC, which krecords
    # does not have, so krec refuses them (step_write checks the refusal).
    for codec, level in (("gzip", 1), ("gzip", 9), ("lz4", 9), ("zstd", -5), ("zstd", 19)):
        cases.append(("v2_%s_level%d" % (codec, level), 2, "%s:%d" % (codec, level), [], recs2, {}))
    cases.append(("v1_lz4_level9", 1, "lz4:9", [], write_records(1), {}))
    cases.append(("v0_lz4_level9", 0, "lz4:9", [], write_records(0), {}))
    return cases


def step_write(krec, work):
    d = work / "write"
    d.mkdir(parents=True, exist_ok=True)
    for level in ("lz4:1", "lz4:17"):
        p = subprocess.run([krec, "build", "--compression", level], input=b"",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        refused = p.returncode == 2 and b"LZ4 HC" in p.stderr
        report("PASS" if refused else "FAIL", "write/refuses_" + level.replace(":", "_level"),
               "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()[:200]))
    for name, magic, codec_arg, extra, recs, opt in write_cases():
        label = "write/" + name
        codec = codec_arg.split(":")[0]
        out = d / (name + ".bin")
        args = [krec, "build", "--magic", str(magic), "--compression", codec_arg, "--bytes", "hex", "--output", str(out)] + extra
        p = subprocess.run(args, input=to_jsonl(recs), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace").strip().replace("\n", " | ")[:300]
            report("FAIL", label + pending_label(codec, [err]), "krec build exited %d: %s" % (p.returncode, err))
            continue
        buf = out.read_bytes()
        problems = []
        try:
            got = kp_read(buf)
        except Exception as ex:
            report("FAIL", label, "kafka-python cannot read krec's output: %r (%s)" % (ex, out))
            continue
        base = opt.get("base", 0)
        want = expected_records(magic, recs, base, opt.get("ts_type", "create_time"), opt.get("lat"))
        have = [r for e in got for r in e["records"]]
        if len(have) != len(want):
            problems.append("kafka-python found %d records, %d went in" % (len(have), len(want)))
        for i, (a, b) in enumerate(zip(want, have)):
            for f in ("offset", "timestamp", "key", "value", "headers"):
                if a[f] != b[f]:
                    problems.append("record %d %s: input %s, kafka-python %s" % (i, f, short(a[f]), short(b[f])))
        per = opt.get("per") or (6 if "--records-per-batch" in extra else None)
        if magic == 2 or codec != "none":
            n_entries = -(-len(recs) // per) if per else 1
            if len(got) != n_entries:
                problems.append("%d entries, expected %d" % (len(got), n_entries))
        elif len(got) != len(recs):
            problems.append("%d entries, expected one per message (%d)" % (len(got), len(recs)))
        seq = None
        for i, e in enumerate(got):
            if not e["crc_valid"]:
                problems.append("entry %d: CRC invalid for kafka-python" % i)
            if e["magic"] != magic:
                problems.append("entry %d: magic %d" % (i, e["magic"]))
            if e["compression"] != codec:
                problems.append("entry %d: codec %s, asked for %s" % (i, e["compression"], codec))
            want_ts = "none" if magic == 0 else opt.get("ts_type", "create_time")
            if e["timestamp_type"] != want_ts:
                problems.append("entry %d: timestamp type %s, want %s" % (i, e["timestamp_type"], want_ts))
            if magic == 2:
                pid, pep, bseq, txn = opt.get("producer", (-1, -1, -1, False))
                if (e["producer_id"], e["producer_epoch"], e["transactional"]) != (pid, pep, txn):
                    problems.append("entry %d: producer %r, want %r" % (i, (e["producer_id"], e["producer_epoch"], e["transactional"]), (pid, pep, txn)))
                if e["partition_leader_epoch"] != opt.get("ple", -1):
                    problems.append("entry %d: partition leader epoch %d" % (i, e["partition_leader_epoch"]))
                if bseq >= 0:
                    exp_seq = bseq if seq is None else seq
                    if e["base_sequence"] != exp_seq:
                        problems.append("entry %d: base sequence %d, want %d" % (i, e["base_sequence"], exp_seq))
                    seq = (exp_seq + e["count"]) % (1 << 31)
                elif e["base_sequence"] != -1:
                    problems.append("entry %d: base sequence %d, want -1" % (i, e["base_sequence"]))
                if opt.get("ts_type") == "log_append_time" and e["max_timestamp"] != opt.get("lat"):
                    problems.append("entry %d: max timestamp %r, want the log append time" % (i, e["max_timestamp"]))
        if codec == "lz4":
            frames = lz4_frames(buf)
            if not frames:
                problems.append("no lz4-compressed entry found")
            for fm, frame in frames:
                msg = check_lz4_header(fm, frame)
                if msg:
                    problems.append(msg)
                    break
        if problems:
            report("FAIL", label, "; ".join(problems[:6]) + (" (+%d more)" % (len(problems) - 6) if len(problems) > 6 else "")
                   + " [%s]" % out)
        else:
            extra_note = ""
            if codec == "lz4":
                extra_note = ", lz4 header checksum %s" % ("Kafka's v0 one" if magic == 0 else "correct")
            report("PASS", label, "kafka-python reads %d entries, %d records, all fields as built%s"
                   % (len(got), len(have), extra_note))


def step_control(krec, work):
    d = work / "write"
    for kind in ("commit", "abort"):
        label = "write/v2_control_" + kind
        out = d / ("control_%s.bin" % kind)
        args = [krec, "build", "--control", kind, "--producer-id", "4242", "--producer-epoch", "3",
                "--coordinator-epoch", "17", "--timestamp", str(T0 + 99), "--base-offset", "77",
                "--partition-leader-epoch", "5", "--output", str(out)]
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0:
            report("FAIL", label, "krec build exited %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[:300]))
            continue
        try:
            got = kp_read(out.read_bytes())
        except Exception as ex:
            report("FAIL", label, "kafka-python cannot read it: %r" % ex)
            continue
        problems = []
        if len(got) != 1 or len(got[0]["records"]) != 1:
            problems.append("want one batch with one record, got %r" % [len(e["records"]) for e in got])
        else:
            e, r = got[0], got[0]["records"][0]
            for f, want in (("control", True), ("transactional", True), ("producer_id", 4242), ("producer_epoch", 3),
                            ("base_sequence", -1), ("partition_leader_epoch", 5), ("base_offset", 77), ("crc_valid", True)):
                if e[f] != want:
                    problems.append("%s: %r, want %r" % (f, e[f], want))
            if r.get("control") != {"type": kind, "version": 0}:
                problems.append("control record %r" % r.get("control"))
            if r["timestamp"] != T0 + 99 or r["offset"] != 77:
                problems.append("record offset/timestamp %r/%r" % (r["offset"], r["timestamp"]))
            # value: version 0 (int16) + coordinator epoch (int32)
            if r["value"] != struct.pack(">hi", 0, 17).hex():
                problems.append("marker value %s, want %s" % (r["value"], struct.pack(">hi", 0, 17).hex()))
        if problems:
            report("FAIL", label, "; ".join(problems))
        else:
            report("PASS", label, "kafka-python reads a %s ControlRecord (coordinator epoch 17) in a control batch" % kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    print("# kafka-python %s" % kafka.__version__, flush=True)
    step_read(a.krec, work)
    step_write(a.krec, work)
    step_control(a.krec, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
