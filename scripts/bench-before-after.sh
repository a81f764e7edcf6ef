#!/bin/bash
# Wall and CPU time of two krec binaries on the same commands, rounds interleaved: the
# before/after of a change (BENCHMARKS.md, "The same comparison on a quiet machine").
# Usage: BENCH_DIR=DIR bash scripts/bench-before-after.sh OLD_KREC NEW_KREC [ROUNDS]
# Makes its inputs in BENCH_DIR (default: the current directory) with OLD_KREC gen when
# missing; prints one Markdown table row per command. Needs GNU time (/usr/bin/time).
set -u
OLD=$1; NEW=$2; ROUNDS=${3:-5}
cd "${BENCH_DIR:-.}"
gen() { "$OLD" gen --records "$1" --value-size 100 --records-per-batch 1000 --content text "${@:3}" > "$2"; }
[ -s s-lz4.log ] || gen 200000 s-lz4.log --compression lz4
[ -s b-none.log ] || gen 2000000 b-none.log
[ -s b-lz4.log ] || gen 2000000 b-lz4.log --compression lz4
cmds=(
  "dump --deep b-none.log"
  "dump --deep --format json b-none.log"
  "verify b-none.log"
  "stats b-none.log"
  "dump --deep b-lz4.log"
  "dump --deep --format json b-lz4.log"
  "verify b-lz4.log"
  "stats b-lz4.log"
  "stats --what-if --no-timing --threads 1 s-lz4.log"
  "gen --records 2000000 --value-size 100 --records-per-batch 1000 --content text"
  "gen --records 2000000 --value-size 100 --records-per-batch 1000 --content text --compression lz4"
  "convert --magic 1 b-none.log OUT"
)
for c in "${cmds[@]}"; do
  for which in old new; do : > "t.$which"; done
  for r in $(seq 1 "$ROUNDS"); do
    for which in old new; do
      bin=$OLD; [ $which = new ] && bin=$NEW
      rm -rf OUT.log OUT
      args=${c//OUT/OUT.log}
      /usr/bin/time -f "%e %U %S %M" -o t.one $bin $args > /dev/null 2>/dev/null
      echo "$? $(cat t.one)" >> "t.$which"
    done
  done
  med() { awk '{print $2}' "$1" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
  cpu() { awk '{print $3+$4}' "$1" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
  rss() { awk '{print $5}' "$1" | sort -n | tail -1; }
  rcs() { awk '{print $1}' "$1" | sort -u | tr '\n' ' '; }
  o=$(med t.old); n=$(med t.new)
  echo "| \`$c\` | $(awk '{print $2}' t.old | tr '\n' ' ')| **$o** | $(awk '{print $2}' t.new | tr '\n' ' ')| **$n** | $(awk -v o=$o -v n=$n 'BEGIN{printf "%+.1f %%", (n-o)/o*100}') | $(cpu t.old) / $(cpu t.new) | $(rss t.old) / $(rss t.new) KiB | rc $(rcs t.old)/ $(rcs t.new)|"
done
