#!/usr/bin/env python3
"""Damaged remote tiers, saved as fixtures for `krec verify --remote` (issue 32), from a run of
tiered_check.py and from a broker killed during an upload.

    tiered_damage.py damage --krec KREC --checker BIN --run SAVE/NAME --out DIR [--key PEM] [--label L]
    tiered_damage.py kill --krec KREC --java-cp CP --plugin DIR --checker BIN --out DIR

damage: copies the run's storage root and log dirs (the broker is stopped) once per scenario into
DIR/SCENARIO/{storage,logs} and alters the copy:
  object-deleted     a middle segment's .log object removed
  object-added       an object no metadata names: a copy of a segment's .log under a new segment id
  byte-flipped       one byte flipped in the middle of a segment's .log object (inside a chunk)
  manifest-truncated a segment's .rsm-manifest cut to half its length
DIR/SCENARIO/expected.json says which partition, object and offset the damage is at. Checks: the
library (BIN, crates/remote/examples/check_remote_tier.rs) reports exactly the damaged segment,
once, and every other segment intact; `krec verify --remote file://STORAGE/PREFIX LOGS` exits
non-zero and names the damaged object's segment id (SKIP while krec does not take --remote).

kill: starts a broker (filesystem backend, upload rate limited to 1 MiB/s so that an upload lasts
about a second), writes one topic until a segment upload starts, SIGKILLs the broker while the
segment's .log object exists without its manifest, and saves DIR/{storage,logs}. Checks:
__remote_log_metadata-0 (decoded by `krec dump`) has that segment in COPY_SEGMENT_STARTED without
COPY_SEGMENT_FINISHED; the library reads every finished segment and reports the unfinished one;
`krec verify --remote` names it (SKIP while krec does not take --remote).
Prints PASS/FAIL/SKIP lines; exit 0.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiered_check import tiering_props  # noqa: E402  (the broker settings, in one place)

HERE = Path(__file__).resolve().parent
PREFIX = "tiered/"


def report(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


def segments(storage):
    """{(partition dir name, start offset): {suffix: path}} of the plugin's objects."""
    out = {}
    for p in sorted((storage / PREFIX).glob("*/*/*")):
        stem, _, suffix = p.name.partition(".")
        start, _, seg_id = stem.partition("-")
        topic = p.parent.parent.name.rsplit("-", 1)[0]
        key = ("%s-%s" % (topic, p.parent.name), int(start), seg_id)
        out.setdefault(key, {})[suffix] = p
    return out


def run_checker(checker, storage, key):
    cmd = [checker, str(storage), PREFIX] + (["--key", "k1=" + key] if key else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    lines = p.stdout.decode("utf-8", "replace").splitlines()
    return ([l for l in lines if l.startswith("FAIL ")], [l for l in lines if l.startswith("PASS ")],
            p.stderr.decode("utf-8", "replace"))


def check_library(name, checker, storage, key, expect, intact):
    fails, passes, err = run_checker(checker, storage, key)
    want = "%s/%020d" % (expect["partition"], expect["offset"])
    hits = [l for l in fails if want in l or expect["segment_id"] in l]
    if len(fails) == 1 and len(hits) == 1 and len(passes) == intact:
        report("PASS", name + "/library", "the damaged segment reported once (%s), the other %d intact"
               % (fails[0][5:][:160], len(passes)))
    else:
        report("FAIL", name + "/library", "want one FAIL naming %s and %d PASS; got %d FAIL (%s), %d PASS %s"
               % (want, intact, len(fails), " | ".join(f[:120] for f in fails[:3]), len(passes), err[-200:]))


def check_verify(name, krec, storage, logs, key, expect):
    location = "file://%s/%s" % (storage, PREFIX)
    cmd = [krec, "verify"] + (["--rsm-private-key", "k1=" + key] if key else []) + ["--remote", location, str(logs)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    out = (p.stdout + p.stderr).decode("utf-8", "replace")
    if p.returncode != 0 and "unexpected argument" in out:
        report("SKIP", name + "/krec-verify-remote", "this krec has no `verify --remote` yet")
        return
    lines = [l for l in out.splitlines() if expect["segment_id"] in l]
    if p.returncode != 0 and len(lines) == 1:
        report("PASS", name + "/krec-verify-remote", "exit %d, one line names the segment: %s"
               % (p.returncode, lines[0][:200]))
    else:
        report("FAIL", name + "/krec-verify-remote", "exit %d, %d lines name segment %s: %s"
               % (p.returncode, len(lines), expect["segment_id"], " | ".join(out.splitlines()[-4:])[:400]))


def damage(a):
    run = Path(a.run)
    segs = segments(run / "storage")
    # A middle segment of the first partition: not its first, not its last.
    part = sorted({k[0] for k in segs})[0]
    mine = sorted(k for k in segs if k[0] == part)
    target = mine[len(mine) // 2]
    total = len(segs)
    for scenario in ("object-deleted", "object-added", "byte-flipped", "manifest-truncated"):
        d = Path(a.out) / scenario
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        shutil.copytree(run / "storage", d / "storage")
        shutil.copytree(run / "logs", d / "logs")
        objs = segments(d / "storage")[target]
        expect = {"scenario": scenario, "partition": part, "offset": target[1], "segment_id": target[2]}
        intact = total - 1
        if scenario == "object-deleted":
            objs["log"].unlink()
            expect["object"] = objs["log"].name
        elif scenario == "object-added":
            new_id = "AAAAAAAAAAAAAAAAAAAAAA"
            extra = objs["log"].with_name("%020d-%s.log" % (target[1], new_id))
            shutil.copy(objs["log"], extra)
            expect.update(object=extra.name, segment_id=new_id)
            intact = total
        elif scenario == "byte-flipped":
            b = bytearray(objs["log"].read_bytes())
            b[len(b) // 2] ^= 0x01
            objs["log"].write_bytes(bytes(b))
            expect.update(object=objs["log"].name, byte=len(b) // 2)
        else:
            m = objs["rsm-manifest"].read_bytes()
            objs["rsm-manifest"].write_bytes(m[: len(m) // 2])
            expect["object"] = objs["rsm-manifest"].name
        (d / "expected.json").write_text(json.dumps(expect, indent=1) + "\n")
        if a.key:
            shutil.copy(a.key, d / "k1-private.pem")
        name = "%s/%s" % (a.label, scenario)
        check_library(name, a.checker, d / "storage", a.key, expect, intact)
        check_verify(name, a.krec, d / "storage", d / "logs", a.key, expect)


def kill(a):
    out = Path(a.out)
    shutil.rmtree(out, ignore_errors=True)
    (out / "storage").mkdir(parents=True)
    broker = out / "broker"
    props = {
        **tiering_props(a.plugin),
        "rsm.config.key.prefix": PREFIX,
        "rsm.config.upload.rate.limit.bytes.per.second": str(1 << 20),
        "rsm.config.storage.backend.class": "io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage",
        "rsm.config.storage.root": str(out / "storage"),
    }
    env = dict(os.environ, KAFKA_CP=a.java_cp.split(":")[0],
               BROKER_EXTRA_PROPS=" ".join("%s=%s" % kv for kv in props.items()))
    log = open(out / "run.log", "wb")
    if subprocess.run(["bash", str(HERE / "broker.sh"), "start", str(broker)], stdout=log, stderr=subprocess.STDOUT,
                      env=env, timeout=180).returncode != 0:
        report("FAIL", "kill-during-upload/broker", "broker.sh start failed (see %s)" % (out / "run.log"))
        return
    pid = int((broker / "broker.pid").read_text())
    producer = subprocess.Popen(["java", "-cp", a.java_cp, "dev.krecords.interop.TieredScenario", "produce",
                                 (broker / "bootstrap").read_text().strip(), "none"], stdout=log, stderr=subprocess.STDOUT)
    caught = None
    deadline = time.time() + 90
    try:
        while time.time() < deadline and caught is None:
            for k, objs in segments(out / "storage").items():
                if "log" in objs and "rsm-manifest" not in objs and k[1] > 0:
                    os.kill(pid, signal.SIGKILL)
                    caught = k
                    break
            time.sleep(0.01)
    finally:
        if caught is None:
            subprocess.run(["bash", str(HERE / "broker.sh"), "stop", str(broker)], stdout=log, stderr=subprocess.STDOUT)
        producer.kill()
        producer.wait()
    if caught is None:
        report("FAIL", "kill-during-upload/caught", "no upload in progress seen within 90 s")
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
            time.sleep(0.1)
        except OSError:
            break
    (broker / "broker.pid").unlink(missing_ok=True)
    shutil.move(str(broker / "logs"), str(out / "logs"))
    expect = {"scenario": "kill-during-upload", "partition": caught[0], "offset": caught[1], "segment_id": caught[2]}
    (out / "expected.json").write_text(json.dumps(expect, indent=1) + "\n")
    report("PASS", "kill-during-upload/caught", "broker SIGKILLed while %s/%020d-%s.log was being uploaded"
           % (caught[0], caught[1], caught[2]))
    # The metadata topic, decoded by krec: STARTED without FINISHED for that segment.
    p = subprocess.run([a.krec, "dump", "--deep", "--format", "json", str(out / "logs/__remote_log_metadata-0")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    states = []
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        for r in e.get("records") or []:
            d = (r.get("value_decoded") or {}).get("data") or {}
            if (d.get("remoteLogSegmentId") or {}).get("id") == caught[2]:
                states.append(d.get("remoteLogSegmentState"))
    if states == [0]:
        report("PASS", "kill-during-upload/metadata", "__remote_log_metadata-0 holds segment %s in "
               "COPY_SEGMENT_STARTED only (state 0, no COPY_SEGMENT_FINISHED)" % caught[2])
    else:
        report("FAIL", "kill-during-upload/metadata", "states of segment %s in __remote_log_metadata-0: %s (want [0])"
               % (caught[2], states))
    total = len(segments(out / "storage"))
    check_library("kill-during-upload", a.checker, out / "storage", None, expect, total - 1)
    check_verify("kill-during-upload", a.krec, out / "storage", out / "logs", None, expect)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("damage", "kill"))
    ap.add_argument("--krec", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--run")
    ap.add_argument("--key")
    ap.add_argument("--java-cp")
    ap.add_argument("--plugin")
    ap.add_argument("--label", default="damage", help="prefix of the damage checks' names")
    a = ap.parse_args()
    damage(a) if a.mode == "damage" else kill(a)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        report("FAIL", "tiered-damage", "%s: %s" % (type(e).__name__, e))
    sys.exit(0)
