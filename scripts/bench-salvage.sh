#!/usr/bin/env bash
# Benchmark (not a test): `krec salvage` (issue 31) against `cat` of the same bytes.
#
#   intact     a 1 GiB partition directory (4 segments of 256 MiB, uncompressed v2, 118-byte
#              values in batches of 200, made by `krec gen`), nothing damaged: salvage --all
#              writes it whole into a new partition directory
#   zeros      one 1 GiB segment with 512 MiB zeroed in its middle (the resync skips them)
#   zeros-only a 512 MiB segment of nothing but zeros: the rate through a zeroed region alone
#   flipped    the 1 GiB segment with 10,000 bytes flipped, spread evenly over it
#
# Usage: [BENCH_ROUNDS=N] bash scripts/bench-salvage.sh [DIR]   (default: a fresh directory under
# /tmp, removed; a DIR given is kept, and its inputs are reused by the next run when they are
# there). Every row runs once per round, N rounds (default 3); medians and ratios come last.
# Targets (issue 31): intact at least 0.5 of cat's throughput; at least 1 GB/s through the zeroed
# region; zeros and flipped within 3x of intact's time. The inputs are read from the page cache
# (a warm-up pass first); salvage writes its output to DIR (the page cache, then the disk); cat
# is run three times: writing nowhere (/dev/null), into a file in DIR (left in the page cache),
# and into a file in DIR synced to the device (`sync FILE`), as salvage syncs its output. Prints wall time, MB/s of input, CPU time and peak RSS (/usr/bin/time -v).
#
# BENCH_SALVAGE_ENGINE=example salvages with `cargo run --release -p krecords-log --example
# salvage` instead of `krec salvage`: the same engine (krecords_log::salvage, which the command
# calls; it adds argument handling and report printing), built without the krec binary's SQL
# engine, whose release build takes very long on a small machine. The inputs are still made
# by the release `krec gen` unless DIR already holds them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TARGET="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
KREC="$TARGET/release/krec"
if [ "${BENCH_SALVAGE_ENGINE:-krec}" = example ]; then
    cargo build -q --release -p krecords-log --example salvage
    SALVAGE=("$TARGET/release/examples/salvage")
    OUTPUT_FLAG=()
    ENGINE="krecords-log example salvage (release)"
    if [ ! -x "$KREC" ]; then # krec gen for the inputs: its output does not depend on the profile
        cargo build -q -p krec
        KREC="$TARGET/debug/krec"
    fi
else
    cargo build -q --release -p krec
    SALVAGE=("$KREC" salvage)
    OUTPUT_FLAG=(--output)
    ENGINE="krec salvage (release)"
fi
salvage() { "${SALVAGE[@]}" "$1" "${OUTPUT_FLAG[@]}" "$2"; }
ROOT="${1:-$(mktemp -d /tmp/krec-bench-salvage.XXXXXX)}"
mkdir -p "$ROOT"
SEG_RECORDS=2097152   # x ~128.5 bytes per record in batches of 200: ~257 MiB per segment
echo "== CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores; load average $(cut -d ' ' -f 1-3 /proc/loadavg); data in $ROOT; engine: $ENGINE"

part="$ROOT/intact-0"
if [ ! -f "$ROOT/inputs-ready" ]; then
mkdir -p "$part"
for i in 0 1 2 3; do
    base=$((i * SEG_RECORDS))
    "$KREC" gen --records "$SEG_RECORDS" --value-size 118 --records-per-batch 200 \
        --base-offset "$base" --output "$part/$(printf '%020d' "$base").log" >/dev/null
done
# One 1 GiB segment: the four concatenated (offsets follow on).
mkdir -p "$ROOT/zeros-0" "$ROOT/flipped-0" "$ROOT/zeros-only-0"
cat "$part"/*.log >"$ROOT/zeros-0/00000000000000000000.log"
cp "$ROOT/zeros-0/00000000000000000000.log" "$ROOT/flipped-0/00000000000000000000.log"
size=$(stat -c %s "$ROOT/zeros-0/00000000000000000000.log")
python3 - "$ROOT" "$size" <<'EOF'
import os, sys
root, size = sys.argv[1], int(sys.argv[2])
# 512 MiB of zeros from a quarter of the segment.
with open(os.path.join(root, "zeros-0/00000000000000000000.log"), "r+b") as f:
    f.seek(size // 4)
    block = bytes(1 << 20)
    for _ in range(512):
        f.write(block)
# 10,000 bytes flipped, evenly spread.
with open(os.path.join(root, "flipped-0/00000000000000000000.log"), "r+b") as f:
    step = size // 10000
    for i in range(10000):
        pos = i * step + step // 2
        f.seek(pos)
        b = f.read(1)
        f.seek(pos)
        f.write(bytes([b[0] ^ 0x41]))
with open(os.path.join(root, "zeros-only-0/00000000000000000000.log"), "wb") as f:
    block = bytes(1 << 20)
    for _ in range(512):
        f.write(block)
EOF
touch "$ROOT/inputs-ready"
fi
size=$(stat -c %s "$ROOT/zeros-0/00000000000000000000.log")
echo "== intact: $(du -cb "$part"/*.log | tail -n 1 | cut -f 1) bytes in 4 segments; zeros, flipped: $size bytes in one segment"

run() { # run LABEL INPUT_BYTES CMD...
    local label="$1" bytes="$2" tv="$ROOT/time.txt" start end
    shift 2
    rm -rf "$ROOT/out"
    sync
    start=$(date +%s.%N)
    /usr/bin/time -v "$@" >/dev/null 2>"$tv" || true
    end=$(date +%s.%N)
    python3 - "$start" "$end" "$label" "$bytes" "$tv" <<'EOF'
import re, sys
start, end, label, n, tv = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
t = open(tv).read()
user = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1))
sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
s = end - start
print(f"{label:<26} {s:7.2f} s {n / s / 1e6:8.0f} MB/s   cpu {user:6.2f} user {sys_:5.2f} sys   peak RSS {rss / 1024:7.1f} MiB", flush=True)
with open(tv.rsplit("/", 1)[0] + "/results.tsv", "a") as f:
    f.write(f"{label}\t{s}\t{n}\n")
EOF
}
cat "$part"/*.log "$ROOT"/zeros-0/*.log "$ROOT"/flipped-0/*.log "$ROOT"/zeros-only-0/*.log >/dev/null
intact=$(du -cb "$part"/*.log | tail -n 1 | cut -f 1)
zeros_only=$(stat -c %s "$ROOT/zeros-only-0/00000000000000000000.log")
rm -f "$ROOT/results.tsv"
for round in $(seq 1 "${BENCH_ROUNDS:-3}"); do
    echo "-- round $round"
    run "cat (intact)" "$intact" sh -c "cat \"$part\"/*.log"
    run "cat > file (intact)" "$intact" sh -c "cat \"$part\"/*.log >\"$ROOT/cat-copy\"; rm \"$ROOT/cat-copy\""
    run "cat > file, sync (intact)" "$intact" sh -c "cat \"$part\"/*.log >\"$ROOT/cat-copy\"; sync \"$ROOT/cat-copy\"; rm \"$ROOT/cat-copy\""
    for c in intact zeros zeros-only flipped; do
        case "$c" in intact) n=$intact ;; zeros-only) n=$zeros_only ;; *) n=$size ;; esac
        run "salvage $c" "$n" "${SALVAGE[@]}" "$ROOT/$c-0" "${OUTPUT_FLAG[@]}" "$ROOT/out"
    done
done
echo "-- medians over the rounds; throughput against cat's"
python3 - "$ROOT/results.tsv" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, s, n = line.rstrip("\n").split("\t")
    rows.setdefault(label, []).append((float(s), int(n)))
med = {k: (statistics.median(s for s, _ in v), v[0][1]) for k, v in rows.items()}
rate = {k: n / s for k, (s, n) in med.items()}
for k, (s, n) in med.items():
    print(f"{k:<26} {s:7.2f} s {rate[k] / 1e6:8.0f} MB/s")
for cat in ("cat (intact)", "cat > file (intact)", "cat > file, sync (intact)"):
    print(f"salvage intact / {cat}: {rate['salvage intact'] / rate[cat]:.2f}")
intact = med["salvage intact"][0]
for c in ("zeros", "flipped"):
    print(f"salvage {c} time / salvage intact time: {med['salvage ' + c][0] / intact:.2f}")
EOF
echo "-- the reports (last round)"
for c in zeros flipped; do
    rm -rf "$ROOT/out"
    echo "$c: $(salvage "$ROOT/$c-0" "$ROOT/out" | grep '^lost:' || true)"
done
rm -rf "$ROOT/out"
[ -n "${1:-}" ] || rm -rf "$ROOT"
