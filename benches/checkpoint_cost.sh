#!/usr/bin/env bash
# What the crash-safety checkpoints cost: the same recording with
# --checkpoint 0 (only at the end), 1 (the default) and 0.1 seconds.
# Prints checkpoints taken, the bytes they add and the time they took (as
# perfz measures it around each checkpoint).
#
#   benches/checkpoint_cost.sh [SECONDS]     (needs root and cc)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
cargo build --release -q
perfz=target/release/perfz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" tests/workload/deep.c
printf "%-10s %-6s %11s %11s %14s %12s\n" interval codec checkpoints cp_bytes cp_time_ms file_bytes
for codec in zstd:3 none; do
  for cp in 0 1 0.1; do
    $perfz record -q -g --codec $codec --checkpoint $cp \
        --stats-json "$tmp/s.json" -o "$tmp/c.data" -- "$tmp/deep" "$secs"
    python3 - "$tmp/s.json" "$cp" "$codec" "$(stat -c %s "$tmp/c.data")" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<10} {sys.argv[3]:<6} {s['checkpoints']:>11} {s['checkpoint_bytes']:>11} {s['checkpoint_seconds']*1000:>14.3f} {sys.argv[4]:>12}")
PY
  done
done
