#!/usr/bin/env python3
"""A Kafka 4.4 broker with tiered storage on (Aiven's plugin, built from third_party/ by
interop/tiered/pom.xml), its remote tier read without the broker, against Kafka's Java consumer.

    tiered_check.py --krec KREC --java-cp CP --plugin DIR --checker BIN --save DIR --name NAME
                    --backend fs|s3 --compression on|off --encryption on|off [--python PY] CODEC...

One run: (S3: starts `moto_server` from the interop venv on a free port and creates the bucket with
boto3); starts a single-node broker (interop/broker/broker.sh, BROKER_EXTRA_PROPS turning tiered
storage on with the plugin's chunk compression and encryption as asked, 64 KiB chunks); writes one
topic "tiered-CODEC" per CODEC with Kafka's Java producers (dev.krecords.interop.TieredScenario:
transactions committed and aborted, headers, ~2.6 MiB of 1 KiB records, 1 MiB segments,
local.retention.bytes=1); waits until every closed segment has been uploaded and deleted locally
(Kafka renames them *.deleted; file.delete.delay.ms keeps them an hour, and they are moved to
SAVE/NAME/local-copies/ as the byte-for-byte reference of what was uploaded); reads every topic from
the beginning with the Java consumer, read_committed and read_uncommitted, through the broker (so
through the plugin) into SAVE/NAME/consumer.json; stops the broker; saves the storage root (S3:
every object of the bucket, downloaded under the same keys) as SAVE/NAME/storage and the broker's
log dirs (with __remote_log_metadata-0) as SAVE/NAME/logs.

Checks, printed as PASS/FAIL/SKIP lines:
  - krecords-remote (the library, through its check_remote_tier example, BIN) lists and reads every
    segment of the saved remote tier: valid CRCs, contiguous offsets, manifest metadata agreeing,
    each .log/.index/.timeindex equal to the broker's local copy byte for byte;
  - the remote tier's records (the library's export of the original .log files, dumped by
    `krec dump --deep --format json`) followed by the local log's from the remote end offset on
    equal the consumers' records field by field (read_uncommitted: every non-control record;
    read_committed: less the aborted transactions' records);
  - the krec CLI contract of issue 32 (`krec dump --deep --format json LOCATION` of
    file:///ROOT/PREFIX or s3://BUCKET/PREFIX, then `krec verify --remote LOCATION LOGS`): SKIP
    with the reason while `krec dump` does not know the scheme.
Standard library only (boto3 is imported from --python's venv in a child process). Exit 0.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PREFIX = "tiered/"
BUCKET = "krecords-tiered"
FIELDS = ("offset", "timestamp", "timestamp_type", "key", "value", "headers")


def report(status, name, detail):
    print("%s %s: %s" % (status, name, detail), flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


PHASES = []


def run(cmd, log, env=None, timeout=300):
    """Runs cmd with its output appended to log; notes its duration for the TIMING line."""
    started = time.time()
    with open(log, "ab") as f:
        f.write(("$ " + " ".join(map(str, cmd)) + "\n").encode())
        f.flush()
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=timeout).returncode
    label = " ".join(Path(str(c)).name for c in cmd[:4] if not str(c).startswith("-") and "\n" not in str(c))
    PHASES.append("%s %.1fs" % (label[:60], time.time() - started))
    return rc


def tail(path, n=15):
    try:
        return " | ".join(Path(path).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


S3_HELPER = r"""
import sys, boto3
from pathlib import Path
op, endpoint, bucket = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="krec", aws_secret_access_key="krec-secret")
if op == "create":
    s3.create_bucket(Bucket=bucket)
else:
    out = Path(sys.argv[4])
    n = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", []):
            p = out / o["Key"]
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read())
            n += 1
    print(n)
"""


def start_moto(python, work):
    port = free_port()
    moto = Path(python).parent / "moto_server"
    log = open(work / "moto.log", "wb")
    proc = subprocess.Popen([str(moto), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, "http://127.0.0.1:%d" % port
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("moto_server did not listen: " + tail(work / "moto.log"))


def tiering_props(plugin):
    """The server properties that make a single broker tier within seconds through the plugin
    in the folder `plugin` (64 KiB chunks); tiered_damage.py's kill scenario uses them too."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.manager.task.interval.ms": "500",
        "log.initial.task.delay.ms": "500",
        "log.retention.check.interval.ms": "1000",
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
        "rlmm.config.remote.log.metadata.topic.num.partitions": "1",
        "remote.log.storage.manager.class.path": str(Path(plugin).resolve()) + "/*",
        "remote.log.storage.manager.class.name": "io.aiven.kafka.tieredstorage.RemoteStorageManager",
        "rsm.config.chunk.size": "65536",
    }


def broker_props(a, work, endpoint):
    props = {
        **tiering_props(a.plugin),
        # Without a chunk cache every remote fetch GETs its chunks again (the consumers of one run
        # made ~3,800 GETs of 64 KiB chunks for 16 MiB of data from moto): a 64 MiB memory cache.
        "rsm.config.fetch.chunk.cache.class": "io.aiven.kafka.tieredstorage.fetch.cache.MemoryChunkCache",
        "rsm.config.fetch.chunk.cache.size": str(64 << 20),
        "rsm.config.key.prefix": PREFIX,
        "rsm.config.compression.enabled": "true" if a.compression == "on" else "false",
        "rsm.config.encryption.enabled": "true" if a.encryption == "on" else "false",
    }
    if a.encryption == "on":
        props.update({
            "rsm.config.encryption.key.pair.id": "k1",
            "rsm.config.encryption.key.pairs": "k1",
            "rsm.config.encryption.key.pairs.k1.public.key.file": str(work / "k1-public.pem"),
            "rsm.config.encryption.key.pairs.k1.private.key.file": str(work / "k1-private.pem"),
        })
    if a.backend == "fs":
        props.update({
            "rsm.config.storage.backend.class": "io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage",
            "rsm.config.storage.root": str(work / "storage"),
        })
    else:
        props.update({
            "rsm.config.storage.backend.class": "io.aiven.kafka.tieredstorage.storage.s3.S3Storage",
            "rsm.config.storage.s3.endpoint.url": endpoint,
            "rsm.config.storage.s3.bucket.name": BUCKET,
            "rsm.config.storage.s3.region": "us-east-1",
            "rsm.config.storage.s3.path.style.access.enabled": "true",
            "rsm.config.storage.aws.access.key.id": "krec",
            "rsm.config.storage.aws.secret.access.key": "krec-secret",
        })
    return " ".join("%s=%s" % kv for kv in props.items())


def wait_tiered(logs, topics, timeout=90):
    """Until every topic's directory holds one live .log (the active segment) and at least two
    segments were uploaded and deleted locally (*.log.deleted)."""
    deadline = time.time() + timeout
    state = {}
    while time.time() < deadline:
        state = {}
        for t in topics:
            d = logs / (t + "-0")
            live = sorted(p.name for p in d.glob("*.log"))
            gone = sorted(p.name for p in d.glob("*.log.deleted"))
            state[t] = (len(live), len(gone))
        if all(l == 1 and g >= 2 for l, g in state.values()):
            return True, state
        time.sleep(0.5)
    return False, state


def capture_deleted(logs, topics, dst):
    for t in topics:
        d = logs / (t + "-0")
        out = dst / (t + "-0")
        out.mkdir(parents=True, exist_ok=True)
        for p in d.glob("*.deleted"):
            shutil.move(str(p), str(out / p.name[: -len(".deleted")]))


def krec_json(krec, args, timeout=300, env=None):
    p = subprocess.run([krec] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
    entries = []
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        if line.strip():
            try:
                entries.append(json.loads(line))
            except ValueError:
                pass
    return p.returncode, entries, p.stderr.decode("utf-8", "replace").strip()


def dump_records(entries, from_offset=None):
    """(read_uncommitted records, read_committed records, errors) of a krec dump --deep stream:
    non-control records in log order; read_committed drops the records of transactions that an
    ABORT marker ended."""
    errors = []
    ru = []
    open_txn = {}  # producer id -> indexes into ru of its open transaction's records
    aborted = set()
    for e in entries:
        if "error" in e:
            errors.append("%s at %s: %s" % (e.get("file"), e.get("position"), e["error"]))
            continue
        if e.get("control"):
            for r in e.get("records") or []:
                c = r.get("control") or {}
                idx = open_txn.pop(e.get("producer_id"), [])
                if c.get("type") == "abort":
                    aborted.update(idx)
            continue
        for r in e.get("records") or []:
            if from_offset is not None and r["offset"] < from_offset:
                continue
            if e.get("transactional"):
                open_txn.setdefault(e.get("producer_id"), []).append(len(ru))
            ru.append({"offset": r["offset"], "timestamp": r["timestamp"], "timestamp_type": e["timestamp_type"],
                       "key": r["key"], "value": r["value"], "headers": r["headers"]})
    rc = [r for i, r in enumerate(ru) if i not in aborted]
    return ru, rc, errors


def compare(name, ours, consumer, what):
    theirs = [{k: r[k] for k in FIELDS} for r in consumer]
    if ours == theirs:
        report("PASS", name, "%d records equal to the %s consumer's, field by field (%s)"
               % (len(theirs), what, ", ".join(FIELDS)))
        return
    p = []
    if len(ours) != len(theirs):
        p.append("krec %d records, the consumer %d" % (len(ours), len(theirs)))
    for x, y in zip(theirs, ours):
        if x != y:
            diff = [k for k in x if x[k] != y.get(k)]
            p.append("offset %s: %s differ" % (x["offset"], ",".join(diff)))
            if len(p) > 4:
                break
    report("FAIL", name, "; ".join(p))


def check_two_tiers(a, run_name, topics, remote_entries_by_topic, logs, ends, consumer, source):
    for t in topics:
        part = t + "-0"
        remote = remote_entries_by_topic.get(t)
        if remote is None:
            continue
        rc_code, local, err = krec_json(a.krec, ["dump", "--deep", "--format", "json", "--bytes", "hex", str(logs / part)])
        if rc_code != 0 and not local:
            report("FAIL", "%s/local-dump/%s" % (run_name, t), "krec dump of the local log failed: %s" % err[:300])
            continue
        end = ends.get(part)
        # The local log from the remote tier's end on (Kafka's log start offset after retention);
        # a transaction may span the two tiers, so the aborted records are found on the joined stream.
        local = [e for e in local if "error" in e or not e.get("records") or e["records"][-1]["offset"] >= (end or 0)]
        r_ru, _, _ = dump_records(remote)
        all_ru, all_rc, errs = dump_records(remote + local)
        if errs:
            report("FAIL", "%s/%s/%s" % (run_name, source, t), "krec dump errors: %s" % "; ".join(errs[:3]))
            continue
        if end is not None and r_ru and r_ru[-1]["offset"] >= end:
            report("FAIL", "%s/%s/%s" % (run_name, source, t), "remote records past the remote end %d" % end)
        compare("%s/%s/%s/read_uncommitted" % (run_name, source, t), all_ru, consumer[t]["read_uncommitted"],
                "read_uncommitted")
        compare("%s/%s/%s/read_committed" % (run_name, source, t), all_rc, consumer[t]["read_committed"],
                "read_committed")
        if not r_ru:
            report("FAIL", "%s/%s/%s/remote-part" % (run_name, source, t), "no record came from the remote tier")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--checker", required=True)
    ap.add_argument("--save", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--backend", choices=("fs", "s3"), required=True)
    ap.add_argument("--compression", choices=("on", "off"), required=True)
    ap.add_argument("--encryption", choices=("on", "off"), required=True)
    ap.add_argument("--python", default=str(ROOT / "interop/.venv/bin/python"))
    ap.add_argument("codecs", nargs="+")
    a = ap.parse_args()
    name = a.name
    work = Path(a.save).resolve() / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "run.log"
    topics = ["tiered-" + c for c in a.codecs]
    t0 = time.time()

    if a.encryption == "on":
        if run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                "-out", str(work / "k1-private.pem")], log) != 0 or \
                run(["openssl", "pkey", "-in", str(work / "k1-private.pem"), "-pubout",
                     "-out", str(work / "k1-public.pem")], log) != 0:
            report("FAIL", name + "/keys", "openssl failed: " + tail(log))
            return
    moto, endpoint = None, None
    broker_dir = work / "broker"
    env = dict(os.environ)
    env["KAFKA_CP"] = a.java_cp.split(":")[0]
    try:
        if a.backend == "s3":
            moto, endpoint = start_moto(a.python, work)
            if run([a.python, "-c", S3_HELPER, "create", endpoint, BUCKET], log) != 0:
                report("FAIL", name + "/s3-bucket", "boto3 create_bucket failed: " + tail(log))
                return
        if a.backend == "fs":
            (work / "storage").mkdir()  # the plugin wants it to exist
        env["BROKER_EXTRA_PROPS"] = broker_props(a, work, endpoint)
        if run(["bash", str(HERE / "broker.sh"), "start", str(broker_dir)], log, env=env, timeout=180) != 0:
            report("FAIL", name + "/broker", "broker.sh start failed: " + tail(log))
            return
        bootstrap = (broker_dir / "bootstrap").read_text().strip()
        java = ["java", "-cp", a.java_cp, "dev.krecords.interop.TieredScenario"]
        if run(java + ["produce", bootstrap] + a.codecs, log) != 0:
            report("FAIL", name + "/produce", "TieredScenario produce failed: " + tail(log))
            return
        logs = broker_dir / "logs"
        started = time.time()
        ok, state = wait_tiered(logs, topics)
        PHASES.append("waiting for the uploads %.1fs" % (time.time() - started))
        if not ok:
            report("FAIL", name + "/tiered", "closed segments not all uploaded and deleted locally within 90 s "
                   "(live .log, .log.deleted per topic: %s); broker log: %s" % (state, tail(broker_dir / "broker.log", 5)))
            return
        report("PASS", name + "/tiered", "every closed segment uploaded and deleted locally (%s)"
               % ", ".join("%s: %d uploaded" % (t, g) for t, (l, g) in state.items()))
        capture_deleted(logs, topics, work / "local-copies")
        if run(java + ["consume", bootstrap, str(work / "consumer.json")] + topics, log) != 0:
            report("FAIL", name + "/consume", "TieredScenario consume failed: " + tail(log))
            return
    finally:
        if broker_dir.joinpath("broker.pid").exists():
            run(["bash", str(HERE / "broker.sh"), "stop", str(broker_dir)], log, env=env)
        if moto is not None and not (work / "consumer.json").exists():
            stop_moto(moto)
    if a.backend == "s3":
        run([a.python, "-c", S3_HELPER, "download", endpoint, BUCKET, str(work / "storage")], log)
    try:
        checks(a, name, work, topics, t0, endpoint)
    finally:
        if moto is not None:
            stop_moto(moto)


def stop_moto(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def checks(a, name, work, topics, t0, endpoint):
    broker_dir = work / "broker"
    shutil.move(str(broker_dir / "logs"), str(work / "logs"))
    logs = work / "logs"
    storage = work / "storage"
    consumer = json.loads((work / "consumer.json").read_text())["topics"]
    report("PASS", name + "/broker-run", "backend %s, compression %s, encryption %s, topics %s: produced, tiered, "
           "consumed and stopped in %.1f s; saved in %s" % (a.backend, a.compression, a.encryption, " ".join(topics),
                                                         time.time() - t0, work))
    print("TIMING %s: %s" % (name, "; ".join(PHASES)), flush=True)
    if not (logs / "__remote_log_metadata-0").is_dir():
        report("FAIL", name + "/metadata-topic", "no __remote_log_metadata-0 in the broker's log dir")

    # The library on the real objects.
    cmd = [a.checker, str(storage), PREFIX, "--local", str(work / "local-copies"), "--export", str(work / "remote-export")]
    if a.encryption == "on":
        cmd += ["--key", "k1=" + str(work / "k1-private.pem")]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    ends = {}
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        status, _, rest = line.partition(" ")
        if status in ("PASS", "FAIL"):
            print("%s %s/library/%s" % (status, name, rest), flush=True)
        elif status == "END":
            part, end = rest.split()
            ends[part] = int(end)
        elif status in ("INFO", "SUMMARY"):
            (work / "library.txt").open("a").write(line + "\n")
    if p.returncode not in (0, 1):
        report("FAIL", name + "/library", "check_remote_tier exited %d: %s" % (p.returncode, p.stderr.decode()[-500:]))
    for t in topics:
        if t + "-0" not in ends:
            report("FAIL", name + "/library/" + t, "no remote segment read for this topic")
    exported = {}
    for t in topics:
        d = work / "remote-export" / (t + "-0")
        if d.is_dir():
            rc_code, entries, err = krec_json(a.krec, ["dump", "--deep", "--format", "json", "--bytes", "hex", str(d)])
            exported[t] = entries
    check_two_tiers(a, name, topics, exported, logs, ends, consumer, "library-remote+local")

    # The krec CLI on the remote tier itself (issue 32's contract): the filesystem backend's root,
    # or the bucket on the S3 server, still running.
    cli_env = dict(os.environ)
    if a.backend == "fs":
        location = "file://%s/%s" % (storage, PREFIX)
        opts = []
    else:
        location = "s3://%s/%s" % (BUCKET, PREFIX)
        opts = ["-X", "s3.endpoint.url=" + endpoint, "-X", "s3.region=us-east-1",
                "-X", "s3.path.style.access.enabled=true"]
        cli_env.update({"AWS_ACCESS_KEY_ID": "krec", "AWS_SECRET_ACCESS_KEY": "krec-secret"})
    if a.encryption == "on":
        opts += ["--rsm-private-key", "k1=" + str(work / "k1-private.pem")]
    probe = subprocess.run([a.krec, "dump", "--deep", "--format", "json", "--bytes", "hex"] + opts + [location],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300, env=cli_env)
    why = unsupported(probe, location)
    if why:
        report("SKIP", name + "/krec-cli/dump", "`krec dump %s` is not supported by this krec yet (%s)" % (location, why))
    else:
        remote_by_topic = {}
        for t in topics:
            rc_code, entries, err = krec_json(a.krec, ["dump", "--deep", "--format", "json", "--bytes", "hex",
                                                       "--topic", t] + opts + [location], env=cli_env)
            if rc_code != 0:
                report("FAIL", "%s/krec-cli/dump/%s" % (name, t), "exit %d: %s" % (rc_code, err[:300]))
                continue
            remote_by_topic[t] = entries
        check_two_tiers(a, name, topics, remote_by_topic, logs, ends, consumer, "krec-remote+local")
    v = subprocess.run([a.krec, "verify"] + opts + ["--remote", location, str(logs)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300, env=cli_env)
    why = unsupported(v, location)
    if why:
        report("SKIP", name + "/krec-cli/verify-remote", "`krec verify --remote %s` is not supported by this krec "
               "yet (%s)" % (location, why))
        return
    out = (v.stdout + v.stderr).decode("utf-8", "replace").strip()
    report("PASS" if v.returncode == 0 else "FAIL", name + "/krec-cli/verify-remote",
           "exit %d: %s" % (v.returncode, " | ".join(out.splitlines()[-2:])[:400] if out else ""))


def unsupported(proc, location):
    """krec's first error line when it refused the remote location or an option of the contract
    as not known (yet), else None: the checks SKIP on that, and FAIL on any other error."""
    if proc.returncode == 0:
        return None
    err = proc.stderr.decode("utf-8", "replace").strip()
    low = err.lower()
    scheme = location.split(":")[0]
    if ("unexpected argument" in low or "not supported" in low or "unsupported" in low
            or ("scheme" in low and scheme in low) or ("no such file" in low and location in err)):
        return next((l for l in err.splitlines() if l.strip()), "")[:200]
    return None

if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a broken run is one FAIL line, not a traceback the step cannot count
        report("FAIL", "tiered-check", "%s: %s" % (type(e).__name__, e))
    sys.exit(0)
