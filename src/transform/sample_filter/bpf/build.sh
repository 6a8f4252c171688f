#!/bin/sh
# Rebuilds sample_filter.bpf.o from sample_filter.bpf.c (both committed;
# perfz includes the object, so building perfz needs no clang). CLANG
# names the compiler (default: clang-14, else clang).
set -eu
cd "$(dirname "$0")"
CLANG=${CLANG:-$(command -v clang-14 || command -v clang)}
"$CLANG" -target bpf -O2 -g -c sample_filter.bpf.c -o "${1:-sample_filter.bpf.o}"
