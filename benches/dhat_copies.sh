#!/usr/bin/env bash
# Cross-checks the copy meter with valgrind's DHAT in copy mode, which counts
# every memcpy/memmove — including the one libzstd's streaming API makes into
# its window buffer, which our meter cannot see.
#
#   benches/dhat_copies.sh [FIXTURE]
#
# Prints, per push path: the ring bytes, our meter's memcpy bytes, and DHAT's
# total bytes copied, both per ring byte.
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=${1:-tests/fixtures/perf61/z3-wrap-cmd.data}
cargo build --release -q --example push_replay
bin=target/release/examples/push_replay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Baseline: what the program copies besides pushing (reading the file,
# building the stream): DHAT's count for the `none` serial fused run minus
# our meter's 0 is the fixed overhead subtracted from every row below.
dhat_bytes() {
    valgrind --tool=dhat --mode=copy --dhat-out-file="$tmp/d.json" "$@" > "$tmp/out.txt" 2> "$tmp/err.txt"
    grep -o 'Total: *[0-9,]* bytes' "$tmp/err.txt" | head -1 | tr -dc '0-9'
}
base=$(dhat_bytes "$bin" serial none fused "$fixture")
printf "%-8s %-16s %-8s %10s %12s %12s %14s\n" sink codec mode ring_bytes meter/byte dhat/byte dhat_extra_B
for sink in serial async; do
  for codec in none zstd:1 zstd:1,oneshot lz4 snappy; do
    for mode in fused layered; do
      total=$(dhat_bytes "$bin" $sink $codec $mode "$fixture")
      line=$(cat "$tmp/out.txt")
      ring=$(sed 's/.*ring_bytes=\([0-9]*\).*/\1/' <<<"$line")
      memcpy=$(sed 's/.*memcpy_bytes=\([0-9]*\).*/\1/' <<<"$line")
      extra=$((total - base))
      awk -v s=$sink -v c=$codec -v m=$mode -v r=$ring -v mc=$memcpy -v x=$extra 'BEGIN {
          printf "%-8s %-16s %-8s %10d %12.2f %12.2f %14d\n", s, c, m, r, mc/r, x/r, x }'
    done
  done
done
