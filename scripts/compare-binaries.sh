#!/usr/bin/env bash
# Runs two krec binaries over the same corpus, command line by command line, and reports which
# outputs differ: the check that a refactoring kept every output that was right byte-identical.
#
# Usage: bash scripts/compare-binaries.sh OLD_KREC NEW_KREC [OPTIONS]
#   --broker HOST:PORT   also read live topics on this broker (every topic named by --topic)
#   --topic NAME         a live topic to read (repeatable; needs --broker)
#   --root DIR           also read this broker data directory (a log.dirs root), e.g. the interop
#                        suite's saved partitions ($KREC_INTEROP_SAVE)
#   --keep DIR           keep the outputs in DIR (default: a temporary directory, removed)
#
# The corpus is made by OLD_KREC itself (gen, build and log in a temporary directory): files of
# every magic and codec, a partition directory with committed, aborted and open transactions, a
# broker root with internal-topic fixtures, damaged and non-Kafka files. Each command line runs
# once per binary; stdout and the exit code are compared (stderr is compared too, reported
# apart: messages may be reworded on purpose). Output files a command writes are compared by
# their SHA-256, appended to its stdout.
#
# Prints one line per differing command and a closing line
# "compared N command lines: I identical, D differ (S with stderr only)". Exits 0 either way:
# whether a difference is intended is for the reader to say (the closing note lists them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OLD="$(realpath "$1")"
NEW="$(realpath "$2")"
shift 2
BROKER=""
TOPICS=()
EXTRA_ROOT=""
KEEP=""
while [ $# -gt 0 ]; do
    case "$1" in
        --broker) BROKER="$2"; shift 2 ;;
        --topic) TOPICS+=("$2"); shift 2 ;;
        --root) EXTRA_ROOT="$(realpath "$2")"; shift 2 ;;
        --keep) KEEP="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

WORK="$(mktemp -d)"
if [ -z "$KEEP" ]; then
    trap 'rm -rf "$WORK"' EXIT
else
    mkdir -p "$KEEP"
    WORK="$(realpath "$KEEP")"
fi
C="$WORK/corpus"
mkdir -p "$C"
cd "$C"

# ------------------------------------------------------------------------------------- corpus
for m in 0 1 2; do
    for codec in none gzip snappy lz4 zstd; do
        [ "$codec" = zstd ] && [ "$m" != 2 ] && continue
        headers=0
        [ "$m" = 2 ] && headers=2
        "$OLD" gen --magic "$m" --compression "$codec" --records 300 --records-per-batch 50 \
            --key-size 8 --headers "$headers" --content text --base-offset 100 \
            -o "gen-v$m-$codec.log" >/dev/null
    done
done
"$OLD" gen --records 2000 --value-size 100 --content json --compression lz4 -o big.log >/dev/null
# Damaged and non-Kafka inputs.
head -c 5000 gen-v2-none.log >truncated.log
cp gen-v2-gzip.log flipped.log
printf '\x00' | dd of=flipped.log bs=1 seek=700 conv=notrunc status=none
cp "$ROOT/README.md" readme.log
head -c 4096 "$OLD" >elf.log

# A partition directory with committed, aborted and an open transaction, and plain appends.
P="$C/root/txn-0"
"$OLD" log create "$P" >/dev/null
rec() { for i in $(seq 1 "$2"); do printf '{"key":"k%d","value":"%s-%d","timestamp":%d}\n' "$((i % 5))" "$1" "$i" "$((1714000000000 + i))"; done; }
rec plain 20 | "$OLD" log append "$P" >/dev/null
rec committed 10 | "$OLD" log append "$P" --producer-id 7 --producer-epoch 0 --transactional >/dev/null
"$OLD" log end-txn "$P" --producer-id 7 --producer-epoch 0 --coordinator-epoch 0 --commit >/dev/null
rec aborted 10 | "$OLD" log append "$P" --producer-id 8 --producer-epoch 0 --transactional >/dev/null
"$OLD" log end-txn "$P" --producer-id 8 --producer-epoch 0 --coordinator-epoch 0 --abort >/dev/null
rec after 5 | "$OLD" log append "$P" >/dev/null
rec open 6 | "$OLD" log append "$P" --producer-id 9 --producer-epoch 0 --transactional >/dev/null
# Two more partitions and the internal-topic fixtures, so root/ is a broker's data directory.
for part in events-0 events-1; do
    "$OLD" log create "$C/root/$part" >/dev/null
    rec "$part" 40 | "$OLD" log append "$C/root/$part" --compression zstd >/dev/null
done
for d in "$ROOT"/crates/cli/tests/fixtures/internal/__*; do
    cp -r "$d" "$C/root/"
done
printf '{"timestamp":1714000000000,"value":"hello"}\n{"timestamp":1714000000000,"key":"k","value":"world","headers":[{"key":"h","value":"v"},{"key":"h","value":null}]}\n' >records.jsonl

FILES=(gen-v*.log big.log)
BAD=(truncated.log flipped.log readme.log elf.log)
DIRS=(root/txn-0 root/events-0 root/__consumer_offsets-0 root/__cluster_metadata-0 root/__transaction_state-0)

# ----------------------------------------------------------------------------- command lines
CMDS=()
add() { CMDS+=("$*"); }
for f in "${FILES[@]}" "${BAD[@]}"; do
    add dump "$f"
    add dump --deep "$f"
    add dump --deep --print-data "$f"
    add dump --deep --format json --bytes hex "$f"
    add dump --deep --timestamps human "$f"
    add explain --count 3 "$f"
    add explain --format json --count 3 "$f"
    add verify "$f"
    add verify --format json "$f"
    add stats "$f"
    add stats --format json "$f"
done
for f in "${FILES[@]}"; do
    add stats --what-if --no-timing --threads 1 "$f"
    add stats --what-if --no-timing --threads 1 --format json "$f"
    add dump --deep --producer-id -1 "$f"
    add dump --deep --max-bytes 3000 "$f"
    add "@convert" "$f" --magic 2 --compression zstd
    add "@convert" "$f" --magic 1 --compression gzip
    add "@convert" "$f" --magic 0
done
for d in "${DIRS[@]}"; do
    add dump --deep --print-data "$d"
    add dump --deep --format json "$d"
    add verify "$d"
    add verify --format json "$d"
    add stats "$d"
done
add dump --deep --transactional-only root/txn-0
add dump --deep --control-only --format json root/txn-0
add log info root/txn-0
add log read root/txn-0 --offset 0
add log read root/txn-0 --offset 0 --isolation read-committed
add log offsets root/txn-0 --earliest
add log offsets root/txn-0 --latest
add log offsets root/txn-0 --isolation read-committed --latest
add log offsets root/txn-0 --time 1714000000010
add verify root
add verify --format json root
add verify root --topic 'events*'
add stats root
add dump --format json root
add "@gen" --records 100 --compression gzip --key-size 4 --headers 1
add "@gen" --magic 1 --records 100 --compression snappy --records-per-batch 7
add "@build" --compression lz4
add "@build" --magic 1 --compression gzip:9
if [ -n "$EXTRA_ROOT" ]; then
    add verify "$EXTRA_ROOT"
    add verify --format json "$EXTRA_ROOT"
    add dump --deep --format json "$EXTRA_ROOT"
    add stats "$EXTRA_ROOT"
fi
if [ -n "$BROKER" ]; then
    for t in "${TOPICS[@]}"; do
        add dump --deep --format json "kafka://$BROKER/$t"
        add dump --deep "kafka://$BROKER/$t"
        add stats "kafka://$BROKER/$t"
        add verify "kafka://$BROKER/$t"
        add dump --deep --format json --isolation read-committed "kafka://$BROKER/$t"
    done
fi

# --------------------------------------------------------------------------------------- run
# run BIN OUTDIR N CMD...: stdout (+ written files' digests) to OUTDIR/N.out, stderr to .err,
# the exit code to .rc.
run() {
    local bin="$1" dir="$2" n="$3"
    shift 3
    local out="$dir/$n.out" written="$dir/$n.written"
    rm -rf "$written"
    case "$1" in
        @convert)
            shift
            (cd "$C" && "$bin" convert "$1" "$written" "${@:2}") >"$out" 2>"$dir/$n.err" && echo 0 >"$dir/$n.rc" || echo $? >"$dir/$n.rc"
            ;;
        @gen)
            shift
            (cd "$C" && "$bin" gen "$@" -o "$written") >"$out" 2>"$dir/$n.err" && echo 0 >"$dir/$n.rc" || echo $? >"$dir/$n.rc"
            ;;
        @build)
            shift
            (cd "$C" && "$bin" build "$@" --input records.jsonl --output "$written") >"$out" 2>"$dir/$n.err" && echo 0 >"$dir/$n.rc" || echo $? >"$dir/$n.rc"
            ;;
        *)
            (cd "$C" && "$bin" "$@") >"$out" 2>"$dir/$n.err" </dev/null && echo 0 >"$dir/$n.rc" || echo $? >"$dir/$n.rc"
            ;;
    esac
    if [ -d "$written" ]; then
        (cd "$written" && find . -type f | sort | xargs sha256sum) >>"$out"
    elif [ -e "$written" ]; then
        (cd "$dir" && sha256sum "$n.written") >>"$out"
    fi
    rm -rf "$written"
    # The binary's own path may appear in messages; the two binaries' names differ.
    sed -i -e "s#$bin#KREC#g" -e "s#$dir/#OUT/#g" "$out" "$dir/$n.err"
}

mkdir -p "$WORK/old" "$WORK/new"
same=0
differ=0
stderr_only=0
n=0
for cmd in "${CMDS[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    run "$OLD" "$WORK/old" "$n" $cmd
    # shellcheck disable=SC2086
    run "$NEW" "$WORK/new" "$n" $cmd
    if cmp -s "$WORK/old/$n.out" "$WORK/new/$n.out" && cmp -s "$WORK/old/$n.rc" "$WORK/new/$n.rc"; then
        if cmp -s "$WORK/old/$n.err" "$WORK/new/$n.err"; then
            same=$((same + 1))
        else
            stderr_only=$((stderr_only + 1))
            echo "STDERR $n: krec $cmd"
            diff "$WORK/old/$n.err" "$WORK/new/$n.err" | head -6 | sed -e 's/^/    /' || true
        fi
    else
        differ=$((differ + 1))
        echo "DIFFER $n: krec $cmd (exit $(cat "$WORK/old/$n.rc") -> $(cat "$WORK/new/$n.rc"))"
        diff "$WORK/old/$n.out" "$WORK/new/$n.out" | head -8 | cut -c 1-160 | sed -e 's/^/    /' || true
    fi
done
echo "compared $n command lines: $same identical, $((differ + stderr_only)) differ ($stderr_only with stderr only)"
