#!/usr/bin/env python3
"""Kafka's DumpLogSegments on the offset and time indexes of log directories krec wrote.

    check_indexes.py --java-cp CP DIR...

For every DIR (a partition directory: `krec log create` + `krec log append`, or a broker's
directory after `krec log recover` rebuilt its indexes) and every `.index` / `.timeindex` in it,
runs org.apache.kafka.tools.DumpLogSegments (kafka-tools; one JVM per mode for all files):

  --index-sanity-check   each file must print "<file> passed sanity check." (Kafka's
                         OffsetIndex/TimeIndex.sanityCheck: length a multiple of the entry size,
                         last offset/timestamp not below the first, ...); a failing check throws,
                         which ends the JVM: the rest are checked in a new one ("FILE is
                         empty." is fine: a segment smaller than index.interval.bytes)
  --verify-index-only    nothing but the "Dumping FILE" lines: every offset index entry must point
                         at the batch holding its offset ("Mismatches in :FILE"), every time index
                         entry hold the max timestamp of the batch of its offset ("Found timestamp
                         mismatch in :FILE"), in increasing order ("Found out of order timestamp
                         in :FILE"), and every indexed offset must be in the log

Prints one PASS/FAIL line per DIR (name `indexes/DIRNAME`) with the number of files and index
entries checked. Standard library only; exit status 0 (the caller counts).
"""
import argparse
import subprocess
import sys
from pathlib import Path

DLS = "org.apache.kafka.tools.DumpLogSegments"


def report(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


def dump(java_cp, mode, files):
    """Runs DumpLogSegments `mode` over `files`, starting again after a file whose check threw.
    Returns {file: [problem]} and the number of JVMs run."""
    problems = {str(f): [] for f in files}
    pending = [str(f) for f in files]
    jvms = 0
    while pending:
        jvms += 1
        p = subprocess.run(["java", "-cp", java_cp, DLS, mode, "--files", ",".join(pending)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        text = p.stdout.decode("utf-8", "replace")
        current, done, stray = None, set(), []
        for line in text.split("\n"):
            if line.startswith("Dumping "):
                current = line[len("Dumping "):].strip()
                done.add(current)
                continue
            if not line.strip():
                continue
            if mode == "--index-sanity-check" and line.strip().endswith(" passed sanity check."):
                continue
            if line.strip().endswith(" is empty."):
                continue  # an index without entries (a segment under index.interval.bytes)
            if line.startswith("\tat ") or line.startswith("    at "):
                continue  # the stack trace of the exception line before
            # the tool's findings name the file ("Mismatches in :/path"); the lines after them
            # (entries) belong to the same file; anything else belongs to the file being dumped
            named = next((f for f in pending if line.rstrip().endswith(":" + f) or (" " + f) in line), None)
            target = named or current
            if named:
                current = named
            if target in problems:
                problems[target].append(line.strip())
            else:
                stray.append(line.strip())
        for f in pending:
            if f not in done:
                break
        if p.returncode == 0:
            for s in stray:
                problems[pending[0]].append(s)
            break
        # The JVM died on the last file it was dumping (an exception): that file fails, the
        # rest go to a new JVM.
        dumped = [f for f in pending if f in done]
        last = dumped[-1] if dumped else pending[0]
        problems[last].append("DumpLogSegments %s exited %d" % (mode, p.returncode))
        pending = pending[pending.index(last) + 1:]
    return problems, jvms


def entries(path):
    size = 8 if path.suffix == ".index" else 12
    return path.stat().st_size // size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    dirs = [Path(d) for d in a.dirs]
    files = {d: sorted(f.resolve() for f in list(d.glob("*.index")) + list(d.glob("*.timeindex"))) for d in dirs}
    everything = [f for d in dirs for f in files[d]]
    if not everything:
        for d in dirs:
            report("FAIL", "indexes/" + d.name, "no .index or .timeindex file in %s" % d)
        return 0
    try:
        sanity, _ = dump(a.java_cp, "--index-sanity-check", everything)
        verify, _ = dump(a.java_cp, "--verify-index-only", everything)
    except Exception as ex:  # noqa: BLE001 - one failed check, not a crash of the caller
        for d in dirs:
            report("FAIL", "indexes/" + d.name, "DumpLogSegments could not run: %r" % ex)
        return 0
    for d in dirs:
        if not files[d]:
            report("FAIL", "indexes/" + d.name, "no .index or .timeindex file in %s" % d)
            continue
        problems = []
        for f in files[d]:
            for what, found in (("--index-sanity-check", sanity), ("--verify-index-only", verify)):
                for line in found.get(str(f), []):
                    problems.append("%s %s: %s" % (f.name, what, line[:200]))
        n = sum(entries(f) for f in files[d])
        if problems:
            report("FAIL", "indexes/" + d.name, "; ".join(problems[:6])
                   + (" (+%d more)" % (len(problems) - 6) if len(problems) > 6 else ""))
        else:
            segs = len({f.stem for f in files[d]})
            report("PASS", "indexes/" + d.name, "DumpLogSegments --index-sanity-check and --verify-index-only "
                   "accept the %d index file(s) of %d segment(s), %d entries" % (len(files[d]), segs, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
