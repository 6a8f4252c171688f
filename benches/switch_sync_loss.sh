#!/bin/bash
# Lost samples of a --switch-output recording while the disk is busy with
# write-back (another process writing and fdatasync'ing a large file), for two
# perfz builds in alternating rounds.
#
#   benches/switch_sync_loss.sh ROUNDS PERFZ_A PERFZ_B
#
# Each run: `perfz record --switch-output=32K --codec none -F 1000
# --call-graph dwarf,4096 -- deep 1` (tests/workload/deep.c), lost samples
# from --stats-json. Needs root (perf_event_open), cc, dd, python3.
set -euo pipefail
rounds=${1:-4}; a=$2; b=$3
tmp=$(mktemp -d /tmp/perfz-switch-sync-XXXXXX)
trap 'kill $load 2>/dev/null || true; rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" "$(dirname "$0")/../tests/workload/deep.c"
( while :; do dd if=/dev/zero of="$tmp/load" bs=1M count=1000 conv=fdatasync 2>/dev/null; done ) &
load=$!
sleep 2
run() {
    rm -f "$tmp"/z.data* "$tmp/s.json"
    "$1" record -q --switch-output=32K --codec none -F 1000 --call-graph dwarf,4096 \
        -o "$tmp/z.data" --stats-json "$tmp/s.json" -- "$tmp/deep" 1 >/dev/null 2>&1
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['lost_samples'], len(d['outputs']))" "$tmp/s.json"
}
for i in $(seq 1 "$rounds"); do
    if (( i % 2 )); then order="A B"; else order="B A"; fi
    for t in $order; do
        if [ "$t" = A ]; then bin=$a; else bin=$b; fi
        read -r lost outs < <(run "$bin")
        echo "$t round $i lost $lost outputs $outs"
    done
done
