#!/usr/bin/env python3
"""krec dump against Kafka's DumpLogSegments on a real broker's partition directories.

    compare_dump.py --krec KREC --java-cp CP --logs LOG_DIR [--scenario scenario.json] PARTITION...

For every PARTITION (a directory name under LOG_DIR, e.g. interop-lz4-0) and every .log segment in
it, runs Kafka's DumpLogSegments (org.apache.kafka.tools.DumpLogSegments, kafka-tools;
`--deep-iteration --print-data-log`, one JVM for all files) and `krec dump --format json --bytes
hex` (without and with --deep), parses DumpLogSegments' text and compares field by field:

  batch lines    baseOffset lastOffset count baseSequence lastSequence producerId producerEpoch
                 partitionLeaderEpoch isTransactional isControl deleteHorizonMs position
                 <timestamp type>: maxTimestamp size magic compresscodec crc isvalid
                 (v0/v1: offset position <timestamp type> size magic compresscodec crc isvalid)
  record lines   offset <timestamp type>: timestamp keySize valueSize sequence headerKeys, control
                 markers (endTxnMarker, coordinatorEpoch, KRaft control records), and the printed
                 key and payload (DumpLogSegments decodes them as UTF-8 with replacement)

Also the text: `krec dump --print-data SEGMENT` must print exactly DumpLogSegments' lines
(docs/design.md: the text output follows kafka-dump-log's line format; Kafka 4.4.0 here). For the
internal topics (__consumer_offsets, __transaction_state, __cluster_metadata segments and
.checkpoint snapshots, __share_group_state, __remote_log_metadata) that with --decode none, and krec's default (the
decoder from the directory name) against DumpLogSegments with the topic's decoder flag
(--offsets-decoder, ...), line for line, and JSON key_decoded/value_decoded field by field.

With --scenario (BrokerScenario's output), also per topic: Kafka's read_uncommitted consumer must
have received exactly krec's non-control records (offset, timestamp, timestamp type, key, value,
headers); and the scenario itself is checked (Kafka's read_committed consumer received the
non-transactional and committed records, read_uncommitted all of them). Then krec's log engine on
a copy of the partition directory (opening a broker's directory rebuilds indexes and writes
snapshots): `krec log read --isolation read-committed|read-uncommitted --bytes hex` must print
what the read_committed / read_uncommitted consumer received (offset, timestamp, key, value,
headers), and `krec log offsets` must answer a sample of the broker's ListOffsets answers
(earliest, latest, max timestamp, a dozen timestamps) with the same offset and timestamp. A krec
without `log read --isolation` gets TODO lines instead.

Prints PASS/FAIL/TODO lines (FAIL ... [pending: compression] when krec only lacks a codec).
Standard library only; exit status 0 (the caller counts).
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

PENDING = "[pending: compression]"
TS_NAMES = {"create_time": "CreateTime", "log_append_time": "LogAppendTime", "none": "NoTimestampType"}
CONTROL_NAMES = {"COMMIT": "commit", "ABORT": "abort"}
KRAFT_CONTROL = {"LeaderChange:": "leader_change", "SnapshotHeader": "snapshot_header",
                 "SnapshotFooter": "snapshot_footer", "KRaftVersion": "kraft_version", "KRaftVoters": "kraft_voters"}


def report(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


# ------------------------------------------------------------------------------ DumpLogSegments

V2_BATCH = re.compile(
    r"baseOffset: (?P<baseOffset>-?\d+) lastOffset: (?P<lastOffset>-?\d+) count: (?P<count>\S+)"
    r" baseSequence: (?P<baseSequence>-?\d+) lastSequence: (?P<lastSequence>-?\d+)"
    r" producerId: (?P<producerId>-?\d+) producerEpoch: (?P<producerEpoch>-?\d+)"
    r" partitionLeaderEpoch: (?P<partitionLeaderEpoch>-?\d+) isTransactional: (?P<isTransactional>true|false)"
    r" isControl: (?P<isControl>true|false) deleteHorizonMs: (?P<deleteHorizonMs>OptionalLong\.empty|OptionalLong\[-?\d+\])"
    r"(?P<rest> position: .*)$")
LEGACY_BATCH = re.compile(r"offset: (?P<lastOffset>-?\d+)(?P<rest> position: .*)$")
BATCH_REST = re.compile(
    r" position: (?P<position>\d+) (?P<tsType>CreateTime|LogAppendTime|NoTimestampType): (?P<maxTimestamp>-?\d+)"
    r" size: (?P<size>\d+) magic: (?P<magic>\d+) compresscodec: (?P<codec>\S+) crc: (?P<crc>\d+)"
    r" isvalid: (?P<isvalid>true|false)$")
RECORD = re.compile(
    r"\| offset: (?P<offset>-?\d+) (?P<tsType>CreateTime|LogAppendTime|NoTimestampType): (?P<timestamp>-?\d+)"
    r" keySize: (?P<keySize>-?\d+) valueSize: (?P<valueSize>-?\d+)(?P<rest>.*)$", re.S)


def run_dump_log_segments(java_cp, files, log):
    cmd = ["java", "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dstdout.encoding=UTF-8",
           "-cp", java_cp, "org.apache.kafka.tools.DumpLogSegments", "--deep-iteration", "--print-data-log",
           "--files", ",".join(str(f) for f in files)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    Path(log).write_bytes(p.stdout + b"\n--- stderr ---\n" + p.stderr)
    if p.returncode != 0:
        raise RuntimeError("DumpLogSegments exited %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-800:]))
    return p.stdout.decode("utf-8", "replace")


def parse_dump_log_segments(text):
    """{file: {"batches": [batch], "trailing": N}}; batch = dict of its fields plus "records": [line]."""
    # Only "\n" ends a line (payloads may hold other line separators); a line that does not start
    # like one of the tool's own lines continues the previous one (a key or payload with a line feed).
    lines = []
    if text.endswith("\n"):
        text = text[:-1]  # the last println
    for raw in text.split("\n"):
        starts = ("Dumping ", "Log starting offset: ", "baseOffset: ", "offset: ", "| offset: ", "Found ")
        if lines and not raw.startswith(starts):
            lines[-1] += "\n" + raw
        else:
            lines.append(raw)
    files = {}
    cur = None
    for line in lines:
        if line.startswith("Dumping "):
            cur = {"batches": [], "trailing": 0, "unparsed": []}
            files[line[len("Dumping "):]] = cur
        elif cur is None or line == "" or line.startswith("Log starting offset: "):
            continue
        elif line.startswith("| offset: "):
            if not cur["batches"]:
                cur["unparsed"].append(line)
            else:
                cur["batches"][-1]["records"].append(line)
        elif line.startswith("baseOffset: ") or line.startswith("offset: "):
            m = V2_BATCH.match(line) or LEGACY_BATCH.match(line)
            r = BATCH_REST.match(m.group("rest")) if m else None
            if not m or not r:
                cur["unparsed"].append(line)
                continue
            b = {k: v for k, v in m.groupdict().items() if k != "rest"}
            b.update(r.groupdict())
            b["records"] = []
            cur["batches"].append(b)
        elif line.startswith("Found ") and "invalid bytes at the end of" in line:
            cur["trailing"] = int(line.split()[1])
        else:
            cur["unparsed"].append(line)
    return files


# ------------------------------------------------------------------------------ krec

def krec_dump(krec, path, deep):
    cmd = [krec, "dump", "--format", "json", "--bytes", "hex"] + (["--deep"] if deep else []) + [str(path)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    entries = [json.loads(l) for l in p.stdout.decode("utf-8").split("\n") if l.strip()]
    return p.returncode, entries, p.stderr.decode("utf-8", "replace").strip()


def split_sections(text):
    """DumpLogSegments' output cut per file: {path: the text from its "Dumping path" line on}."""
    sections, cur = {}, None
    for line in text.split("\n"):
        if line.startswith("Dumping "):
            cur = line[len("Dumping "):]
            sections[cur] = []
        if cur is not None:
            sections[cur].append(line)
    return {k: "\n".join(v).rstrip("\n") + "\n" for k, v in sections.items()}


def compare_text(krec, name, files, sections, extra=()):
    """`krec dump --print-data FILE` must print what DumpLogSegments --deep-iteration --print-data-log
    prints for the same file, line for line (docs/design.md: the text output follows
    kafka-dump-log's). `extra`: more krec arguments (--decode none for an internal topic, whose
    records krec decodes by default)."""
    problems, lines = [], 0
    for f in files:
        p = subprocess.run([krec, "dump", "--print-data"] + list(extra) + [str(f)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        ours = p.stdout.decode("utf-8", "replace").rstrip("\n") + "\n"
        theirs = sections.get(str(f), "")
        a, b = theirs.split("\n"), ours.split("\n")
        lines += len(a) - 1
        diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y]
        if len(a) != len(b):
            problems.append("%s: Kafka %d lines, krec %d" % (Path(f).name, len(a) - 1, len(b) - 1))
        if diff:
            i, x, y = diff[0]
            problems.append("%s: %d of %d lines differ; first at line %d: Kafka %r, krec %r"
                            % (Path(f).name, len(diff), len(a) - 1, i + 1, x[:160], y[:160]))
            kinds = sorted({k for _, x, y in diff for k in classify_text_diff(x, y)})
            problems.append("differences: " + ", ".join(kinds))
    if problems:
        report("FAIL", "dump-text/" + name, "; ".join(problems))
    else:
        report("PASS", "dump-text/" + name, "krec dump --print-data prints DumpLogSegments' %d lines exactly" % lines)


# kafka-dump-log's decoder flag for each internal topic krec decodes by default.
DECODERS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
    "__share_group_state": "--share-group-state-decoder",
    "__remote_log_metadata": "--remote-log-metadata-decoder",
}
RECORD_LINE = re.compile(r"^\| offset: (\d+) ")


def split_key_payload(line):
    """The text after ` key: ` and ` payload: ` of a decoded record line (None when absent)."""
    key = payload = None
    m = re.search(r" headerKeys: \[[^\]]*\]( key: (.*?))?( payload: (.*))?$", line)
    if m:
        key, payload = m.group(2), m.group(4)
    return key, payload


def json_or_error(text):
    """Kafka's printed key/payload as krec's key_decoded/value_decoded shows it."""
    if text is None:
        return "absent"
    if text == "<DELETE>":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return {"error": text}


def compare_decoded(a, name, files, work):
    """An internal topic's segments (and __cluster_metadata's .checkpoint snapshots): `krec dump
    --print-data` (the decoder picked from the directory name) must print what DumpLogSegments
    prints with the topic's decoder flag, line for line; and `krec dump --deep --format json`'s
    key_decoded/value_decoded must equal Kafka's printed key/payload JSON, field by field."""
    topic = name.rsplit("-", 1)[0]
    flag = DECODERS[topic]
    cmd = ["java", "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dstdout.encoding=UTF-8",
           "-cp", a.java_cp, "org.apache.kafka.tools.DumpLogSegments", "--deep-iteration", "--print-data-log",
           flag, "--files", ",".join(str(f) for f in files)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    out = p.stdout.decode("utf-8", "replace")
    (work / ("dump-log-segments-%s-decoded.txt" % name)).write_text(out + "\n--- stderr ---\n"
                                                                     + p.stderr.decode("utf-8", "replace"))
    if p.returncode != 0:
        report("FAIL", "dump-decoded/" + name, "DumpLogSegments %s exited %d: %s"
               % (flag, p.returncode, p.stderr.decode("utf-8", "replace")[-300:]))
        return
    sections = split_sections(out)
    problems, lines, fields = [], 0, 0
    for f in files:
        k = subprocess.run([a.krec, "dump", "--print-data", str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        ours = k.stdout.decode("utf-8", "replace").rstrip("\n") + "\n"
        theirs = sections.get(str(f), "")
        ta, tb = theirs.split("\n"), ours.split("\n")
        lines += len(ta) - 1
        if len(ta) != len(tb):
            problems.append("%s: Kafka %d lines, krec %d" % (f.name, len(ta) - 1, len(tb) - 1))
        diff = [(i, x, y) for i, (x, y) in enumerate(zip(ta, tb)) if x != y]
        if diff:
            i, x, y = diff[0]
            problems.append("%s: %d of %d lines differ; first at line %d: Kafka %r, krec %r"
                            % (f.name, len(diff), len(ta) - 1, i + 1, x[:200], y[:200]))
        # JSON, field by field against Kafka's printed key/payload.
        kafka_recs = {}
        for line in ta:
            m = RECORD_LINE.match(line)
            if m and (" key: " in line or " payload: " in line):
                kafka_recs[int(m.group(1))] = split_key_payload(line)
        j = subprocess.run([a.krec, "dump", "--deep", "--format", "json", str(f)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        seen = 0
        for entry in (json.loads(l) for l in j.stdout.decode("utf-8").split("\n") if l.strip()):
            for r in entry.get("records", []):
                if r["offset"] not in kafka_recs:
                    continue
                seen += 1
                kk, kp = kafka_recs[r["offset"]]
                for field, want in (("key_decoded", json_or_error(kk)), ("value_decoded", json_or_error(kp))):
                    got = r.get(field, "absent")
                    if topic == "__remote_log_metadata" and isinstance(got, dict) and "text" in got:
                        # Kafka prints the Java objects' toString(): krec's "text" next to the JSON.
                        got, want = got["text"], kp
                    fields += 1
                    if got != want:
                        problems.append("%s offset %d %s: Kafka %s, krec %s"
                                        % (f.name, r["offset"], field, json.dumps(want)[:200], json.dumps(got)[:200]))
        if seen != len(kafka_recs):
            problems.append("%s: Kafka decoded %d records, krec's JSON has %d of them" % (f.name, len(kafka_recs), seen))
    if problems:
        report("FAIL", "dump-decoded/" + name, "; ".join(problems[:6]))
    else:
        report("PASS", "dump-decoded/" + name,
               "krec dump --print-data prints DumpLogSegments %s's %d lines exactly (%d files); JSON "
               "key_decoded/value_decoded equal Kafka's %d printed keys/payloads" % (flag, lines, len(files), fields))


def classify_text_diff(kafka, ours):
    """Short names for the kinds of difference between two lines, so that a report groups them."""
    kinds = []
    km = re.search(r"headerKeys: \[(.*?)\]", kafka)
    om = re.search(r"headerKeys: \[(.*?)\]", ours)
    if km and om and km.group(1) != om.group(1) and km.group(1).split(",") == om.group(1).split(", "):
        kinds.append("headerKeys separator (Kafka ',' / krec ', ')")
    for k in KRAFT_CONTROL:
        if (" " + k) in kafka and (" " + k) not in ours:
            kinds.append("KRaft control record text (%s) missing" % k.rstrip(":"))
    if kafka.startswith("offset: ") and ours.startswith("baseOffset: "):
        kinds.append("v0/v1 batch line (Kafka 'offset: N position: ...', krec the v2 form)")
    if "NoTimestampType" in kafka and "NO_TIMESTAMP_TYPE" in ours:
        kinds.append("v0 timestamp type name (Kafka NoTimestampType, krec NO_TIMESTAMP_TYPE)")
    if " isValid: " in kafka and " isValid: " not in ours:
        kinds.append("v0/v1 record line without ' isValid: B crc: N' (the inner message's CRC)")
    if "\ufffd" in kafka + ours and kafka.replace("\ufffd", "") == ours.replace("\ufffd", ""):
        kinds.append("invalid UTF-8 in key/payload replaced differently (Java's decoder vs krec's)")
    return kinds or ["other"]


def java_text(hexstr):
    """What DumpLogSegments prints for bytes: Java's new String(bytes, UTF_8)."""
    return java_utf8(bytes.fromhex(hexstr))


def java_utf8(b):
    """Java's (JDK 17+) String decoding of UTF-8 with replacement, which is not Python's: an invalid
    sequence that starts like a 3- or 4-byte form becomes one U+FFFD for up to 3 bytes (a UTF-8
    encoded surrogate such as ED A0 80 is one U+FFFD, not three), and a truncated form at the very
    end drops what follows its first replacement."""
    repl = "\ufffd"
    out = []
    sp, sl = 0, len(b)

    def cont(x):
        return (x & 0xC0) == 0x80

    while sp < sl:
        b1 = b[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < sl:
                b2 = b[sp]
                if cont(b2):
                    out.append(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                    sp += 1
                else:
                    out.append(repl)
                continue
            out.append(repl)
            break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < sl:
                b2, b3 = b[sp], b[sp + 1]
                if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not cont(b2) or not cont(b3):
                    out.append(repl)
                    sp += 0 if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not cont(b2) else 1
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(repl if 0xD800 <= c <= 0xDFFF else chr(c))
                    sp += 2
                continue
            if sp < sl and ((b1 == 0xE0 and (b[sp] & 0xE0) == 0x80) or not cont(b[sp])):
                out.append(repl)
                continue
            out.append(repl)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < sl:
                b2, b3, b4 = b[sp], b[sp + 1], b[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not (cont(b2) and cont(b3) and cont(b4)) or not 0x10000 <= uc <= 0x10FFFF:
                    out.append(repl)
                    if (b1 > 0xF4 or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                            or (b1 == 0xF4 and (b2 & 0xF0) != 0x80) or not cont(b2)):
                        pass  # one byte
                    elif not cont(b3):
                        sp += 1
                    else:
                        sp += 2
                else:
                    out.append(chr(uc))
                    sp += 3
                continue
            if b1 > 0xF4 or (sp < sl and ((b1 == 0xF0 and not 0x90 <= b[sp] <= 0xBF)
                                          or (b1 == 0xF4 and (b[sp] & 0xF0) != 0x80) or not cont(b[sp]))):
                out.append(repl)
                continue
            sp += 1
            out.append(repl)
            if sp < sl and not cont(b[sp]):
                continue
            break
        else:
            out.append(repl)
    return "".join(out)


def last_sequence(base, delta):
    if base < 0:
        return -1
    return base + delta if base <= 2147483647 - delta else delta - (2147483647 - base) - 1


def bool_s(b):
    return "true" if b else "false"


def expected_batch(e):
    """Kafka's batch-line fields for one krec JSON entry (strings, as printed)."""
    x = {
        "lastOffset": str(e["last_offset"]),
        "position": str(e["position"]),
        "tsType": TS_NAMES.get(e["timestamp_type"], e["timestamp_type"]),
        "maxTimestamp": str(e["max_timestamp"] if e["max_timestamp"] is not None else -1),
        "size": str(e["size_bytes"]),
        "magic": str(e["magic"]),
        "codec": e["compression"],
        "crc": str(e["crc"]),
        "isvalid": bool_s(e["crc_valid"]),
    }
    if e["magic"] >= 2:
        x.update({
            "baseOffset": str(e["base_offset"]),
            "count": str(e["count"]),
            "baseSequence": str(e["base_sequence"]),
            "lastSequence": str(last_sequence(e["base_sequence"], e["last_offset"] - e["base_offset"])),
            "producerId": str(e["producer_id"]),
            "producerEpoch": str(e["producer_epoch"]),
            "partitionLeaderEpoch": str(e["partition_leader_epoch"]),
            "isTransactional": bool_s(e["transactional"]),
            "isControl": bool_s(e["control"]),
            "deleteHorizonMs": "OptionalLong.empty" if e["delete_horizon_ms"] is None
            else "OptionalLong[%d]" % e["delete_horizon_ms"],
        })
    return x


def compare_record(e, rec, line):
    """Problems between one krec record (of entry e) and DumpLogSegments' record line."""
    m = RECORD.match(line)
    if not m:
        return ["unparsed record line %r" % line[:120]]
    p = []
    ts = rec["timestamp"] if rec["timestamp"] is not None else -1
    want = {"offset": str(rec["offset"]), "tsType": TS_NAMES.get(e["timestamp_type"]), "timestamp": str(ts),
            "keySize": str(len(rec["key"]) // 2 if rec["key"] is not None else -1),
            "valueSize": str(len(rec["value"]) // 2 if rec["value"] is not None else -1)}
    for k, v in want.items():
        if m.group(k) != v:
            p.append("offset %s %s: Kafka %s, krec %s" % (m.group("offset"), k, m.group(k), v))
    rest = m.group("rest")
    at = "offset %s" % m.group("offset")
    if e["magic"] >= 2:
        seq = -1 if e["base_sequence"] < 0 else last_sequence(e["base_sequence"], rec["offset"] - e["base_offset"])
        head = " sequence: %d headerKeys: [%s]" % (seq, ",".join(h["key"] for h in rec["headers"]))
        if not rest.startswith(head):
            got = re.match(r" sequence: (-?\d+) headerKeys: \[(.*?)\]", rest, re.S)
            p.append("%s sequence/headerKeys: Kafka %r, krec %r" % (at, got.group(0) if got else rest[:80], head))
            return p
        rest = rest[len(head):]
    else:
        lm = re.match(r" isValid: (true|false) crc: (\d+)", rest)
        if not lm:
            p.append("%s: no isValid/crc on a legacy record line" % at)
            return p
        if lm.group(1) != "true":
            p.append("%s: Kafka says the inner message is invalid" % at)
        rest = rest[lm.end():]  # the inner CRC is not in krec's JSON
    if e["control"]:
        c = rec.get("control") or {}
        cm = re.match(r" endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)$", rest)
        if cm:
            if CONTROL_NAMES.get(cm.group(1)) != c.get("type") or int(cm.group(2)) != c.get("coordinator_epoch"):
                p.append("%s control: Kafka %s coordinatorEpoch %s, krec %s coordinator_epoch %s"
                         % (at, cm.group(1), cm.group(2), c.get("type"), c.get("coordinator_epoch")))
        else:
            kind = next((v for k, v in KRAFT_CONTROL.items() if rest.startswith(" " + k)), None)
            um = re.match(r" controlType: (\w+)\((-?\d+)\)", rest)
            if kind is None and um:
                kind = "unknown"
            if kind is None:
                p.append("%s: unparsed control record text %r" % (at, rest[:100]))
            elif kind != c.get("type"):
                p.append("%s control type: Kafka %s, krec %s" % (at, kind, c.get("type")))
        return p
    tail = ""
    if rec["key"] is not None:
        tail += " key: " + java_text(rec["key"])
    if rec["value"] is not None:
        tail += " payload: " + java_text(rec["value"])
    if rest != tail:
        p.append("%s key/payload text: Kafka %r, krec %r" % (at, rest[:100], tail[:100]))
    return p


def compare_partition(name, dls, shallow, deep):
    """Reports the batch check and the record check of one partition; returns nothing."""
    batch_problems, record_problems, pending_only = [], [], True
    n_batches = n_records = 0
    by_file_s, by_file_d = {}, {}
    for e in shallow:
        by_file_s.setdefault(Path(e.get("file", "?")).name, []).append(e)
    for e in deep:
        by_file_d.setdefault(Path(e.get("file", "?")).name, []).append(e)
    for fname, parsed in dls.items():
        base = Path(fname).name
        ks = [e for e in by_file_s.get(base, []) if "error" not in e and not e.get("partial")]
        errs = [e for e in by_file_s.get(base, []) if "error" in e]
        partial = sum(e.get("bytes", 0) for e in by_file_s.get(base, []) if e.get("partial"))
        for u in parsed["unparsed"]:
            batch_problems.append("%s: unparsed DumpLogSegments line %r" % (base, u[:120]))
        for e in errs:
            batch_problems.append("%s: krec error at %s: %s" % (base, e.get("position"), e.get("error")))
        if len(ks) != len(parsed["batches"]):
            batch_problems.append("%s: Kafka %d batches, krec %d" % (base, len(parsed["batches"]), len(ks)))
        if parsed["trailing"] != partial:
            batch_problems.append("%s: Kafka %d trailing bytes, krec partial %d" % (base, parsed["trailing"], partial))
        kd = by_file_d.get(base, [])
        for i, (b, e) in enumerate(zip(parsed["batches"], ks)):
            n_batches += 1
            want = expected_batch(e)
            for k, v in want.items():
                if b.get(k) != v:
                    batch_problems.append("%s batch %d (offset %s) %s: Kafka %s, krec %s"
                                          % (base, i, b.get("baseOffset", b.get("lastOffset")), k, b.get(k), v))
            # records: the deep dump's entry at the same position
            d = next((x for x in kd if x.get("position") == e["position"]), None)
            if d is None:
                record_problems.append("%s batch at %d: missing from krec dump --deep" % (base, e["position"]))
                pending_only = False
                continue
            if "error" in d:
                pend = e["compression"] != "none" and "not implemented" in d["error"]
                pending_only &= pend
                record_problems.append("%s batch at %d: krec error: %s" % (base, e["position"], d["error"]))
                continue
            recs = d.get("records") or []
            if len(recs) != len(b["records"]):
                record_problems.append("%s batch at %d: Kafka %d records, krec %d"
                                       % (base, e["position"], len(b["records"]), len(recs)))
                pending_only = False
            for rec, line in zip(recs, b["records"]):
                n_records += 1
                q = compare_record(d, rec, line)
                if q:
                    pending_only = False
                    record_problems.extend("%s: %s" % (base, x) for x in q)
    files = len(dls)
    if batch_problems:
        report("FAIL", "dump-batches/" + name, "; ".join(batch_problems[:5]) + more(batch_problems, 5))
    else:
        report("PASS", "dump-batches/" + name, "%d batches in %d segment(s): every batch field equal to DumpLogSegments'"
               % (n_batches, files))
    if record_problems:
        label = " " + PENDING if pending_only else ""
        report("FAIL", "dump-records/" + name + label, "; ".join(record_problems[:5]) + more(record_problems, 5))
    else:
        report("PASS", "dump-records/" + name, "%d records: offsets, timestamps, sizes, sequences, header keys, "
               "control markers, keys and payloads equal to DumpLogSegments'" % n_records)


def more(lst, n):
    return " (+%d more)" % (len(lst) - n) if len(lst) > n else ""


# ------------------------------------------------------------------------------ consumers

def rec_key(r):
    return (r["offset"], r["key"], r["value"], json.dumps(r["headers"]))


def check_scenario(topic, sc, deep):
    produced = sorted(sc["produced"], key=lambda r: r["offset"])
    # Kafka against itself: what the scenario expects from the consumers.
    want_rc = [rec_key(r) for r in produced if r["fate"] in ("plain", "committed")]
    want_ru = [rec_key(r) for r in produced]
    got_rc = [rec_key(r) for r in sc["read_committed"]]
    got_ru = [rec_key(r) for r in sc["read_uncommitted"]]
    if got_rc == want_rc and got_ru == want_ru:
        report("PASS", "scenario/" + topic, "Kafka's consumers: read_committed %d records (plain + committed), "
               "read_uncommitted %d (all produced, %d aborted)"
               % (len(got_rc), len(got_ru), sum(r["fate"] == "aborted" for r in produced)))
    else:
        report("FAIL", "scenario/" + topic, "Kafka's consumers disagree with what was produced: read_committed %d "
               "(want %d), read_uncommitted %d (want %d)" % (len(got_rc), len(want_rc), len(got_ru), len(want_ru)))

    # krec's read_uncommitted view: every non-control record of the dump, in log order.
    errors = [e for e in deep if "error" in e]
    ours = []
    for e in deep:
        if "error" in e or e.get("partial") or e.get("control"):
            continue
        for r in e.get("records") or []:
            ours.append({"offset": r["offset"], "timestamp": r["timestamp"], "timestamp_type": e["timestamp_type"],
                         "key": r["key"], "value": r["value"], "headers": r["headers"]})
    theirs = [{k: r[k] for k in ("offset", "timestamp", "timestamp_type", "key", "value", "headers")}
              for r in sc["read_uncommitted"]]
    if ours == theirs and not errors:
        report("PASS", "read-uncommitted/" + topic, "krec's non-control records equal the read_uncommitted "
               "consumer's %d records (offset, timestamp and type, key, value, headers)" % len(theirs))
    else:
        p = []
        for e in errors:
            p.append("krec error at %s: %s" % (e.get("position"), e["error"]))
        if len(ours) != len(theirs):
            p.append("krec %d records, consumer %d" % (len(ours), len(theirs)))
        for a, b in zip(theirs, ours):
            if a != b:
                diff = [k for k in a if a[k] != b.get(k)]
                p.append("offset %s: %s differ (consumer %s, krec %s)"
                         % (a["offset"], ",".join(diff), json.dumps({k: a[k] for k in diff})[:120],
                            json.dumps({k: b.get(k) for k in diff})[:120]))
                if len(p) > 6:
                    break
        pend = errors and len(p) == len(errors) + (len(ours) != len(theirs))
        report("FAIL", "read-uncommitted/" + topic + (" " + PENDING if pend and all(
            "not implemented" in e["error"] for e in errors) else ""), "; ".join(p[:6]) + more(p, 6))


# ------------------------------------------------------------------------------ krec log

LOG_READ_FIELDS = ("offset", "timestamp", "key", "value", "headers")


def krec_has_isolation(krec):
    p = subprocess.run([krec, "log", "read", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode == 0 and b"--isolation" in p.stdout


def copy_partition(src, dst):
    """A fresh copy of a partition directory's files (krec log opens it: recovery writes there)."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file():
            shutil.copy2(f, dst / f.name)


def check_log_engine(krec, topic, sc, src, work, has_isolation):
    """krec log read at both isolation levels and krec log offsets against the broker's consumers
    and its ListOffsets answers, on a copy of the partition directory."""
    if not has_isolation:
        report("TODO", "read-committed/" + topic,
               "krec log read has no --isolation yet: krec's read_committed view against the read_committed "
               "consumer's %d records is not run (crates/log/tests/broker.rs checks Log::consume)"
               % len(sc["read_committed"]))
        return
    copy = work / "log-engine" / src.name
    copy_partition(src, copy)
    for isolation, key in (("read-committed", "read_committed"), ("read-uncommitted", "read_uncommitted")):
        # read-committed/TOPIC was the TODO line; read-uncommitted/TOPIC is krec dump's check above
        name = {"read-committed": "read-committed/", "read-uncommitted": "log-read-uncommitted/"}[isolation] + topic
        p = subprocess.run([krec, "log", "read", "--isolation", isolation, "--bytes", "hex", str(copy)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            report("FAIL", name, "krec log read --isolation %s exited %d: %s"
                   % (isolation, p.returncode, p.stderr.decode("utf-8", "replace").strip()[:300]))
            continue
        ours = [json.loads(l) for l in p.stdout.decode("utf-8").split("\n") if l.strip()]
        ours = [{k: r.get(k) for k in LOG_READ_FIELDS} for r in ours]
        theirs = [{k: r[k] for k in LOG_READ_FIELDS} for r in sc[key]]
        if ours == theirs:
            report("PASS", name, "krec log read --isolation %s prints the %s consumer's %d records (offset, "
                   "timestamp, key, value, headers)" % (isolation, key, len(theirs)))
            continue
        problems = []
        if len(ours) != len(theirs):
            a, b = {r["offset"] for r in theirs}, {r["offset"] for r in ours}
            problems.append("consumer %d records, krec %d; only the consumer's offsets %s, only krec's %s"
                            % (len(theirs), len(ours), sorted(a - b), sorted(b - a)))
        for x, y in zip(theirs, ours):
            if x != y:
                diff = [k for k in LOG_READ_FIELDS if x[k] != y[k]]
                problems.append("offset %s: %s differ (consumer %s, krec %s)"
                                % (x["offset"], ",".join(diff), json.dumps({k: x[k] for k in diff})[:120],
                                   json.dumps({k: y[k] for k in diff})[:120]))
        report("FAIL", name, "; ".join(problems[:6]) + more(problems, 6))
    check_log_offsets(krec, topic, sc, copy)


def check_log_offsets(krec, topic, sc, copy):
    lo = sc.get("list_offsets")
    if not lo:
        report("SKIP", "log-offsets/" + topic, "scenario.json has no list_offsets (an older BrokerScenario)")
        return
    asks = [(["--earliest"], lo["earliest"]), (["--latest"], lo["latest"]),
            (["--max-timestamp"], lo["max_timestamp"])]
    # Admin.listOffsets(latest) with IsolationLevel.READ_COMMITTED: the last stable offset.
    if lo.get("latest_read_committed"):
        asks.append((["--latest", "--isolation", "read-committed"], lo["latest_read_committed"]))
    ts = lo.get("for_timestamp") or []
    # A sample: about a dozen queries spread over the sorted list (each one is a krec process).
    step = max(1, len(ts) // 12)
    sample = ts[::step] + ([ts[-1]] if ts and (len(ts) - 1) % step else [])
    asks += [(["--time", str(a["query"])], a) for a in sample]
    problems = []
    for args, want in asks:
        p = subprocess.run([krec, "log", "offsets"] + args + [str(copy)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0:
            problems.append("krec log offsets %s exited %d: %s" % (" ".join(args), p.returncode,
                                                                   p.stderr.decode("utf-8", "replace").strip()[:200]))
            continue
        got = json.loads(p.stdout.decode("utf-8"))
        got_ts = got.get("timestamp")
        if (got.get("offset"), -1 if got_ts is None else got_ts) != (want["offset"], want["timestamp"]):
            problems.append("%s: broker offset %s timestamp %s, krec offset %s timestamp %s"
                            % (" ".join(args), want["offset"], want["timestamp"], got.get("offset"), got_ts))
    if problems:
        report("FAIL", "log-offsets/" + topic, "; ".join(problems[:6]) + more(problems, 6))
    else:
        report("PASS", "log-offsets/" + topic, "krec log offsets answers %d of the broker's ListOffsets queries "
               "(earliest, latest at both isolation levels, max timestamp, timestamps) with its "
               "offsets and timestamps" % len(asks))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--scenario")
    ap.add_argument("--work", required=True, help="where DumpLogSegments' output is kept")
    ap.add_argument("partitions", nargs="+")
    a = ap.parse_args()
    logs = Path(a.logs)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)

    segs = {p: sorted((logs / p).glob("*.log")) for p in a.partitions}
    all_files = [f for p in a.partitions for f in segs[p]]
    for p in a.partitions:
        if not segs[p]:
            report("FAIL", "dump-batches/" + p, "no .log segment in %s" % (logs / p))
    if not all_files:
        return 0
    try:
        dls_text = run_dump_log_segments(a.java_cp, all_files, work / "dump-log-segments.txt")
        parsed = parse_dump_log_segments(dls_text)
        sections = split_sections(dls_text)
    except Exception as ex:
        report("FAIL", "dump-log-segments", str(ex))
        return 0
    scenario = json.loads(Path(a.scenario).read_text(encoding="utf-8")) if a.scenario else {"topics": {}}
    a.has_isolation = bool(a.scenario) and krec_has_isolation(a.krec)
    for p in a.partitions:
        if not segs[p]:
            continue
        try:
            compare_one(a, p, logs, work, segs, parsed, sections, scenario)
        except Exception as ex:  # keep going: one partition's trouble is one failed check
            report("FAIL", "dump-compare/" + p, "comparison crashed: %r" % ex)
    return 0


def compare_one(a, p, logs, work, segs, parsed, sections, scenario):
    """All checks of one partition directory."""
    dls = {f: parsed.get(str(f), {"batches": [], "trailing": 0, "unparsed": ["(no output for %s)" % f]})
           for f in segs[p]}
    rc_s, shallow, err_s = krec_dump(a.krec, logs / p, deep=False)
    rc_d, deep, err_d = krec_dump(a.krec, logs / p, deep=True)
    (work / ("krec-dump-%s.jsonl" % p)).write_text("\n".join(json.dumps(e) for e in deep) + "\n", encoding="utf-8")
    if rc_s != 0:
        report("FAIL", "dump-exit/" + p, "krec dump (without --deep) exited %d: %s" % (rc_s, err_s[:300]))
    compare_partition(p, dls, shallow, deep)
    topic = p.rsplit("-", 1)[0]
    internal = topic in DECODERS
    compare_text(a.krec, p, segs[p], sections, ["--decode", "none"] if internal else [])
    if internal:
        compare_decoded(a, p, segs[p] + sorted((logs / p).glob("*.checkpoint")), work)
    if topic in scenario["topics"]:
        check_scenario(topic, scenario["topics"][topic], deep)
        check_log_engine(a.krec, topic, scenario["topics"][topic], logs / p, work, a.has_isolation)


if __name__ == "__main__":
    sys.exit(main())
