#!/usr/bin/env bash
# Reading the last records of a broker's large partition, as the data directory around it says
# how much a reader must scan first (issue 28's pushdown on a broker's own directories).
#
#   bash scripts/bench-root-open.sh prepare SEGMENT.log ROOT/TOPIC-P KREC
#   bash scripts/bench-root-open.sh ROOT/TOPIC-P OLD_KREC NEW_KREC [ROUNDS]
#
# prepare: cuts a v2 segment (e.g. the `krec gen` partition of scripts/bench-tables.sh) into
# 128 MiB segments named by base offset in a new ROOT/TOPIC-P, builds their indexes with
# `krec log recover` and removes krec's own files, so the directory looks as a broker leaves it.
#
# ROOT/TOPIC-P: a partition directory with segments and indexes and none of krec's own files
# (as a broker leaves it). Three states of ROOT are timed, each with both binaries:
# "no root files" (every segment scanned), "recovery point" (ROOT/recovery-point-offset-checkpoint
# names the last segment's base offset: a running broker that flushed at its last roll) and
# "clean shutdown" (ROOT/.kafka_cleanshutdown). The root files are put back as they were.
# Rows: `krec dump --deep --start -10` and `krec sql` of the last 10 offsets. Prints medians of
# wall seconds and CPU seconds (user + system) per row; page cache warm (one read first).
set -euo pipefail
if [ "${1:-}" = prepare ]; then
  seg=$2; part=$3; krec=$4
  mkdir -p "$part"
  python3 - "$seg" "$part" <<'PY'
import struct, sys
src, out = open(sys.argv[1], 'rb').read(), sys.argv[2]
pos = start = base = 0
cuts = []
while pos + 12 <= len(src):
    b, = struct.unpack('>q', src[pos:pos + 8])
    n, = struct.unpack('>i', src[pos + 8:pos + 12])
    if pos - start >= 128 << 20:
        cuts.append((base, start, pos)); start, base = pos, b
    pos += 12 + n
cuts.append((base, start, pos))
for b, s, e in cuts:
    open('%s/%020d.log' % (out, b), 'wb').write(src[s:e])
PY
  "$krec" log recover "$part"
  rm -f "$part"/krec-* "$part"/krec.lock
  exit 0
fi
part=$(cd "$1" && pwd); old=$2; new=$3; rounds=${4:-5}
root=$(dirname "$part"); name=$(basename "$part")
topic=${name%-*}; p=${name##*-}
last=$(ls "$part" | grep '\.log$' | sort | tail -1); last_base=$((10#${last%.log}))
end=$("$new" log info "$part" | python3 -c 'import json,sys; print(json.load(sys.stdin)["high_watermark"])')
save=$(mktemp -d); for f in recovery-point-offset-checkpoint .kafka_cleanshutdown; do
  [ -e "$root/$f" ] && mv "$root/$f" "$save/"; done
restore() { rm -f "$root/recovery-point-offset-checkpoint" "$root/.kafka_cleanshutdown";
  cp -a "$save/." "$root/" 2>/dev/null || true; rm -rf "$save"; }
trap restore EXIT
lscpu | grep "Model name"; echo "partition $part: $(du -sh "$part" | cut -f1), $(ls "$part" | grep -c '\.log$') segments, end offset $end"
cat "$part"/*.log > /dev/null
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_row() { # label, command...
  local label=$1; shift; local w=() c=()
  for _ in $(seq "$rounds"); do
    /usr/bin/time -f "%e %U %S" -o /tmp/bench-root-open.t "$@" > /dev/null
    read -r e u s < /tmp/bench-root-open.t; w+=("$e"); c+=("$(echo "$u + $s" | bc)")
  done
  printf '%-58s wall %6s s  cpu %6s s\n' "$label" "$(printf '%s\n' "${w[@]}" | median)" "$(printf '%s\n' "${c[@]}" | median)"
}
q="select count(*) n from t where \"offset\" >= $((end - 10))"
for state in "no root files" "recovery point" "clean shutdown"; do
  rm -f "$root/recovery-point-offset-checkpoint" "$root/.kafka_cleanshutdown"
  case $state in
    "recovery point") printf '0\n1\n%s %s %s\n' "$topic" "$p" "$last_base" > "$root/recovery-point-offset-checkpoint" ;;
    "clean shutdown") echo '{"version":0,"brokerEpoch":1}' > "$root/.kafka_cleanshutdown" ;;
  esac
  for bin in old new; do
    k=$old; [ $bin = new ] && k=$new
    time_row "$state, $bin: dump --deep --start -10" "$k" dump --deep --start -10 "$part"
    time_row "$state, $bin: sql last 10 offsets" "$k" sql "$q" --table "t=$part"
  done
done
