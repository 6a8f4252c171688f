#!/usr/bin/env bash
# Builds every fuzz target (no sanitizer: the stable toolchain with
# RUSTC_BOOTSTRAP=1) and runs each for FUZZ_SECONDS (default 60) from the
# committed seeds, in a scratch corpus so the seeds stay as committed.
# A crash, a leak past the RSS limit or a timeout fails the script.
#
#   fuzz/run-smoke.sh                  # 60 s per target
#   FUZZ_SECONDS=20 fuzz/run-smoke.sh  # what CI runs
#   FUZZ_TARGETS="read_file ring" fuzz/run-smoke.sh
set -euo pipefail
cd "$(dirname "$0")"
secs=${FUZZ_SECONDS:-60}
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
targets=${FUZZ_TARGETS:-$(cargo fuzz list)}
cargo fuzz build -s none
# glibc raises its mmap threshold to the size of each large block freed (up
# to 32 MiB), so the blocks after it come from the heap and stay resident
# when freed: read_file's RSS reached 1058 MB in 20 s (zstd's window for a
# frame that claims a large one is tens of MiB, as perf -z 22's is), while
# no input alone takes 100 MB. A fixed threshold returns every large block
# when it is freed: the RSS limit below then holds what inputs keep.
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf "%-14s %12s %8s\n" target executions seconds
for t in $targets; do
    mkdir -p "$work/$t"
    log="$work/$t.log"
    # -rss_limit_mb: memory must stay bounded whatever the input claims.
    if ! cargo fuzz run -s none "$t" "$work/$t" "corpus/$t" -- \
            -max_total_time="$secs" -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
        echo "fuzz target $t failed:" >&2
        tail -40 "$log" >&2
        exit 1
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tr -dc '0-9')
    printf "%-14s %12s %8s\n" "$t" "${runs:-?}" "$secs"
done
