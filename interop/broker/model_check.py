#!/usr/bin/env python3
"""Issue 27's observations 1-4 and 8 against the real broker: positions, isolation, usage errors.

Usage:
  model_check.py --krec KREC --java-cp CP --bootstrap HOST:PORT --topic T --state FILE
      while the broker runs: OpenTransaction makes T (COMMITTED records in a committed
      transaction, OPEN records in one left open), then the checks below over kafka://.
  model_check.py --krec KREC --after DIR --state FILE
      once the broker has stopped: the same out-of-range read on T's partition directory DIR
      must fail with the text the live read printed (kept in FILE).

Checks (obs = the observation of issue 27):
  obs 1: verify, dump and log read default to read_uncommitted (every record up to the high
         watermark); with --isolation read-committed they stop at the last stable offset
         OpenTransaction printed and say "stopped at last stable offset N; high watermark M: an
         open transaction from producer P since offset N";
  obs 2: dump --start 5 --end 8 gives exactly the records 5, 6, 7 (trimmed inside a batch), and
         a time range of the records' own timestamps likewise;
  obs 3: --start 100 --end 50 exits 2 with "empty range"; log read --offset 5000 and dump
         --start 5000 exit 2 naming the partition's range [0, hw);
  obs 4: --start -10 gives the last 10 offsets;
  obs 8: log info and log offsets --latest of kafka://B/T/0 answer from the cluster.
Prints "PASS name: detail" / "FAIL name: detail" lines for interop/run.sh.
"""
import argparse
import json
import re
import subprocess
import sys

COMMITTED = 10
OPEN = 5


def out(ok, name, detail):
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def krec(k, *args):
    return subprocess.run([k, *args], capture_output=True, text=True, timeout=120)


def short(s):
    return " ".join(s.split())[:300]


def name(cmd):
    """A check's name for a command line: ["log", "read", "--offset", "5000"] -> log-read-offset."""
    return "-".join(w.lstrip("-") for w in cmd if not w.isdigit())


def tail(stderr):
    """The message after its source's name: "offset 5000 is out of range: ..."."""
    last = stderr.splitlines()[-1] if stderr.strip() else ""
    i = last.find(": offset ")
    return last[i + 2:] if i >= 0 else last


def record_offsets(stdout):
    offs = []
    for line in stdout.splitlines():
        if line.strip():
            offs.extend(r["offset"] for r in json.loads(line).get("records", []))
    return offs


def deep(k, url, *args):
    r = krec(k, "dump", "--deep", "--format", "json", *args, url)
    return r, (record_offsets(r.stdout) if r.returncode == 0 else None)


def live(a):
    r = subprocess.run(
        ["java", "-cp", a.java_cp, "dev.krecords.interop.OpenTransaction", a.bootstrap, a.topic,
         str(COMMITTED), str(OPEN)],
        capture_output=True, text=True, timeout=300)
    m = re.search(r"lso=(\d+) hw=(\d+)", r.stdout)
    if r.returncode != 0 or not m:
        out(False, "open-transaction", f"OpenTransaction exited {r.returncode}: {short(r.stdout + r.stderr)}")
        return
    lso, hw = int(m.group(1)), int(m.group(2))
    out(True, "open-transaction", f"{a.topic}: {COMMITTED} committed records, {OPEN} open: lso={lso} hw={hw}")
    u = f"kafka://{a.bootstrap}/{a.topic}/0"
    stop = re.compile(rf"stopped at last stable offset {lso}; high watermark {hw}: an open "
                      rf"transaction from producer (\d+) since offset {lso}")

    # obs 1: read_uncommitted by default, read_committed stops at the LSO and says why.
    r, offs = deep(a.krec, u)
    want = list(range(hw))
    out(offs == want, "obs1-dump-default",
        f"dump --deep reads offsets 0..{hw - 1} (incl. the COMMIT marker at {COMMITTED})" if offs == want
        else f"exit {r.returncode}, offsets {offs}: {short(r.stderr)}")
    r = krec(a.krec, "verify", u)
    n = COMMITTED + OPEN + 1
    ok = r.returncode == 0 and f"{n} records" in r.stdout
    out(ok, "obs1-verify-default", short(r.stdout.splitlines()[-1] if r.stdout else r.stderr))
    r = krec(a.krec, "verify", "--isolation", "read-committed", u)
    m = stop.search(r.stdout + r.stderr)
    ok = r.returncode == 0 and m is not None and f"{COMMITTED + 1} records" in r.stdout
    out(ok, "obs1-verify-committed", short(m.group(0)) if m else f"exit {r.returncode}: {short(r.stdout + r.stderr)}")
    r, offs = deep(a.krec, u, "--isolation", "read-committed")
    m = stop.search(r.stderr)
    ok = offs == list(range(lso)) and m is not None
    out(ok, "obs1-dump-committed", f"offsets 0..{lso - 1}, stderr: {short(r.stderr)}" if ok
        else f"exit {r.returncode}, offsets {offs}: {short(r.stderr)}")
    r = krec(a.krec, "log", "read", u)
    lines = len(r.stdout.splitlines())
    out(r.returncode == 0 and lines == COMMITTED + OPEN, "obs1-log-read-default",
        f"{lines} records (want {COMMITTED + OPEN}, markers aside) {short(r.stderr)}")
    r = krec(a.krec, "log", "read", "--isolation", "read-committed", u)
    lines = len(r.stdout.splitlines())
    m = stop.search(r.stderr)
    out(r.returncode == 0 and lines == COMMITTED and m is not None, "obs1-log-read-committed",
        f"{lines} records (want {COMMITTED}); stderr: {short(r.stderr)}")

    # obs 2: offsets and times trim to records.
    r, offs = deep(a.krec, u, "--start", "5", "--end", "8")
    out(offs == [5, 6, 7], "obs2-offsets", f"--start 5 --end 8: records {offs} {short(r.stderr)}")
    r = krec(a.krec, "dump", "--deep", "--format", "json", u)
    ts = {}
    for line in r.stdout.splitlines():
        if line.strip():
            for rec in json.loads(line).get("records", []):
                ts[rec["offset"]] = rec.get("timestamp")
    # Kafka's rule for a time: the first offset whose timestamp is at least it. From the
    # timestamp of record 5 to the next later timestamp (the producer stamps a batch's records
    # alike, so the range may start before 5).
    t1 = ts.get(5)
    later = sorted({t for o, t in ts.items() if o > 5 and isinstance(t, int) and t > t1}) if isinstance(t1, int) else []
    if later:
        t2 = later[0]
        first = lambda t: min(o for o in ts if isinstance(ts[o], int) and ts[o] >= t)
        want = list(range(first(t1), first(t2)))
        r, offs = deep(a.krec, u, "--start", f"@{t1}", "--end", f"@{t2}")
        out(offs == want, "obs2-times", f"--start @{t1} --end @{t2}: records {offs} (want {want}) {short(r.stderr)}")
    else:
        out(False, "obs2-times", f"no two distinct timestamps from offset 5 on: {ts}")

    # obs 3: usage errors with the resolved numbers.
    for cmd in (["dump"], ["verify"], ["log", "read"]):
        r = krec(a.krec, *cmd, "--start", "100", "--end", "50", u)
        ok = r.returncode == 2 and "empty range: end 50 is not after start 100" in r.stderr
        out(ok, f"obs3-inverted-{name(cmd)}", f"exit {r.returncode}: {short(r.stderr)}")
    holds = f"offset 5000 is out of range: the partition holds [0, {hw})\n"
    texts = {}
    for cmd in (["log", "read", "--offset", "5000"], ["log", "read", "--start", "5000"], ["dump", "--start", "5000"]):
        r = krec(a.krec, *cmd, u)
        ok = r.returncode == 2 and r.stderr.endswith(holds)
        out(ok, f"obs3-outside-{name(cmd)}", f"exit {r.returncode}: {short(r.stderr)}")
        texts[" ".join(cmd)] = tail(r.stderr)

    # obs 4: counting from the end.
    r, offs = deep(a.krec, u, "--start", "-10")
    want = list(range(hw - 10, hw))
    out(offs == want, "obs4-last-10", f"--start -10: records {offs} (want {want}) {short(r.stderr)}")

    # obs 8: log info and offsets answer from the cluster.
    r = krec(a.krec, "log", "info", u)
    ok = r.returncode == 0 and "not a log directory" not in r.stderr and str(hw) in r.stdout
    out(ok, "obs8-log-info", f"exit {r.returncode}: {short(r.stdout + r.stderr)}")
    r = krec(a.krec, "log", "offsets", "--latest", u)
    ok = r.returncode == 0 and str(hw) in r.stdout
    out(ok, "obs8-log-offsets-latest", f"exit {r.returncode}: {short(r.stdout + r.stderr)}")

    if a.state:
        with open(a.state, "w") as f:
            json.dump({"hw": hw, "lso": lso, "texts": texts}, f)


def after(a):
    with open(a.state) as f:
        state = json.load(f)
    for cmd, live_text in state["texts"].items():
        r = krec(a.krec, *cmd.split(), a.after)
        text = tail(r.stderr)
        ok = r.returncode == 2 and text == live_text
        out(ok, f"obs3-file-{name(cmd.split())}",
            f"the directory says {text!r} as the live read did" if ok
            else f"exit {r.returncode}: {text!r}, live: {live_text!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp")
    ap.add_argument("--bootstrap")
    ap.add_argument("--topic", default="model-open")
    ap.add_argument("--state")
    ap.add_argument("--after", help="the topic's partition directory, once the broker stopped")
    a = ap.parse_args()
    if a.after:
        after(a)
    else:
        if not (a.java_cp and a.bootstrap):
            sys.exit("model_check.py: --java-cp and --bootstrap (or --after DIR)")
        live(a)


if __name__ == "__main__":
    main()
