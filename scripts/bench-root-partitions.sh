#!/usr/bin/env bash
# `krec offsets` of a broker root with many small partitions and a recovery-point checkpoint
# naming each of them: what opening every partition of a large root costs.
#
#   bash scripts/bench-root-partitions.sh KREC [PARTITIONS] [ROUNDS] [OLD_KREC]
#
# Makes ROOT under $TMPDIR (PARTITIONS directories, default 12000, 100 topics; each one
# 10-record segment), then times `krec offsets ROOT` ROUNDS times (default 3) with KREC and,
# when given, OLD_KREC, and checks that both print the same.
set -euo pipefail
krec=$1; n=${2:-12000}; rounds=${3:-3}; old=${4:-}
root=$(mktemp -d)/root
trap 'rm -rf "$(dirname "$root")"' EXIT
mkdir -p "$root"
"$krec" gen --records 10 --records-per-batch 5 --value-size 10 > "$root.seg"
python3 - "$root" "$n" "$root.seg" <<'PY'
import os, sys
root, n, seg = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], 'rb').read()
lines = []
for i in range(n):
    d = f'{root}/topic{i % 100}-{i // 100}'
    os.makedirs(d, exist_ok=True)
    open(f'{d}/00000000000000000000.log', 'wb').write(seg)
    lines.append(f'topic{i % 100} {i // 100} 10')
open(f'{root}/recovery-point-offset-checkpoint', 'w').write('0\n%d\n%s\n' % (n, '\n'.join(lines)))
open(f'{root}/meta.properties', 'w').write('version=1\nnode.id=1\ncluster.id=bench\n')
PY
lscpu | grep 'Model name' || true
for k in $old "$krec"; do
  for _ in $(seq 1 "$rounds"); do
    /usr/bin/time -f "$k: %e s, %M KB" "$k" offsets "$root" > "$root.out-$(basename "$k")"
  done
done
[ -z "$old" ] || cmp "$root.out-$(basename "$old")" "$root.out-$(basename "$krec")" && echo "same output"
