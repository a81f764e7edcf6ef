#!/usr/bin/env python3
"""What krec read from a running broker over kafka:// against the broker's own files and consumers.

Usage: live_checks.py --krec KREC --fetched DIR --logs SAVED [--scenario scenario.json]

While the broker ran, interop/run.sh left for each partition NAME (TOPIC-0) in DIR:
  NAME.rc.records / NAME.ru.records krec log read --isolation read-committed|read-uncommitted --bytes hex kafka://…
  NAME.whatif.json                krec stats --what-if --no-timing --format json kafka://…
  NAME.convert/                   krec convert kafka://… NAME.convert
After it stopped, SAVED holds its partition directories. Checks, per partition:
  read-committed-live/TOPIC, read-uncommitted-live/TOPIC: the records equal what Kafka's Java
      consumers at that isolation level received (BrokerScenario's scenario.json: offset, timestamp,
      key, value, headers), for the scenario's topics;
  what-if-live/TOPIC: the what-if report over kafka:// equals the report of the directory (the
      file count aside: the broker may have rolled segments; both with --no-timing);
  convert-live/TOPIC: `krec verify` of the converted directory is clean, and its segments hold the
      broker's segments' bytes, byte for byte (concatenated: segment boundaries follow the copy's
      segment.bytes).
Prints "PASS name: detail" / "FAIL name: detail" lines. Standard library only.
"""
import argparse
import json
import pathlib
import subprocess
import sys

FIELDS = ("offset", "timestamp", "key", "value", "headers")


def jsonl(path):
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def log_bytes(d):
    segs = sorted(p for p in d.iterdir() if p.suffix == ".log")
    return b"".join(p.read_bytes() for p in segs), len(segs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--fetched", required=True)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--scenario")
    a = ap.parse_args()
    fetched, logs = pathlib.Path(a.fetched), pathlib.Path(a.logs)
    scenario = json.loads(pathlib.Path(a.scenario).read_text()) if a.scenario else {}
    scenario = scenario.get("topics", scenario)
    names = sorted({p.name[:-len(".whatif.json")] for p in fetched.iterdir() if p.name.endswith(".whatif.json")})
    if not names:
        print("FAIL live-checks: nothing was fetched")
        return 0
    for name in names:
        topic = name.rsplit("-", 1)[0]
        sc = scenario.get(topic) if isinstance(scenario, dict) else None
        # Consumers.
        for iso, key, suffix in (("read-committed", "read_committed", "rc"), ("read-uncommitted", "read_uncommitted", "ru")):
            check = "%s-live/%s" % (iso, topic)
            f = fetched / ("%s.%s.records" % (name, suffix))
            if not f.exists():
                print("FAIL %s: krec log read %s kafka://… failed (see %s)" % (check, iso, f.with_suffix(".err")))
                continue
            if not sc or key not in sc:
                continue
            ours = [{k: r.get(k) for k in FIELDS} for r in jsonl(f)]
            theirs = [{k: r[k] for k in FIELDS} for r in sc[key]]
            if ours == theirs:
                print("PASS %s: krec log read --isolation %s kafka://… returns the %d records Kafka's Java "
                      "consumer received" % (check, iso, len(theirs)))
            else:
                diff = next((i for i, (x, y) in enumerate(zip(ours, theirs)) if x != y), min(len(ours), len(theirs)))
                print("FAIL %s: krec %d records, the Java consumer %d; first difference at record %d: krec %s, "
                      "consumer %s" % (check, len(ours), len(theirs), diff,
                                       json.dumps(ours[diff])[:150] if diff < len(ours) else "-",
                                       json.dumps(theirs[diff])[:150] if diff < len(theirs) else "-"))
        # What-if.
        check = "what-if-live/" + topic
        p = subprocess.run([a.krec, "stats", "--what-if", "--no-timing", "--format", "json", str(logs / name)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        live = json.loads((fetched / (name + ".whatif.json")).read_text() or "{}")
        if p.returncode != 0:
            print("FAIL %s: krec stats --what-if of the directory exited %d: %s"
                  % (check, p.returncode, p.stderr.decode()[:200]))
        else:
            files = json.loads(p.stdout)
            # The directory counts its segment files, kafka:// one live partition.
            for r in (live, files):
                r.get("summary", {}).pop("files", None)
                r.get("summary", {}).pop("live_partitions", None)
            if live == files:
                rows = len(files.get("rows", []))
                print("PASS %s: the what-if report over kafka:// equals the directory's (%d rows, %d records)"
                      % (check, rows, files.get("summary", {}).get("records", 0)))
            else:
                keys = [k for k in set(live) | set(files) if live.get(k) != files.get(k)]
                print("FAIL %s: the reports differ in %s" % (check, ", ".join(sorted(keys))))
        # Convert.
        check = "convert-live/" + topic
        copy = fetched / (name + ".convert")
        if not copy.is_dir():
            print("FAIL %s: krec convert kafka://… made no directory (see %s.convert.err)" % (check, name))
            continue
        p = subprocess.run([a.krec, "verify", str(copy)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=300)
        ours, n_ours = log_bytes(copy)
        theirs, n_theirs = log_bytes(logs / name)
        if p.returncode != 0:
            print("FAIL %s: krec verify of the copy exited %d: %s"
                  % (check, p.returncode, p.stdout.decode()[-300:]))
        elif ours != theirs:
            print("FAIL %s: the copy's segments (%d bytes) differ from the broker's (%d bytes)"
                  % (check, len(ours), len(theirs)))
        else:
            print("PASS %s: krec verify clean; %d bytes in %d segment(s), byte-identical to the broker's %d "
                  "segment(s)" % (check, len(ours), n_ours, n_theirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
