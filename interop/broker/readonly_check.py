#!/usr/bin/env python3
"""Reading a running broker's partition directories changes nothing, and writing is refused.

Usage: readonly_check.py --krec KREC DIR...

For each partition directory of a live broker: its state (names, sizes, SHA-256, modification
times in ns) before and after every reading krec command (log read at both isolation levels,
log info, log offsets, dump --deep of each segment, explain of the first, verify, stats) must be
equal; `krec log append` (a writer) must exit 2 naming the running broker and change nothing.
Prints "PASS name: detail" / "FAIL name: detail" lines for interop/run.sh.
"""
import argparse
import hashlib
import os
import subprocess
import sys


def state(d):
    out = {}
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        st = os.stat(p)
        h = hashlib.sha256()
        if os.path.isfile(p):
            with open(p, "rb") as f:
                h.update(f.read())
        out[name] = (st.st_size, h.hexdigest(), st.st_mtime_ns)
    return out


def diff(a, b):
    names = sorted(set(a) | set(b))
    return [n for n in names if a.get(n) != b.get(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    for d in args.dirs:
        part = os.path.basename(d.rstrip("/"))
        segments = sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".log"))
        cmds = [
            ["log", "read", d],
            ["log", "read", d, "--isolation", "read-committed"],
            ["log", "info", d],
            ["log", "offsets", d, "--latest"],
            ["log", "offsets", d, "--time", "0"],
            ["verify", d],
            ["stats", d],
        ]
        cmds += [["dump", "--deep", "--print-data", s] for s in segments]
        if segments:
            cmds.append(["explain", segments[0]])
        before = state(d)
        problems = []
        for c in cmds:
            r = subprocess.run([args.krec] + c, capture_output=True, timeout=300)
            if r.returncode != 0:
                problems.append("%s exited %d: %s" % (" ".join(c[:2]), r.returncode,
                                                       r.stderr.decode(errors="replace")[:200]))
            changed = diff(before, state(d))
            if changed:
                problems.append("%s changed %s" % (" ".join(c[:2]), ", ".join(changed)))
                before = state(d)
        if problems:
            print("FAIL read-only/%s: %s" % (part, "; ".join(problems)))
        else:
            print("PASS read-only/%s: %d reading commands on the live broker's directory, "
                  "every file byte-identical with the same mtime" % (part, len(cmds)))
        r = subprocess.run([args.krec, "log", "append", d], input=b'{"value":"x"}\n',
                           capture_output=True, timeout=60)
        err = r.stderr.decode(errors="replace")
        changed = diff(before, state(d))
        if r.returncode == 2 and "running Kafka broker" in err and not changed:
            print("PASS writer-refused/%s: krec log append exits 2: %s" % (part, err.strip()[:160]))
        else:
            print("FAIL writer-refused/%s: exit %d, changed %s: %s"
                  % (part, r.returncode, changed, err.strip()[:200]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
