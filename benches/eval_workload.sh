#!/usr/bin/env bash
# `perfz eval` on the repo's workload: a frame-pointer and a dwarf-stack
# recording (2 s each, codec none), evaluated with the default codec list.
# Writes Markdown tables to stdout and the plots to docs/eval-{fp,dwarf}.svg.
#
#   benches/eval_workload.sh      (needs root and cc)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
perfz=target/release/perfz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$tmp/deep" tests/workload/deep.c
$perfz record --codec none -g -q -o "$tmp/fp.data" -- "$tmp/deep" 2
$perfz record --codec none --call-graph dwarf -q -o "$tmp/dwarf.data" -- "$tmp/deep" 2
for k in fp dwarf; do
    echo "### $k"
    $perfz eval "$tmp/$k.data" --format markdown --plot "docs/eval-$k.svg"
done
