#!/usr/bin/env bash
# perfz eval against the codecs' own command-line tools, on the same bytes.
#
#   benches/eval_vs_cli.sh [SECONDS] [dwarf|fp] [ROUNDS]
#
# Records the deep.c workload pinned to CPU 1 at 20 kHz — `dwarf`: the
# dwarf scenario of vs_perf.py (--call-graph dwarf,32768); `fp`: -g — with
# --codec none --keep-stack-padding (the ring bytes as the kernel wrote
# them), then, ROUNDS times, alternating:
#   - perfz eval on it: the real push path cuts the stacks as the recorder
#     does; its `ratio`/`comp MB/s` are per byte given to the codec;
#   - `zstd -b1`, `zstd -b3`, `lz4 -b1` on `perfz recompress --codec none`
#     of it: the cut bytes as a file, the same bytes the codec was given.
# ZSTD_CLIS (default "zstd") lists zstd binaries to compare with, e.g. one
# built from the libzstd sources perfz links (zstd-sys bundles 1.5.7;
# Debian's zstd is 1.5.4), to tell the push path from the library version.
# Needs root, a perf-capable kernel, cc, zstd and lz4.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1}
mode=${2:-dwarf}
rounds=${3:-3}
clis=${ZSTD_CLIS:-zstd}
case $mode in
dwarf) cg=(--call-graph dwarf,32768) ;;
fp) cg=(-g) ;;
*) echo "mode: dwarf or fp" >&2; exit 2 ;;
esac
cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" tests/workload/deep.c
taskset -c 1 "$tmp/deep" 100000 & wl=$!
sleep 0.5
taskset -c 0 target/release/perfz record -q -C 1 -F 20000 "${cg[@]}" \
    --codec none --keep-stack-padding -o "$tmp/whole.data" -- sleep "$secs"
kill $wl
target/release/perfz recompress --codec none "$tmp/whole.data" -o "$tmp/cut.data" 2>&1 | head -1
for r in $(seq "$rounds"); do
    echo "round $r"
    target/release/perfz eval "$tmp/whole.data" --min-time 2 --codecs zstd:1,zstd:3,lz4 \
        --format json > "$tmp/eval.json"
    python3 - "$tmp/eval.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
print(f"  ring bytes {e['raw_bytes']}, given to the codec {e['codec_bytes']}")
for r in e["rows"]:
    print(f"  eval {r['spec']:<8} ratio {r['ratio']:.2f} comp {r['compress_mbs_best']:.0f} MB/s "
          f"(median {r['compress_mbs_median']:.0f}), {r['records']} records")
PY
    for z in $clis; do
        for l in 1 3; do
            echo -n "  $z -b$l: "
            "$z" -b$l -i3 "$tmp/cut.data" 2>&1 | tr '\r' '\n' | grep -a 'MB/s' | tail -1
        done
    done
    echo -n "  lz4 -b1: "
    lz4 -b1 -i3 "$tmp/cut.data" 2>&1 | tr '\r' '\n' | grep -a 'MB/s' | tail -1
done
