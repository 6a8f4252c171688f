#!/usr/bin/env bash
# perfz eval against the codecs' own command-line tools, on the same bytes.
#
#   benches/eval_vs_cli.sh [SECONDS]
#
# Records the dwarf scenario of vs_perf.py (-C 1 -F 20000 --call-graph
# dwarf,32768, deep.c pinned to CPU 1) with --codec none --keep-stack-padding
# (the ring bytes as the kernel wrote them), then:
#   - perfz eval on it: the real push path cuts the stacks as the recorder
#     does; its `ratio`/`comp MB/s` are per byte given to the codec, its
#     `ring ratio`/`ring MB/s` per ring byte;
#   - `perfz recompress --codec none` of it: the cut bytes as a file, the
#     same bytes the codec was given, which `zstd -b` and `lz4 -b` then read.
# Prints eval's JSON rows and the CLIs' lines; needs root, perf-capable
# kernel, cc, zstd and lz4 (apt-get install -y zstd lz4).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1}
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" tests/workload/deep.c
taskset -c 1 "$tmp/deep" 100000 & wl=$!
sleep 0.5
taskset -c 0 target/release/perfz record -q -C 1 -F 20000 --call-graph dwarf,32768 \
    --codec none --keep-stack-padding -o "$tmp/whole.data" -- sleep "$secs"
kill $wl
target/release/perfz recompress --codec none "$tmp/whole.data" -o "$tmp/cut.data" 2>&1 | head -1
target/release/perfz eval "$tmp/whole.data" --min-time 2 --codecs zstd:1,zstd:3,lz4 --format json \
    > "$tmp/eval.json"
python3 - "$tmp/eval.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
print(f"ring bytes {e['raw_bytes']}, given to the codec {e['codec_bytes']}")
for r in e["rows"]:
    print(f"eval {r['spec']:<8} ratio {r['ratio']:.1f} comp {r['compress_mbs_best']:.0f} MB/s "
          f"(median {r['compress_mbs_median']:.0f}) | ring ratio {r['ring_ratio']:.1f} "
          f"ring {r['ring_mbs_best']:.0f} MB/s")
PY
ls -l "$tmp/whole.data" "$tmp/cut.data"
for l in 1 3; do zstd -b$l -i3 "$tmp/cut.data" 2>&1 | tr '\r' '\n' | grep -a 'MB/s' | tail -1; done
lz4 -b1 -i3 "$tmp/cut.data" 2>&1 | tr '\r' '\n' | grep -a 'MB/s' | tail -1
