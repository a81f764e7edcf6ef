#!/usr/bin/env python3
"""`krec metadata` and `krec offsets` against a real broker, live and on its stopped files.

Usage: front_door_check.py --krec KREC --java-cp CP --dir DIR [--core]

With --core (run against Kafka 3.9 by interop/run.sh, --java-cp its jars): the metadata,
offsets and groups checks only, live and offline, with a classic group (3.9 has the consumer
protocol as a preview).

Starts its own broker in DIR (interop/broker/broker.sh; stopped, and DIR deleted, at the end),
creates topics with Kafka's TopicCommand (fd-three: 3 partitions, fd-one: 1), produces with
Kafka's ProducerPerformance, then compares:

- metadata-live: `krec metadata --all --format json kafka://B` with Kafka's Admin client as
  `TopicCommand --describe` prints it: the same topics, topic ids, partitions, leaders,
  replicas and ISR;
- offsets-live: `krec offsets --all --format json kafka://B` with Kafka's GetOffsetShell for
  earliest (-2), latest (-1) and several times (the first, a middle and a future timestamp);
  the last stable offset equals latest (no transactions);
- produce-live: `krec produce` of 1,000 keyed JSON lines with headers (200 per codec), an
  explicit partition and a null key in a transaction, and `--lines` values into a
  12-partition topic (the others idempotent, without a transaction); Kafka's
  ConsoleConsumer at read_committed reads every record back (key, value, headers) and each key
  sits on the partition Kafka's ConsoleProducer (the Java producer's default partitioner) puts
  the same key in another 12-partition topic;
- export-live: `krec export` of the live 12-partition topic, read back by pyarrow, equals
  ConsoleConsumer's records at read_committed, and a second export adds nothing;
- python-ship: `krecords.ship` (the Python package) of a live partition into another topic:
  ConsoleConsumer reads the same records there, and a second call ships nothing;
- produce-batches: `krec produce --batches` of two files `krec build` wrote (zstd, lz4) to one
  partition; ConsoleConsumer reads every record back;
- produce-batches-txn: `krec produce --batches` of the broker's own partition directory of a
  topic Kafka's transactional producer wrote (every third transaction aborted): only the
  committed records are sent, and ConsoleConsumer at read_committed reads exactly them back
  (the aborted ones came back as committed records before);
- groups-members: with a ConsoleConsumer running in a classic and in a consumer-protocol
  group, `krec groups kafka://B GROUP` gives kafka-consumer-groups --describe's rows (committed,
  end, lag, consumer id, host, client id) and --describe --state's state and member count;
  groups-list: `krec groups kafka://B` lists the groups kafka-consumer-groups --list does;
- ship-group-lag: after `krec ship` of a partition into fd-ship, kafka-consumer-groups
  --describe shows the job's group at the topic's end, lag 0;
- diagnostics: against the broker's own listeners and two non-Kafka servers, each wrong
  listener named in words, exit 2, within 11 s — an HTTP server, a server that accepts and
  never answers (the 10 s default timeout), the KRaft controller's port, TLS to the plaintext
  listener, plaintext to the TLS listener, SASL to the plaintext listener, plaintext to the
  SASL listener — and a client.properties with the Java client's properties that do not apply
  to krec works with one warning each;
- after `broker.sh stop`: metadata-offline, `krec metadata --all --format json DIR/logs` gives
  the same topics, ids, partitions and replicas as the live answer just before the stop, and
  the cluster id of the live answer; offsets-offline, `krec offsets DIR/logs` the same earliest
  and latest offsets as the live answer.

Prints "PASS name: detail" / "FAIL name: detail" lines for interop/run.sh (count_results).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def out(name, ok, detail):
    print(("PASS" if ok else "FAIL") + f" {name}: {detail}", flush=True)


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... exit {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def java(cp, cls, *args):
    return sh(["java", "-cp", cp, cls, *args])


def topic_command_describe(cp, bootstrap):
    """TopicCommand --describe: {topic: {"id":.., "partitions": {p: (leader, replicas, isr)}}}."""
    text = java(cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                "--describe")
    topics = {}
    for line in text.splitlines():
        m = re.match(r"\s*Topic: (\S+)\s+TopicId: (\S+)", line)
        if m:
            topics[m.group(1)] = {"id": m.group(2), "partitions": {}}
            continue
        m = re.match(r"\s*Topic: (\S+)\s+Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S*)\s+Isr: (\S*)",
                     line)
        if m:
            ids = lambda s: [int(x) for x in s.split(",") if x]
            leader = -1 if m.group(3) == "none" else int(m.group(3))
            topics[m.group(1)]["partitions"][int(m.group(2))] = (leader, ids(m.group(4)), ids(m.group(5)))
    return topics


def krec_topics(j, with_leaders=True):
    topics = {}
    for t in j["topics"]:
        parts = {}
        for p in t["partitions"]:
            parts[p["partition"]] = (p["leader"], p["replicas"], p["isr"]) if with_leaders else p["replicas"]
        topics[t["name"]] = {"id": t["id"], "partitions": parts}
    return topics


def get_offsets(cp, bootstrap, spec):
    text = java(cp, "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap,
                "--time", str(spec))
    res = {}
    for line in text.splitlines():
        m = re.match(r"(.+):(\d+):(-?\d*)$", line.strip())
        if m:
            res[(m.group(1), int(m.group(2)))] = int(m.group(3)) if m.group(3) not in ("", "-1") else None
    return res


def krec_offsets(krec, source, time_ms=None):
    cmd = [krec, "offsets", source, "--all", "--format", "json"]
    if time_ms is not None:
        cmd += ["--time", str(time_ms)]
    return {(l["topic"], l["partition"]): l for l in map(json.loads, sh(cmd).splitlines())}


def consume(cp, bootstrap, group, protocol, topic, n):
    java(cp, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap,
         "--topic", topic, "--group", group, "--from-beginning", "--max-messages", str(n),
         "--consumer-property", f"group.protocol={protocol}",
         "--consumer-property", "enable.auto.commit=true",
         "--consumer-property", "auto.commit.interval.ms=100",
         "--consumer-property", "max.poll.records=50")


def consumer_groups_describe(cp, bootstrap, group):
    """kafka-consumer-groups --describe: {(topic, partition): (current, end, lag)}."""
    text = java(cp, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", bootstrap, "--describe", "--group", group)
    res = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 6 and f[0] == group and f[2].isdigit():
            num = lambda x: None if x == "-" else int(x)
            res[(f[1], int(f[2]))] = (num(f[3]), num(f[4]), num(f[5]))
    return res


def consumer_groups_members(cp, bootstrap, group):
    """kafka-consumer-groups --describe with members running:
    {(topic, partition): (current, end, lag, consumer_id, host, client_id)}, and its --state
    line's (state, members)."""
    text = java(cp, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", bootstrap, "--describe", "--group", group)
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0] == group and f[2].isdigit():
            num = lambda x: None if x == "-" else int(x)
            rows[(f[1], int(f[2]))] = (num(f[3]), num(f[4]), num(f[5]), f[6], f[7], f[8])
    text = java(cp, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", bootstrap, "--describe", "--group", group, "--state")
    state = None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == group and f[-1].isdigit():
            state = (f[-2], int(f[-1]))
    return rows, state


def check_live_members(a, bootstrap):
    """krec groups with consumers running (classic and consumer protocol): every row's member,
    host and client id, and the group's state and member count, equal kafka-consumer-groups."""
    groups = {"fd-live-classic": "classic", "fd-live-consumer": "consumer"}
    procs = []
    try:
        for g, protocol in groups.items():
            procs.append(subprocess.Popen(
                ["java", "-cp", a.java_cp, "org.apache.kafka.tools.consumer.ConsoleConsumer",
                 "--bootstrap-server", bootstrap, "--topic", "fd-three", "--group", g,
                 "--from-beginning", "--timeout-ms", "120000",
                 "--consumer-property", f"group.protocol={protocol}",
                 "--consumer-property", f"client.id={g}-client",
                 "--consumer-property", "auto.commit.interval.ms=100"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for g in groups:
            deadline = time.time() + 60
            theirs, state = {}, None
            while time.time() < deadline:
                theirs, state = consumer_groups_members(a.java_cp, bootstrap, g)
                # Assigned, everything consumed and committed.
                if theirs and state and state[0] == "Stable" and all(
                        r[3] != "-" and r[2] == 0 for r in theirs.values()):
                    break
                time.sleep(1)
            mine_json = [json.loads(l) for l in
                         sh([a.krec, "groups", f"kafka://{bootstrap}", g, "--format", "json"]).splitlines()]
            mine = {}
            mine_state = None
            for grp in mine_json:
                mine_state = (grp.get("state"), len(grp.get("members", [])))
                for o in grp["offsets"]:
                    dash = lambda v: "-" if v is None else v
                    mine[(o["topic"], o["partition"])] = (
                        o["committed"], o["end"], o["lag"], dash(o["member_id"]), dash(o["host"]),
                        dash(o["client_id"]))
            ok = mine == theirs and mine_state == state and len(theirs) >= 3
            out(f"groups-members/{groups[g]}", ok,
                f"{len(theirs)} partitions with member, host and client id, state {state[0]} with "
                f"{state[1]} member(s): equal kafka-consumer-groups --describe [--state]"
                if ok else f"krec {mine} {mine_state} != kafka-consumer-groups {theirs} {state}")
        listed = sh([a.krec, "groups", f"kafka://{bootstrap}", "--format", "json"]).splitlines()
        names = {json.loads(l)["group"] for l in listed}
        theirs_list = set(java(a.java_cp, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                               "--bootstrap-server", bootstrap, "--list").split())
        out("groups-list", names == theirs_list and set(groups) <= names,
            f"{len(names)} groups, as kafka-consumer-groups --list"
            if names == theirs_list else f"krec {sorted(names)} != kafka-consumer-groups {sorted(theirs_list)}")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def console_consume(cp, bootstrap, topic, n):
    """ConsoleConsumer at read_committed: [(partition, headers, key, value)] of n records."""
    text = java(cp, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server",
                bootstrap, "--topic", topic, "--from-beginning", "--max-messages", str(n),
                "--timeout-ms", "60000", "--isolation-level", "read_committed",
                "--property", "print.partition=true", "--property", "print.headers=true",
                "--property", "print.key=true")
    res = []
    for line in text.splitlines():
        f = line.split("\t")
        if len(f) == 4 and f[0].startswith("Partition:"):
            res.append((int(f[0].split(":")[1]), f[1], f[2], f[3]))
    return res


def krec_produce(a, target, lines, *args):
    r = subprocess.run([a.krec, "produce", target, "--format", "json", *args], input=lines,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"krec produce {' '.join(args)} exit {r.returncode}: {r.stderr}")
    return sum(json.loads(l)["records"] for l in r.stdout.splitlines())


def check_produce_batches(a, bootstrap, work):
    """`krec produce --batches`: batch files `krec build` wrote (zstd and lz4, headers), sent as
    they are to one partition; ConsoleConsumer reads every record back."""
    java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
         "--create", "--topic", "fd-batches", "--partitions", "2", "--replication-factor", "1")
    files, want = [], []
    for i, codec in enumerate(("zstd:3", "lz4")):
        lines = "".join(json.dumps({"key": f"k{i}-{j}", "value": f"b{i}-{j}",
                                    "headers": [{"key": "h", "value": str(j)}],
                                    "timestamp": 1_764_000_000_000 + j}) + "\n"
                        for j in range(150))
        want += [(1, f"h:{j}", f"k{i}-{j}", f"b{i}-{j}") for j in range(150)]
        path = os.path.join(work, f"batches-{i}.bin")
        r = subprocess.run([a.krec, "build", "--compression", codec, "--records-per-batch", "40",
                            "--output", path], input=lines, capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"krec build exit {r.returncode}: {r.stderr}")
        files.append(path)
    args = [x for f in files for x in ("--batches", f)]
    written = krec_produce(a, f"kafka://{bootstrap}/fd-batches/1", "", *args)
    got = console_consume(a.java_cp, bootstrap, "fd-batches", len(want))
    ok = written == len(want) and sorted(got) == sorted(want)
    out("produce-batches", ok,
        f"{written} records in {len(files)} batch files (zstd, lz4) sent as they are to "
        "partition 1, read back by ConsoleConsumer" if ok else
        f"written {written}, read {len(got)}: first differences "
        f"{[x for x in got if x not in want][:3]} / {[x for x in want if x not in got][:3]}")


def check_produce_batches_txn(a, bootstrap):
    """`krec produce --batches` of a partition directory with aborted transactions sends what a
    read_committed consumer reads of it, nothing of the aborted transactions."""
    for name in ("fd-txn", "fd-txn-copy"):
        java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
             "--create", "--topic", name, "--partitions", "1", "--replication-factor", "1")
    # 6 transactions of 200 records, the 2nd and 5th aborted: 800 committed, 400 aborted.
    said = java(a.java_cp, "dev.krecords.interop.AbortedTransactions", bootstrap, "1200", "fd-txn")
    # The markers are written after commitTransaction returns: wait until none is open.
    for _ in range(60):
        o = krec_offsets(a.krec, f"kafka://{bootstrap}/fd-txn")[("fd-txn", 0)]
        if o["last_stable"] == o["latest"]:
            break
        time.sleep(0.5)
    src = os.path.join(a.dir, "logs", "fd-txn-0")
    written = krec_produce(a, f"kafka://{bootstrap}/fd-txn-copy/0", "", "--batches", src)
    got = console_consume(a.java_cp, bootstrap, "fd-txn-copy", 800)
    values = [v.split("-")[2] + "-" + v.split("-")[3][:9] for (_, _, _, v) in got]
    committed = [v for v in values if v.endswith("-committed")]
    ok = (written == 800 and len(got) == 800 and len(committed) == 800
          and "committed=800 aborted=400" in said)
    out("produce-batches-txn", ok,
        f"{said.strip()}; krec produce --batches of fd-txn-0 sent {written}, ConsoleConsumer "
        "read 800 committed back" if ok else
        f"{said.strip()}; sent {written}, read {len(got)}, {len(committed)} committed, "
        f"first others {[v for v in values if not v.endswith('-committed')][:3]}")


def check_produce(a, bootstrap):
    for name in ("fd-prod", "fd-prod-java"):
        java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
             "--create", "--topic", name, "--partitions", "12", "--replication-factor", "1")
    keys = [f"user-{i}" for i in range(1000)]
    target = f"kafka://{bootstrap}/fd-prod"
    written = 0
    # 200 keys per codec, each run by an idempotent producer (the default); the explicit
    # partition and null key in one transaction (--transactional-id).
    for i, codec in enumerate(("none", "gzip", "snappy", "lz4", "zstd:3")):
        lines = "".join(json.dumps({"key": k, "value": f"v-{k}",
                                    "headers": [{"key": "h", "value": k}]}) + "\n"
                        for k in keys[i * 200:(i + 1) * 200])
        written += krec_produce(a, target, lines, "--compression", codec)
    # An explicit partition, a null key, and --lines values to the URL's partition.
    written += krec_produce(a, target, '{"partition":5,"key":"pinned","value":"explicit"}\n'
                            '{"value":"no key"}\n', "--transactional-id", "fd-prod-txn")
    written += krec_produce(a, f"{target}/3", "plain one\nplain two\n", "--lines")
    sh_in = subprocess.run(["java", "-cp", a.java_cp, "org.apache.kafka.tools.ConsoleProducer",
                            "--bootstrap-server", bootstrap, "--topic", "fd-prod-java",
                            "--property", "parse.key=true", "--property", "key.separator=:"],
                           input="".join(f"{k}:x\n" for k in keys), capture_output=True,
                           text=True, timeout=300)
    if sh_in.returncode != 0:
        raise RuntimeError(f"ConsoleProducer exit {sh_in.returncode}: {sh_in.stderr[-2000:]}")
    ours = console_consume(a.java_cp, bootstrap, "fd-prod", len(keys) + 4)
    theirs = {k: p for p, _, k, _ in console_consume(a.java_cp, bootstrap, "fd-prod-java", len(keys))}
    keyed = {k: (p, h, v) for p, h, k, v in ours if k not in ("null", "pinned")}
    rest = sorted((p, k, v) for p, _, k, v in ours if k in ("null", "pinned"))
    bad = [k for k in keys if keyed.get(k) != (theirs.get(k), f"h:{k}", f"v-{k}")]
    want_rest = [(3, "null", "plain one"), (3, "null", "plain two"), (5, "pinned", "explicit")]
    rest_ok = len(rest) == 4 and [r for r in rest if r[2] != "no key"] == want_rest
    ok = not bad and written == len(keys) + 4 and len(ours) == len(keys) + 4 and rest_ok
    check_python_live(a, bootstrap, ours)
    check_export_live(a, bootstrap, ours)
    check_python_ship(a, bootstrap, ours)
    out("produce-live", ok,
        f"{len(keys)} keys over 12 partitions (every codec, headers, idempotent) on the "
        "Java partitioner's partitions, an explicit partition, a null key and --lines values, "
        "read back by ConsoleConsumer at read_committed" if ok else
        f"written {written}, read {len(ours)}, wrong keys {bad[:5]} (ours {[keyed.get(k) for k in bad[:5]]}, "
        f"java {[theirs.get(k) for k in bad[:5]]}), others {rest}")


PY_READ = """
import json, sys, krecords
t = krecords.read_table(sys.argv[1], key_format="string", value_format="string",
                        columns=["partition", "key", "value", "headers"])
for r in t.to_pylist():
    print(json.dumps([r["partition"], r["key"], r["value"],
                      [[h["key"], h["value"].decode()] for h in r["headers"] or []]]))
"""


def check_python_live(a, bootstrap, consumed):
    """The Python package reads the live topic (kafka://) to the rows ConsoleConsumer got."""
    py = os.path.join(HERE, "..", "..", "python", ".venv", "bin", "python")
    if not os.path.exists(py) or subprocess.run([py, "-c", "import krecords"],
                                                capture_output=True).returncode != 0:
        print("SKIP python-live: python/.venv has no krecords package (python/test.sh builds it)")
        return
    r = subprocess.run([py, "-c", PY_READ, f"kafka://{bootstrap}/fd-prod"], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        out("python-live", False, f"read_table(kafka://) exited {r.returncode}: {r.stderr[-500:]}")
        return
    rows = console_rows(r.stdout)
    ok = sorted(rows) == sorted(consumed) and len(rows) > 0
    out("python-live", ok,
        f"krecords.read_table('kafka://.../fd-prod'): {len(rows)} rows equal to ConsoleConsumer's at read_committed"
        if ok else f"{len(rows)} rows, ConsoleConsumer {len(consumed)}; first of ours {sorted(rows)[:2]}, "
                   f"theirs {sorted(consumed)[:2]}")


PY_DATASET = """
import json, sys, pyarrow.dataset as ds
t = ds.dataset(sys.argv[1], format="parquet", partitioning="hive").to_table(
    columns=["partition", "key", "value", "headers"])
for r in t.to_pylist():
    print(json.dumps([r["partition"], None if r["key"] is None else r["key"].decode(),
                      r["value"].decode(), [[h["key"], h["value"].decode()] for h in r["headers"] or []]]))
"""


def console_rows(text):
    rows = []
    for line in text.splitlines():
        p, k, v, hs = json.loads(line)
        headers = ",".join(f"{hk}:{hv}" for hk, hv in hs) if hs else "NO_HEADERS"
        rows.append((p, headers, "null" if k is None else k, v))
    return rows


def check_export_live(a, bootstrap, consumed):
    """`krec export` of the live topic, read back by pyarrow, equals what ConsoleConsumer got;
    a second export adds nothing."""
    py = os.path.join(HERE, "..", "..", "python", ".venv", "bin", "python")
    if not os.path.exists(py) or subprocess.run([py, "-c", "import pyarrow"],
                                                capture_output=True).returncode != 0:
        print("SKIP export-live: python/.venv has no pyarrow (python/test.sh makes it)")
        return
    out_dir = os.path.join(a.dir, "export-live")
    runs = []
    for _ in range(2):
        r = subprocess.run([a.krec, "export", f"kafka://{bootstrap}/fd-prod", "-o", out_dir,
                            "--format-report", "json"], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            out("export-live", False, f"krec export kafka:// exited {r.returncode}: {r.stderr[-500:]}")
            return
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]).get("records"))
    r = subprocess.run([py, "-c", PY_DATASET, out_dir], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        out("export-live", False, f"pyarrow could not read the dataset: {r.stderr[-500:]}")
        return
    rows = console_rows(r.stdout)
    ok = sorted(rows) == sorted(consumed) and len(rows) > 0 and runs[1] == 0
    out("export-live", ok,
        f"krec export kafka://.../fd-prod (12 partitions): {len(rows)} rows read by pyarrow equal "
        f"ConsoleConsumer's at read_committed; a second export added {runs[1]} records"
        if ok else f"{len(rows)} rows, ConsoleConsumer {len(consumed)}; exports wrote {runs}; "
                   f"first of ours {sorted(rows)[:2]}, theirs {sorted(consumed)[:2]}")


PY_SHIP = """
import json, sys, krecords
reports = [krecords.ship(sys.argv[1], sys.argv[2], job="py") for _ in range(2)]
print(json.dumps([r["partitions"][0]["records"] for r in reports]))
"""


def check_python_ship(a, bootstrap, consumed):
    """`krecords.ship` of a live partition into another topic: what ConsoleConsumer reads
    there equals the source partition's records, and a second call ships nothing."""
    py = os.path.join(HERE, "..", "..", "python", ".venv", "bin", "python")
    if not os.path.exists(py) or subprocess.run([py, "-c", "import krecords"],
                                                capture_output=True).returncode != 0:
        print("SKIP python-ship: python/.venv has no krecords package (python/test.sh builds it)")
        return
    java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
         "--create", "--topic", "fd-pyship", "--partitions", "1", "--replication-factor", "1")
    r = subprocess.run([py, "-c", PY_SHIP, f"kafka://{bootstrap}/fd-prod/5",
                        f"kafka://{bootstrap}/fd-pyship/0"], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        out("python-ship", False, f"krecords.ship exited {r.returncode}: {r.stderr[-500:]}")
        return
    counts = json.loads(r.stdout)
    want = sorted((0, h, k, v) for p, h, k, v in consumed if p == 5)
    got = sorted(console_consume(a.java_cp, bootstrap, "fd-pyship", len(want)))
    ok = got == want and counts == [len(want), 0] and want
    out("python-ship", ok,
        f"krecords.ship of fd-prod/5 ({len(want)} records) into fd-pyship: ConsoleConsumer reads "
        f"the same records; a second call shipped {counts[1]}"
        if ok else f"shipped {counts}, read {len(got)}, wanted {len(want)}: {got[:2]} vs {want[:2]}")


def check_ship_lag(a, bootstrap):
    """After a complete `krec ship`, kafka-consumer-groups shows the job's group with lag 0."""
    java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
         "--create", "--topic", "fd-ship", "--partitions", "1", "--replication-factor", "1")
    r = subprocess.run([a.krec, "ship", f"kafka://{bootstrap}/fd-prod/3",
                        f"kafka://{bootstrap}/fd-ship/0", "--job", "fd", "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"krec ship exit {r.returncode}: {r.stderr}")
    shipped = json.loads(r.stdout)["partitions"][0]["records"]
    described = consumer_groups_describe(a.java_cp, bootstrap, "krec-ship-fd")
    got = described.get(("fd-ship", 0))
    ok = shipped > 0 and got is not None and got[2] == 0 and got[0] == got[1]
    out("ship-group-lag", ok,
        f"{shipped} records shipped; kafka-consumer-groups: current {got[0]}, end {got[1]}, lag 0"
        if ok else f"shipped {shipped}, kafka-consumer-groups {described}")


def check_diagnostics(a, bootstrap):
    import http.server
    import socket
    import threading
    sasl = open(os.path.join(a.dir, "bootstrap-sasl")).read().strip()
    ssl = open(os.path.join(a.dir, "bootstrap-ssl")).read().strip()
    props = open(os.path.join(a.dir, "server.properties")).read()
    controller = re.search(r"CONTROLLER://([0-9.]+:[0-9]+)", props).group(1)
    # An HTTP server as nginx behaves: a request that does not start with a method is answered
    # 400 at once. (Python's http.server waits for a whole line first: that is the silent case.)
    class Http400(http.server.BaseHTTPRequestHandler):
        def handle(self):
            self.request.recv(4096)
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n"
                                 b"Content-Length: 0\r\nConnection: close\r\n\r\n")

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Http400)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    cases = [
        ("http", f"127.0.0.1:{httpd.server_address[1]}", [], "looks like an HTTP server, not a Kafka listener"),
        ("silent", f"127.0.0.1:{silent.getsockname()[1]}", [], "timed out after 10s"),
        ("controller", controller, [], "KRaft controller listener; use a broker's address"),
        ("tls-to-plaintext", bootstrap, ["-X", "security.protocol=SSL"], "the listener probably speaks plaintext"),
        ("plaintext-to-tls", ssl, [], "it speaks TLS"),
        ("sasl-to-plaintext", bootstrap, ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN",
                                          "-X", "sasl.username=krec", "-X", "sasl.password=krec-secret"],
         "this listener takes no SASL"),
        ("plaintext-to-sasl", sasl, [], "this listener probably expects SASL"),
    ]
    for name, addr, extra, needle in cases:
        t = time.time()
        r = subprocess.run([a.krec, "metadata", f"kafka://{addr}", *extra], capture_output=True,
                           text=True, timeout=60)
        took = time.time() - t
        ok = r.returncode == 2 and needle in r.stderr and took < 11
        out(f"diagnose-{name}", ok, f"exit 2 in {took:.1f} s: {r.stderr.strip()[:300]}" if ok else
            f"exit {r.returncode} in {took:.1f} s, wanted {needle!r}: {r.stderr.strip()[:500]}")
    httpd.shutdown()
    silent.close()
    path = os.path.join(a.dir, "client.properties")
    ignored = ["group.id=g", "auto.offset.reset=earliest", "debug=all",
               "message.max.bytes=1000000", "enable.ssl.certificate.verification=true"]
    with open(path, "w") as f:
        # request.timeout.ms applies (the Java client's name for krec's request timeout).
        f.write("\n".join([f"bootstrap.servers={bootstrap}", "request.timeout.ms=30000", *ignored]) + "\n")
    r = subprocess.run([a.krec, "metadata", f"kafka://{bootstrap}", "-F", path, "--format", "json"],
                       capture_output=True, text=True, timeout=60)
    warned = [p.split("=")[0] for p in ignored if p.split("=")[0] in r.stderr]
    ok = r.returncode == 0 and len(warned) == len(ignored) and json.loads(r.stdout)["brokers"]
    out("diagnose-client-properties", ok,
        f"a client.properties with request.timeout.ms and {len(ignored)} properties that do not apply works, one warning each"
        if ok else f"exit {r.returncode}, warned {warned}: {r.stderr[-500:]}")


def krec_groups(krec, source, groups):
    out_ = sh([krec, "groups", source, *groups, "--format", "json"])
    res = {}
    for g in map(json.loads, out_.splitlines()):
        for o in g["offsets"]:
            res[(g["group"], o["topic"], o["partition"])] = (o["committed"], o["end"], o["lag"])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--core", action="store_true",
                    help="metadata, offsets and classic groups only, live and offline (for an older "
                         "broker: --java-cp with its jars)")
    a = ap.parse_args()
    broker = os.path.join(HERE, "broker.sh")
    env = dict(os.environ, KAFKA_CP=a.java_cp)
    bootstrap = sh(["bash", broker, "start", a.dir], env=env).strip().splitlines()[-1]
    stopped = False
    try:
        for name, n in (("fd-three", 3), ("fd-one", 1)):
            java(a.java_cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                 "--create", "--topic", name, "--partitions", str(n), "--replication-factor", "1")
        t0 = int(time.time() * 1000)
        for name, count in (("fd-three", 3000), ("fd-one", 500)):
            java(a.java_cp, "org.apache.kafka.tools.ProducerPerformance", "--topic", name,
                 "--num-records", str(count), "--record-size", "100", "--throughput", "2000",
                 "--producer-props", f"bootstrap.servers={bootstrap}", "batch.size=4096",
                 "linger.ms=0")
        t_mid = t0 + (int(time.time() * 1000) - t0) // 2
        # The cluster settles (the producers' metadata) before the comparisons.
        time.sleep(1)
        url = f"kafka://{bootstrap}"
        live = json.loads(sh([a.krec, "metadata", url, "--all", "--format", "json"]))
        java_topics = topic_command_describe(a.java_cp, bootstrap)
        mine = krec_topics(live)
        expected = {"fd-three", "fd-one"}
        out("metadata-live", mine == java_topics and expected <= set(mine),
            f"{len(mine)} topics, {sum(len(t['partitions']) for t in mine.values())} partitions"
            + ("" if mine == java_topics else f"; krec {mine} != Admin {java_topics}"))
        out("metadata-live-brokers", [b["node_id"] for b in live["brokers"]] == [1]
            and live["cluster_id"] == "a3JlY29yZHMtaW50ZXJvcA",
            f"brokers {live['brokers']}, cluster id {live['cluster_id']}")

        live_offsets = krec_offsets(a.krec, url)
        bad = []
        for spec, field in ((-2, "earliest"), (-1, "latest")):
            theirs = get_offsets(a.java_cp, bootstrap, spec)
            if len(theirs) < 4:
                bad.append((spec, "GetOffsetShell listed", theirs))
            for k, v in theirs.items():
                if live_offsets.get(k, {}).get(field) != v:
                    bad.append((spec, k, live_offsets.get(k), v))
        for k, l in live_offsets.items():
            if l["last_stable"] != l["latest"]:
                bad.append(("lso", k, l))
        for t in (t0 - 60_000, t_mid, int(time.time() * 1000) + 3_600_000):
            theirs = get_offsets(a.java_cp, bootstrap, t)
            mine_t = krec_offsets(a.krec, url, t)
            for k, v in theirs.items():
                if mine_t.get(k, {}).get("at_time") != v:
                    bad.append((t, k, mine_t.get(k), v))
        out("offsets-live", not bad,
            f"{len(live_offsets)} partitions x earliest, latest, stable, 3 times equal GetOffsetShell"
            if not bad else f"differences: {bad[:5]}")

        groups = {"fd-classic": "classic", "fd-consumer": "consumer"}
        if a.core:
            # Kafka 3.9 has the consumer protocol as a preview only.
            del groups["fd-consumer"]
        for g, protocol in groups.items():
            consume(a.java_cp, bootstrap, g, protocol, "fd-three", 1000)
        theirs = {}
        for g in groups:
            for (t, p), v in consumer_groups_describe(a.java_cp, bootstrap, g).items():
                theirs[(g, t, p)] = v
        live_groups = krec_groups(a.krec, url, list(groups))
        committed = {k: v[0] for k, v in live_groups.items()}
        out("groups-live", live_groups == theirs and len(theirs) >= 2,
            f"{len(theirs)} group partitions ({' and '.join(groups.values())} protocol): committed, end, lag equal kafka-consumer-groups"
            if live_groups == theirs else f"krec {live_groups} != kafka-consumer-groups {theirs}")
        if not a.core:
            check_live_members(a, bootstrap)
            check_produce_batches(a, bootstrap, a.dir)
            check_produce_batches_txn(a, bootstrap)
            check_produce(a, bootstrap)
            check_ship_lag(a, bootstrap)
            check_diagnostics(a, bootstrap)
        # The live answer just before the stop (__consumer_offsets exists now).
        live = json.loads(sh([a.krec, "metadata", url, "--all", "--format", "json"]))

        sh(["bash", broker, "stop", a.dir], env=env)
        stopped = True
        root = os.path.join(a.dir, "logs")
        off = json.loads(sh([a.krec, "metadata", root, "--all", "--format", "json"]))
        live_replicas = krec_topics(live, with_leaders=False)
        off_replicas = krec_topics(off, with_leaders=False)
        out("metadata-offline", off_replicas == live_replicas and expected <= set(off_replicas)
            and off["cluster_id"] == live["cluster_id"],
            f"{len(off_replicas)} topics with the live ids, partitions and replicas; controller {off['controller']}"
            if off_replicas == live_replicas else f"offline {off_replicas} != live {live_replicas}")
        off_offsets = krec_offsets(a.krec, root)
        diffs = [(k, l, off_offsets.get(k)) for k, l in live_offsets.items()
                 if off_offsets.get(k) is None
                 or (off_offsets[k]["earliest"], off_offsets[k]["latest"]) != (l["earliest"], l["latest"])]
        out("offsets-offline", not diffs,
            f"{len(off_offsets)} partitions: the files' offsets equal the live ones" if not diffs
            else f"differences: {diffs[:5]}")
        off_groups = krec_groups(a.krec, root, [])
        off_committed = {k: v[0] for k, v in off_groups.items() if k[0] in groups}
        lag_ok = all(v[2] == theirs[k][2] for k, v in off_groups.items() if k in theirs)
        out("groups-offline", off_committed == committed and lag_ok and committed,
            f"{len(off_committed)} group partitions: the same committed offsets and lag as live"
            if off_committed == committed and lag_ok else f"offline {off_groups} != live {live_groups}")
    except Exception as e:  # a step that cannot run is one failure, not a traceback
        out("front-door", False, str(e))
    finally:
        if not stopped:
            subprocess.run(["bash", broker, "stop", a.dir], env=env, capture_output=True)
        shutil.rmtree(a.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
