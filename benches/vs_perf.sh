#!/usr/bin/env bash
# Side by side: `perf record -z` and `perfz record` (default codec) on the same
# workload, same options, one after the other in one run. Prints file size,
# samples and lost samples for each, and the size ratio.
#
#   benches/vs_perf.sh [SECONDS] [REPEATS]
#
# Needs root, perf (linux-perf) and cc. Builds perfz in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
reps=${2:-3}
cargo build --release -q
perfz=target/release/perfz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" tests/workload/deep.c

samples() { # file -> "samples lost"
    perf report --stats -i "$1" 2>/dev/null | awk '/SAMPLE events:/ {s=$3} /LOST_SAMPLES events:/ {l=$3} END {printf "%d %d\n", s, l+0}'
}

printf "%-34s %-7s %12s %9s %6s\n" "options" "tool" "bytes" "samples" "lost"
for opts in "-F 4000 -g" "-F 4000 --call-graph dwarf" "-c 20000 -g -m 8"; do
    for r in $(seq "$reps"); do
        perf record -z $opts -q -o "$tmp/perf.data" -- "$tmp/deep" "$secs" 2>/dev/null
        $perfz record $opts -q -o "$tmp/perfz.data" -- "$tmp/deep" "$secs"
        for t in perf perfz; do
            f="$tmp/$t.data"
            read -r s l < <(samples "$f")
            printf "%-34s %-7s %12d %9d %6d\n" "$opts (run $r)" "$t" "$(stat -c %s "$f")" "$s" "$l"
        done
    done
done
