#!/usr/bin/env bash
# Issue 54's check of the --aio paths under ring pressure: the issue's
# command (dwarf stacks at 20 kHz on CPU 1 beside a CPU-bound program,
# the recorder on CPU 0) RUNS times with each backend, with -m 64 and with
# the default rings; every output read whole by perfz and by each perf
# given, its samples and lost samples equal to the summary's.
# Usage: benches/aio_pressure.sh [RUNS] [PERF...]   (default 10, /usr/bin/perf)
set -euo pipefail
runs=${1:-10}; shift || true
perfs=("$@"); [ ${#perfs[@]} -gt 0 ] || perfs=(/usr/bin/perf)
root=$(cd "$(dirname "$0")/.." && pwd)
perfz=${PERFZ:-$root/target/release/perfz}
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
printf 'int main(void){volatile unsigned long x=0;for(;;)x++;}\n' > "$work/burn.c"
cc -O1 -o "$work/burn" "$work/burn.c"
bad=0
for backend in uring thread; do for m in 64 default; do for i in $(seq "$runs"); do
  rm -f "$work/s.json" "$work/h.data"
  taskset -c 1 "$work/burn" & burn=$!
  mopt=(); [ "$m" = default ] || mopt=(-m "$m")
  taskset -c 0 "$perfz" record -q --stats-json "$work/s.json" --codec zstd:1 --aio --aio-backend "$backend" \
    "${mopt[@]}" -C 1 -F 20000 --call-graph dwarf,32768 -o "$work/h.data" -- sleep 2 || { echo "record failed"; bad=$((bad+1)); }
  kill $burn; wait $burn 2>/dev/null || true
  want=$(python3 -c "import json;d=json.load(open('$work/s.json'));print(d['samples'],d['lost_samples'])")
  got=$("$perfz" stat --json "$work/h.data" | python3 -c "import json,sys;d=json.load(sys.stdin);print(sum(e['samples'] for e in d['events']),d['lost_samples'])") || got="unreadable"
  line="$backend -m $m run $i: summary $want perfz $got"
  [ "$got" = "$want" ] || { line="$line  MISMATCH"; bad=$((bad+1)); }
  for p in "${perfs[@]}"; do
    s=$("$p" report --stats -i "$work/h.data" 2>/dev/null | awk '/stats:$/ && !/Aggregated/{e=1} e&&/SAMPLE events:/{s+=$3} e&&/LOST_SAMPLES events:/{l+=$3} END{print s+0, l+0}') || s="unreadable"
    [ "$s" = "$want" ] || { line="$line  $p: $s MISMATCH"; bad=$((bad+1)); }
  done
  echo "$line"
done; done; done
echo "mismatches: $bad"
[ "$bad" = 0 ]
