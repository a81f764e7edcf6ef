#!/usr/bin/env bash
# interop/broker/broker.sh: a single-node Apache Kafka (KRaft, broker + controller in one process) on
# 127.0.0.1, run from the jars that `mvn package` put in interop/java/target/lib.
#
#   broker.sh start DIR    format DIR/logs and start the broker on five free ports; waits until it
#                          listens (60 s at most), then prints the PLAINTEXT bootstrap address.
#                          DIR/broker.pid, DIR/bootstrap, DIR/server.properties, DIR/broker.log
#                          (INFO), DIR/broker.out, and the secured listeners (below).
#   broker.sh stop DIR     SIGTERM and wait for the clean shutdown that flushes and closes every
#                          segment (60 s), then SIGKILL if it is still running. Safe to call twice.
#   broker.sh restart DIR  stop, then start the same broker again (same data, same ports).
#   broker.sh status DIR   exit 0 when the broker of DIR is running.
#
# Environment: KAFKA_CP (default: interop/java/target/lib/*; interop/java39/target/lib/* for the
# Kafka 3.9 broker, whose reload4j logging gets DIR/log4j.properties), JAVA (default: java),
# BROKER_HEAP (default: 768m), BROKER_EXTRA_PROPS (more server properties, "NAME=VALUE ...").
# The broker's partition directories are DIR/logs/TOPIC-PARTITION.
# Main classes: kafka.tools.StorageTool (format) and kafka.Kafka (the server), both in kafka_2.13.
#
# Secured listeners, for the live-cluster client tests (all on 127.0.0.1, certificates for
# 127.0.0.1 and localhost made with openssl at start, so hostname verification is on):
#   SASL_PLAINTEXT  DIR/bootstrap-sasl      SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN; user
#                                           "krec" / password "krec-secret" (SCRAM credentials
#                                           created at format time with --add-scram)
#   SSL             DIR/bootstrap-ssl       server certificate signed by DIR/tls/ca.pem; a client
#                                           certificate is requested, not required (mutual TLS:
#                                           DIR/tls/client.pem + client.key, signed by the same CA)
#   SASL_SSL        DIR/bootstrap-sasl-ssl  both of the above
# DIR/tls/other-ca.pem is a CA that signed nothing here (for "wrong CA" checks); DIR/client-*.properties
# are librdkafka-style property files (-F) for each listener.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KAFKA_CP="${KAFKA_CP:-$ROOT/interop/java/target/lib/*}"
JAVA="${JAVA:-java}"
# A fixed cluster id keeps runs alike: base64url of the 16 bytes "krecords-interop".
CLUSTER_ID="a3JlY29yZHMtaW50ZXJvcA"

die() { echo "broker.sh: $*" >&2; exit 2; }

# N free TCP ports on 127.0.0.1 (bound and released by the kernel's choice).
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

port_open() {
    python3 - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.settimeout(1)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
}

# A CA, a broker certificate for 127.0.0.1/localhost in a PKCS12 keystore, a client certificate
# (mutual TLS) and a second CA that signed nothing, all made with openssl in DIR.
make_tls() {
    local d="$1"
    rm -rf "$d"
    mkdir -p "$d"
    (
        cd "$d"
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=krecords interop CA" \
            -keyout ca.key -out ca.pem
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=krecords other CA" \
            -keyout other-ca.key -out other-ca.pem
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >broker.ext
        openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout broker.key -out broker.csr
        openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile broker.ext -out broker.pem
        openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
            -passout pass:krec-store -out broker.p12
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        openssl req -newkey rsa:2048 -nodes -subj "/CN=krec-client" -keyout client.key -out client.csr
        openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile client.ext -out client.pem
    ) >"$d/openssl.log" 2>&1 || { echo "broker.sh: openssl failed:" >&2; tail -n 20 "$d/openssl.log" >&2; exit 1; }
}

running() {
    local dir="$1"
    [ -f "$dir/broker.pid" ] && kill -0 "$(cat "$dir/broker.pid")" 2>/dev/null
}

start() {
    local dir="$1"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if running "$dir"; then die "a broker is already running for $dir (pid $(cat "$dir/broker.pid"))"; fi
    local bport cport sport tport stport
    read -r bport cport sport tport stport <<<"$(free_ports 5)"
    rm -rf "$dir/logs"
    make_tls "$dir/tls"
    cat >"$dir/server.properties" <<EOF
# Written by interop/broker/broker.sh: single-node KRaft broker + controller for the interop tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$bport,CONTROLLER://127.0.0.1:$cport,SASL_PLAINTEXT://127.0.0.1:$sport,SSL://127.0.0.1:$tport,SASL_SSL://127.0.0.1:$stport
advertised.listeners=PLAINTEXT://127.0.0.1:$bport,SASL_PLAINTEXT://127.0.0.1:$sport,SSL://127.0.0.1:$tport,SASL_SSL://127.0.0.1:$stport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_krec="krec-secret";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_krec="krec-secret";
ssl.keystore.type=PKCS12
ssl.keystore.location=$dir/tls/broker.p12
ssl.keystore.password=krec-store
ssl.key.password=krec-store
ssl.truststore.type=PEM
ssl.truststore.location=$dir/tls/ca.pem
ssl.client.auth=requested
log.dirs=$dir/logs
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
# No background cleaning or retention during the run: the segments stay as the broker wrote them.
# (The first retention check runs 30 s after startup whatever the interval, and the suites'
# records carry 2024 timestamps: without retention.ms=-1 it deletes whatever was written by then.)
log.cleaner.enable=false
log.retention.check.interval.ms=3600000
log.retention.ms=-1
EOF
    # BROKER_EXTRA_PROPS: more NAME=VALUE lines (whitespace-separated), appended (the last
    # occurrence of a name wins), e.g. "log.cleaner.enable=true log.cleaner.backoff.ms=500".
    local prop
    for prop in ${BROKER_EXTRA_PROPS:-}; do
        echo "$prop" >>"$dir/server.properties"
    done
    cat >"$dir/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/broker.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = info
logger.org.name = org.apache.kafka
logger.org.level = info
EOF
    # Kafka 3.x logs through reload4j (log4j 1.2): the same INFO log to DIR/broker.log.
    cat >"$dir/log4j.properties" <<EOF
log4j.rootLogger=INFO, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=$dir/broker.log
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
    local jopts=(-Xms256m "-Xmx${BROKER_HEAP:-768m}" -XX:+UseG1GC -Djava.awt.headless=true
                 "-Dlog4j2.configurationFile=$dir/log4j2.properties"
                 "-Dlog4j.configuration=file:$dir/log4j.properties")
    if ! timeout 120 "$JAVA" "${jopts[@]}" -cp "$KAFKA_CP" kafka.tools.StorageTool format \
            -t "$CLUSTER_ID" -c "$dir/server.properties" \
            --add-scram 'SCRAM-SHA-256=[name=krec,password=krec-secret]' \
            --add-scram 'SCRAM-SHA-512=[name=krec,password=krec-secret]' \
            >"$dir/format.out" 2>&1; then
        echo "broker.sh: kafka-storage format (kafka.tools.StorageTool) failed:" >&2
        tail -n 20 "$dir/format.out" >&2
        exit 1
    fi
    # The addresses of the listeners and the client properties that go with them (a restart
    # keeps them: same ports, same files).
    echo "127.0.0.1:$bport" >"$dir/bootstrap"
    echo "127.0.0.1:$sport" >"$dir/bootstrap-sasl"
    echo "127.0.0.1:$tport" >"$dir/bootstrap-ssl"
    echo "127.0.0.1:$stport" >"$dir/bootstrap-sasl-ssl"
    printf 'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.username=krec\nsasl.password=krec-secret\n' \
        >"$dir/client-sasl.properties"
    printf 'security.protocol=SSL\nssl.ca.location=%s\n' "$dir/tls/ca.pem" >"$dir/client-ssl.properties"
    printf 'security.protocol=SSL\nssl.ca.location=%s\nssl.certificate.location=%s\nssl.key.location=%s\n' \
        "$dir/tls/ca.pem" "$dir/tls/client.pem" "$dir/tls/client.key" >"$dir/client-mtls.properties"
    printf 'security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\nsasl.username=krec\nsasl.password=krec-secret\nssl.ca.location=%s\n' \
        "$dir/tls/ca.pem" >"$dir/client-sasl-ssl.properties"
    launch "$dir" "$bport"
}

# Starts the broker of an already formatted DIR on port $2 and waits until it listens.
launch() {
    local dir="$1" bport="$2"
    local jopts=(-Xms256m "-Xmx${BROKER_HEAP:-768m}" -XX:+UseG1GC -Djava.awt.headless=true
                 "-Dlog4j2.configurationFile=$dir/log4j2.properties"
                 "-Dlog4j.configuration=file:$dir/log4j.properties")
    # setsid: the broker gets its own process group, so that nothing sent to the caller's group
    # (Ctrl-C in a terminal) skips the clean shutdown below.
    setsid "$JAVA" "${jopts[@]}" -cp "$KAFKA_CP" kafka.Kafka "$dir/server.properties" \
        >"$dir/broker.out" 2>&1 </dev/null &
    echo $! >"$dir/broker.pid"
    local waited=0
    until port_open "$bport"; do
        if ! running "$dir"; then
            echo "broker.sh: the broker exited during startup; last lines of its logs:" >&2
            tail -n 20 "$dir/broker.out" >&2
            tail -n 30 "$dir/broker.log" >&2 2>/dev/null || true
            rm -f "$dir/broker.pid"
            exit 1
        fi
        if [ "$waited" -ge 120 ]; then
            echo "broker.sh: the broker did not listen on 127.0.0.1:$bport within 60 s; last log lines:" >&2
            tail -n 30 "$dir/broker.log" >&2 2>/dev/null || true
            stop "$dir"
            exit 1
        fi
        sleep 0.5
        waited=$((waited + 1))
    done
    echo "127.0.0.1:$bport"
}

# Stops the broker of DIR cleanly and starts it again on the same data and ports (the partitions,
# the transaction and group state are kept).
restart() {
    local dir="$1"
    dir="$(cd "$dir" && pwd)"
    [ -f "$dir/server.properties" ] || die "no broker was started in $dir"
    stop "$dir"
    local bport
    bport="$(sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/bootstrap")"
    launch "$dir" "$bport"
}

stop() {
    local dir="$1"
    [ -f "$dir/broker.pid" ] || return 0
    local pid
    pid="$(cat "$dir/broker.pid")"
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        local waited=0
        while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 120 ]; do
            sleep 0.5
            waited=$((waited + 1))
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "broker.sh: the broker (pid $pid) did not stop within 60 s of SIGTERM; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
            rm -f "$dir/broker.pid"
            return 1
        fi
    fi
    rm -f "$dir/broker.pid"
}

[ $# -eq 2 ] || die "usage: broker.sh start|stop|restart|status DIR"
case "$1" in
    start) start "$2" ;;
    restart) restart "$2" ;;
    stop) stop "$2" ;;
    status) running "$2" ;;
    *) die "usage: broker.sh start|stop|restart|status DIR" ;;
esac
