#!/usr/bin/env bash
# Benchmarks `krec stats --what-if` on one generated segment: peak RSS and wall time with one
# thread and with all cores (issue 14). A measurement, not a test.
#
# Usage: bash scripts/bench-what-if.sh [--size MIB] [--compression C] [--threads N]
#                                      [--dir DIR] [--keep] [-- EXTRA-WHAT-IF-FLAGS...]
#
#   --size MIB        segment size in MiB (default 1024 = 1 GiB; a smoke run can pass e.g. 16)
#   --compression C   codec of the generated batches: none (default), gzip, snappy, lz4, zstd[:L]
#   --threads N       the parallel run's --threads (default: nproc, all cores)
#   --dir DIR         where the temporary directory goes (default ${TMPDIR:-/tmp})
#   --keep            keep the generated segment (its path is printed)
#   -- FLAGS          passed to both what-if runs (e.g. -- --no-timing)
#
# Steps: builds krec in release mode (cargo build --release -p krec; or uses $KREC); generates a
# v2 segment with `krec gen` -- 1000-record batches, 100-byte text values, no keys; the record
# count is calibrated on a 100 000-record sample so the file comes out at about --size MiB --
# and reads it once into the page cache. Then, under GNU time (/usr/bin/time -v: wall clock and
# maximum resident set size), stdout kept in the work directory:
#
#   krec stats --what-if --threads 1 FILE
#   krec stats --what-if --threads N FILE
#
# Prints the load average before and after (the machine may be shared), the CPU model, a table
# (run, wall seconds, CPU seconds, peak RSS MiB), the speedup (wall of 1 thread / wall of N),
# whether the issue's goals hold (peak RSS under 256 MiB; at least 1.8x faster on 2 cores), and
# the what-if table of the parallel run. Exit 0 either way; 2 on a usage or setup error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SIZE_MIB=1024
COMPRESSION=none
THREADS="$(nproc)"
BASE_DIR="${TMPDIR:-/tmp}"
KEEP=0
EXTRA=()
usage() { sed -n '5,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) SIZE_MIB="${2:-}"; shift 2 ;;
        --compression) COMPRESSION="${2:-}"; shift 2 ;;
        --threads) THREADS="${2:-}"; shift 2 ;;
        --dir) BASE_DIR="${2:-}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --) shift; EXTRA=("$@"); break ;;
        -h | --help) usage ;;
        *) echo "bench-what-if: unknown argument $1" >&2; usage ;;
    esac
done
for n in "$SIZE_MIB" "$THREADS"; do
    case "$n" in '' | *[!0-9]*) echo "bench-what-if: not a number: '$n'" >&2; exit 2 ;; esac
done
[ "$SIZE_MIB" -ge 1 ] && [ "$THREADS" -ge 1 ] || { echo "bench-what-if: --size and --threads must be >= 1" >&2; exit 2; }

step() { printf '==> %s\n' "$*" >&2; }

TIME=/usr/bin/time
if ! "$TIME" -v true >/dev/null 2>&1; then
    echo "bench-what-if: GNU time is needed at /usr/bin/time (apt-get install time)" >&2
    exit 2
fi

if [ -z "${KREC:-}" ]; then
    step "cargo build --release -p krec"
    cargo build --release -q -p krec
    target="$(cargo metadata --format-version 1 --no-deps \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    KREC="$target/release/krec"
fi
[ -x "$KREC" ] || { echo "bench-what-if: $KREC is not an executable" >&2; exit 2; }

need_kib=$((SIZE_MIB * 1024 * 11 / 10 + 64 * 1024))
free_kib="$(df -Pk "$BASE_DIR" | awk 'NR == 2 { print $4 }')"
if [ "$free_kib" -lt "$need_kib" ]; then
    echo "bench-what-if: $BASE_DIR has $((free_kib / 1024)) MiB free, needs $((need_kib / 1024)) MiB" >&2
    exit 2
fi
WORK="$(mktemp -d "$BASE_DIR/krec-bench-what-if.XXXXXX")"
if [ "$KEEP" = 1 ]; then
    trap 'echo "kept $WORK" >&2' EXIT
else
    trap 'rm -rf "$WORK"' EXIT
fi
FILE="$WORK/00000000000000000000.log"
GEN=(--magic 2 --compression "$COMPRESSION" --content text --value-size 100 --key-size 0
     --records-per-batch 1000)

step "calibrating: krec gen ${GEN[*]} --records 100000"
"$KREC" gen "${GEN[@]}" --records 100000 --output "$WORK/sample.log" >/dev/null
sample_bytes="$(stat -c %s "$WORK/sample.log")"
rm -f "$WORK/sample.log"
records=$((SIZE_MIB * 1048576 * 100000 / sample_bytes))
records=$(((records + 999) / 1000 * 1000))
step "generating: krec gen ${GEN[*]} --records $records --output $FILE"
"$KREC" gen "${GEN[@]}" --records "$records" --output "$FILE" >/dev/null
bytes="$(stat -c %s "$FILE")"
mib="$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"
cat "$FILE" >/dev/null

# measure NAME CMD...: "wall_seconds cpu_seconds peak_rss_kib exit_code"; stdout in $WORK/NAME.out.
measure() {
    local name="$1" rc=0 t0 t1
    shift
    t0="${EPOCHREALTIME:-}"
    "$TIME" -v -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    t1="${EPOCHREALTIME:-}"
    awk -v rc="$rc" -v t0="${t0/,/.}" -v t1="${t1/,/.}" '
        /Elapsed \(wall clock\) time/ {
            n = split($NF, p, ":"); s = 0
            for (i = 1; i <= n; i++) s = s * 60 + p[i]
        }
        /User time \(seconds\)/ { cpu += $NF }
        /System time \(seconds\)/ { cpu += $NF }
        /Maximum resident set size/ { rss = $NF }
        END { if (t0 != "" && t1 != "") s = t1 - t0; printf "%.3f %.2f %d %d\n", s, cpu, rss, rc }' "$WORK/$name.time"
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
cpu_model="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
step "segment: $FILE, $mib MiB, $records records, compression $COMPRESSION; load average $load_before"

ONE=("$KREC" stats --what-if --threads 1 "${EXTRA[@]}" "$FILE")
ALL=("$KREC" stats --what-if --threads "$THREADS" "${EXTRA[@]}" "$FILE")
step "${ONE[*]}"
read -r w1 c1 r1 rc1 < <(measure one "${ONE[@]}")
step "  ${w1}s wall, ${c1}s CPU, peak RSS $((r1 / 1024)) MiB (exit $rc1); load $(cut -d' ' -f1-3 /proc/loadavg)"
step "${ALL[*]}"
read -r wn cn rn rcn < <(measure all "${ALL[@]}")
step "  ${wn}s wall, ${cn}s CPU, peak RSS $((rn / 1024)) MiB (exit $rcn)"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
for rc in "$rc1" "$rcn"; do
    if [ "$rc" != 0 ]; then
        echo "bench-what-if: a run exited $rc:" >&2
        tail -5 "$WORK/one.err" "$WORK/all.err" >&2
        exit 2
    fi
done

speedup="$(awk -v a="$w1" -v b="$wn" 'BEGIN { printf "%.2f", a / b }')"
max_rss=$(( (r1 > rn ? r1 : rn) / 1024 ))
echo "krec stats --what-if on a $mib MiB v2 segment ($records records of 100-byte text values, compression $COMPRESSION)"
echo "CPU: $cpu_model, $(nproc) cores; load average before $load_before, after $load_after"
echo
printf '| %-22s | %9s | %8s | %13s |\n' "run" "wall s" "CPU s" "peak RSS MiB"
printf '|%s|%s|%s|%s|\n' "------------------------" "-----------" "----------" "---------------"
printf '| %-22s | %9s | %8s | %13s |\n' "--threads 1" "$w1" "$c1" "$((r1 / 1024))"
printf '| %-22s | %9s | %8s | %13s |\n' "--threads $THREADS" "$wn" "$cn" "$((rn / 1024))"
echo
echo "speedup (wall, 1 thread / $THREADS): ${speedup}x"
echo "goal: peak RSS < 256 MiB: $([ "$max_rss" -lt 256 ] && echo met || echo NOT met) ($max_rss MiB)"
if [ "$THREADS" = 2 ]; then
    echo "goal: >= 1.8x on 2 cores: $(awk -v s="$speedup" 'BEGIN { print (s >= 1.8 ? "met" : "NOT met") }')"
fi
echo
echo "what-if table (--threads $THREADS run):"
sed -n '/^what if:/,$p' "$WORK/all.out"
