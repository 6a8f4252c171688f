#!/usr/bin/env bash
# Samples lost at the start of a recording that replaces an existing
# output, as a user's second `record` does: FILE and FILE.old of SIZE_MB
# each exist before every run. Alternates perfz builds (and perf) on the
# same settings (-C 1 -F 20000 --call-graph dwarf,32768 -m 128, zstd:1,
# 1 s), workload on CPU 1, recorder on CPU 0. Prints, per run, the first
# LOST record (samples @ ms after the first sample) and the total lost.
#
#   benches/startup_loss.sh [PAIRS] [SIZE_MB] [PERFZ...]
#       (needs root, cc and perf; PERFZ defaults to target/release/perfz;
#        give two builds to compare them, "perf" to include perf)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
mb=${2:-200}
shift 2 || true
tools=("$@")
if [ ${#tools[@]} -eq 0 ]; then
  cargo build --release -q
  tools=(target/release/perfz perf)
fi
reader=target/release/perfz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" tests/workload/deep.c
printf "%-40s %16s %10s\n" tool first_lost total_lost
for i in $(seq 1 "$pairs"); do
  order=("${tools[@]}")
  if [ $((i % 2)) = 0 ]; then
    order=()
    for ((k = ${#tools[@]} - 1; k >= 0; k--)); do order+=("${tools[k]}"); done
  fi
  for t in "${order[@]}"; do
    rm -f "$tmp/s.data" "$tmp/s.data.old"
    head -c $((mb << 20)) /dev/urandom > "$tmp/s.data.old"
    head -c $((mb << 20)) /dev/urandom > "$tmp/s.data"
    sync
    taskset -c 1 "$tmp/deep" 100000 > /dev/null &
    w=$!
    if [ "$(basename "$t")" = perf ]; then z=(-z); else z=(--codec zstd:1); fi
    taskset -c 0 "$t" record -q -C 1 -F 20000 --call-graph dwarf,32768 -m 128 "${z[@]}" \
        -o "$tmp/s.data" -- sleep 1 2> /dev/null
    kill $w
    wait $w 2> /dev/null || true
    first=$(perf report -D -i "$tmp/s.data" 2> /dev/null \
        | awk '/PERF_RECORD_SAMPLE|PERF_RECORD_LOST:/ && !t0 {t0 = $2}
               /PERF_RECORD_LOST:/ && !done {printf "%d@%.0fms", substr($NF, 6), ($2 - t0) / 1e6; done = 1}')
    total=$("$reader" stat --json "$tmp/s.data" \
        | python3 -c "import json,sys; s=json.load(sys.stdin); print(max(s['lost_events'], s['lost_samples']))")
    printf "%-40s %16s %10s\n" "$t" "${first:-none}" "$total"
  done
done
