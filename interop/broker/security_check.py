#!/usr/bin/env python3
"""krec's kafka:// sources over every secured listener of a running interop broker.

Usage: security_check.py --krec KREC --broker-dir DIR --topic TOPIC

DIR is interop/broker/broker.sh's directory (bootstrap files, client-*.properties, tls/). For
TOPIC's partition 0: `krec dump --deep --format json` over SASL_PLAINTEXT (SCRAM-SHA-512,
SCRAM-SHA-256, PLAIN), SSL (server authentication, and mutual TLS) and SASL_SSL must print what
it prints over PLAINTEXT; a wrong password, a CA that did not sign the broker's certificate, an
unknown topic and a plaintext client on the SSL listener must each end with exit 2 and one clear
line on stderr. Prints "PASS name: detail" / "FAIL name: detail" lines (interop/run.sh counts
them). Standard library only.
"""
import argparse
import pathlib
import re
import subprocess
import sys


def run(krec, args):
    p = subprocess.run([krec] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def normalized(text, address):
    """The dump with the source's address replaced, so listeners compare equal."""
    return text.replace(address, "ADDRESS")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--krec", required=True)
    ap.add_argument("--broker-dir", required=True)
    ap.add_argument("--topic", required=True)
    a = ap.parse_args()
    d = pathlib.Path(a.broker_dir)
    addr = {n: (d / f).read_text().strip() for n, f in (
        ("plain", "bootstrap"), ("sasl", "bootstrap-sasl"), ("ssl", "bootstrap-ssl"),
        ("sasl-ssl", "bootstrap-sasl-ssl"))}
    dump = ["dump", "--deep", "--format", "json", "--isolation", "read-uncommitted"]
    code, want, err = run(a.krec, dump + ["kafka://%s/%s/0" % (addr["plain"], a.topic)])
    if code != 0 or not want:
        print("FAIL plaintext/%s: krec dump over PLAINTEXT exited %d: %s" % (a.topic, code, err.strip()[:300]))
        return 0
    want = normalized(want, addr["plain"])
    entries = want.count("\n")
    cases = [
        ("sasl-scram-sha-512", "sasl", ["-F", str(d / "client-sasl.properties")]),
        ("sasl-scram-sha-256", "sasl", ["-F", str(d / "client-sasl.properties"), "-X", "sasl.mechanism=SCRAM-SHA-256"]),
        ("sasl-plain", "sasl", ["-F", str(d / "client-sasl.properties"), "-X", "sasl.mechanism=PLAIN"]),
        ("ssl", "ssl", ["-F", str(d / "client-ssl.properties")]),
        ("ssl-mutual", "ssl", ["-F", str(d / "client-mtls.properties")]),
        ("ssl-localhost", "ssl", ["-F", str(d / "client-ssl.properties")]),
        ("sasl-ssl-scram-sha-256", "sasl-ssl", ["-F", str(d / "client-sasl-ssl.properties")]),
    ]
    for name, listener, props in cases:
        address = addr[listener]
        if name == "ssl-localhost":
            # hostname verification against the certificate's DNS name
            address = address.replace("127.0.0.1", "localhost")
        code, got, err = run(a.krec, dump + props + ["kafka://%s/%s/0" % (address, a.topic)])
        if code != 0:
            print("FAIL %s/%s: krec dump exited %d: %s" % (name, a.topic, code, err.strip()[:300]))
        elif normalized(got, address) != want:
            print("FAIL %s/%s: the dump differs from the PLAINTEXT listener's" % (name, a.topic))
        else:
            print("PASS %s/%s: %d entries, the same JSON lines as over PLAINTEXT" % (name, a.topic, entries))
    # Refusals: exit 2, one line on stderr saying what is wrong.
    refusals = [
        ("wrong-password", ["-F", str(d / "client-sasl.properties"), "-X", "sasl.password=wrong"],
         "kafka://%s/%s/0" % (addr["sasl"], a.topic), r"SASL_AUTHENTICATION_FAILED"),
        ("wrong-ca", ["-X", "security.protocol=SSL", "-X", "ssl.ca.location=%s" % (d / "tls" / "other-ca.pem")],
         "kafka://%s/%s/0" % (addr["ssl"], a.topic), r"certificate|UnknownIssuer"),
        ("no-ca-file", ["-X", "security.protocol=SSL", "-X", "ssl.ca.location=%s" % (d / "tls" / "missing.pem")],
         "kafka://%s/%s/0" % (addr["ssl"], a.topic), r"missing\.pem"),
        ("unknown-topic", [], "kafka://%s/no-such-topic" % addr["plain"], r"UNKNOWN_TOPIC_OR_PARTITION"),
        ("plaintext-on-ssl", [], "kafka://%s/%s/0" % (addr["ssl"], a.topic), r"security\.protocol=SSL"),
        ("sasl-without-credentials", ["-X", "security.protocol=SASL_PLAINTEXT"],
         "kafka://%s/%s/0" % (addr["sasl"], a.topic), r"sasl\.username"),
    ]
    for name, props, url, pattern in refusals:
        code, out, err = run(a.krec, ["dump"] + props + [url])
        lines = [l for l in err.splitlines() if l.strip()]
        if code == 2 and len(lines) == 1 and re.search(pattern, lines[0]) and not out:
            print("PASS refused/%s: exit 2: %s" % (name, lines[0][:200]))
        else:
            print("FAIL refused/%s: exit %d, %d stderr lines (want exit 2, one line matching %r): %s"
                  % (name, code, len(lines), pattern, " | ".join(lines)[:300]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
