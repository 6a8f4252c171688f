#!/usr/bin/env bash
# Installs what the tests need, once, on Debian 12 (bookworm) as root: the
# README's test line runs it before `cargo test --workspace`, and so does
# .ci/run. Quick when everything is there already.
#
#   perf 6.1 (linux-perf)     the interop tests read our files with it
#   perf 6.12                 the same tests with a newer perf: bookworm-backports'
#                             linux-perf unpacked under tests/tools/perf-6.12
#                             (never installed over 6.1), run through its wrapper
#   perf 7.3                  the same again: trixie-backports' linux-perf and the
#                             trixie libraries it needs, unpacked under
#                             tests/tools/perf-7.3 and run through its wrapper;
#                             trixie's python3.13 beside it (-X perf)
#   javac (openjdk-17-jdk-headless), python3
#                             the language matrix's Java and Python 3.11 rows
#   cc (gcc), c++ (g++)       build the test workloads (rustc builds the Rust one)
#   ocamlopt (ocaml-nox)      the language matrix's OCaml row
#   erl, erlc (erlang-base)   its Erlang row (BEAM's JIT: a perf map and a jitdump)
#   ld.gold (binutils)        the layouts matrix's gold-linked builds
#   clang-14                  Debian's clang, its code in libLLVM-14 and
#                             libclang-cpp14 (tests/it/layouts.rs); it also
#                             rebuilds the BPF sample filter (tests/it/kernel_filter.rs)
#   inferno 0.12.8            inferno-collapse-perf, the folded reference export is
#                             compared with (cargo install into tests/tools/inferno)
#   setpriv (util-linux)      drops capabilities in one test
#   valgrind                  counts copies per byte (tests/dhat_copies.rs)
#   gdb                       describes a hung test's threads
#   libc6-dbg                 libc's symbols as perf names them (libc's own PLT)
#   llvm-symbolizer (llvm)    the inline frames of split DWARF (.dwo), a reference
#                             for `perfz export --inline` (tests/it/export_inline.rs)
#   go (golang-go)            `go tool pprof` reads `perfz export` profiles
#   node, npm, pprof-format   a second pprof decoder (tests/node)
#   debuginfod                elfutils' server: export fetches a stripped binary's
#                             symbols from it (tests/it/export_debuginfod.rs)
#   speedscope 1.25.0, ajv    speedscope's schema and page for `perfz export
#                             --format speedscope`, a JSON schema validator (tests/node)
#   opentelemetry-proto 1.45  OpenTelemetry's own generated Python classes (PyPI, with
#                             protobuf) in the venv tests/tools/otlp-venv: they decode
#                             `perfz export --format otlp` (tests/otlp/check.py)
#   chromium                  opens `perfz export --format svg` as a person would
#                             (headless: frames drawn, search works)
#
# Elsewhere (not root, not Debian) it names what is missing and how to get it.
set -euo pipefail
cd "$(dirname "$0")/.."

PERF_NEW_VERSION=6.12
PERF_NEW_DIR=tests/tools/perf-$PERF_NEW_VERSION
PERF7_VERSION=7.3
PERF7_DIR=tests/tools/perf-$PERF7_VERSION

need=()
want() { command -v "$1" >/dev/null 2>&1 || need+=("$2"); }
want perf linux-perf
want cc gcc
want c++ g++
want ld.gold binutils
want clang-14 clang-14
want setpriv util-linux
want valgrind valgrind
want gdb gdb
want llvm-symbolizer llvm
want go golang-go
want node nodejs
want npm npm
want chromium chromium
want debuginfod debuginfod
want javac openjdk-17-jdk-headless
want python3 python3
dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q 'ok installed' || need+=(python3-venv)
want ocamlopt ocaml-nox
want erlc erlang-base
# perf 6.12's libraries that bookworm's perf 6.1 does not pull in; the
# fonts chromium only recommends (the flame graph's text); libc's debug
# file, whose .symtab names libc's frames and PLT entries as perf names
# them (tests/it/libc_plt.rs).
for lib in libtraceevent1 libopencsd1 libbabeltrace1 fonts-liberation libc6-dbg; do
    dpkg-query -W -f='${Status}' "$lib" 2>/dev/null | grep -q 'ok installed' || need+=("$lib")
done

fail() {
    echo "tests/setup.sh: $*" >&2
    exit 1
}

if [ ${#need[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 ||
        fail "missing ${need[*]} (Debian package names) and no apt-get here: install their equivalents, then run cargo test --workspace"
    [ "$(id -u)" = 0 ] ||
        fail "missing ${need[*]}: run this as root (sudo tests/setup.sh), or apt-get install -y ${need[*]}"
    echo "tests/setup.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

INFERNO_VERSION=0.12.8
if ! tests/tools/inferno/bin/inferno-collapse-perf --help >/dev/null 2>&1; then
    command -v cargo >/dev/null 2>&1 || fail "inferno $INFERNO_VERSION needs cargo: install Rust (rustup.rs)"
    echo "tests/setup.sh: cargo install inferno $INFERNO_VERSION into tests/tools/inferno"
    cargo install --quiet --locked --version "$INFERNO_VERSION" --root tests/tools/inferno inferno
fi

# The packages tests/node/package.json pins (a package added there is
# installed on the next run).
if [ ! -d tests/node/node_modules/pprof-format ] || [ ! -d tests/node/node_modules/ajv ] ||
    ! grep -qs '"version": "1.25.0"' tests/node/node_modules/speedscope/package.json; then
    echo "tests/setup.sh: npm install --prefix tests/node (pprof-format, speedscope, ajv)"
    npm install --prefix tests/node --no-audit --no-fund --silent
fi

# OpenTelemetry's generated classes for the OTLP profiles tests
# (tests/it/export_otlp.rs, tests/otlp/check.py), in a venv of their own.
OTLP_PROTO_VERSION=1.45.0
OTLP_VENV=tests/tools/otlp-venv
if ! "$OTLP_VENV/bin/python" -c "import opentelemetry.proto.collector.profiles.v1development.profiles_service_pb2" 2>/dev/null ||
    ! "$OTLP_VENV/bin/pip" show opentelemetry-proto 2>/dev/null | grep -qx "Version: $OTLP_PROTO_VERSION"; then
    echo "tests/setup.sh: pip install opentelemetry-proto==$OTLP_PROTO_VERSION into $OTLP_VENV"
    python3 -m venv "$OTLP_VENV"
    "$OTLP_VENV/bin/pip" install --quiet --disable-pip-version-check "opentelemetry-proto==$OTLP_PROTO_VERSION"
fi

# perf 6.12 from bookworm-backports, downloaded with a private apt state (the
# system's sources and packages are left as they are) and unpacked here.
if ! "$PERF_NEW_DIR/perf" --version 2>/dev/null | grep -q "perf version $PERF_NEW_VERSION"; then
    command -v apt-get >/dev/null 2>&1 ||
        fail "perf $PERF_NEW_VERSION comes from Debian bookworm-backports: put a perf $PERF_NEW_VERSION at $PERF_NEW_DIR/perf"
    echo "tests/setup.sh: perf $PERF_NEW_VERSION (bookworm-backports linux-perf) into $PERF_NEW_DIR"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
    key=/usr/share/keyrings/debian-archive-keyring.gpg
    echo "deb [signed-by=$key] http://deb.debian.org/debian bookworm-backports main" >"$tmp/sources.list"
    apt_private=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/nonexistent
        -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o Debug::NoLocking=1
        -o APT::Sandbox::User=root)
    apt-get "${apt_private[@]}" update -qq
    version=$(apt-cache "${apt_private[@]}" madison linux-perf |
        awk -v v="$PERF_NEW_VERSION." '$3 ~ "^" v { print $3; exit }')
    [ -n "$version" ] || fail "bookworm-backports has no linux-perf $PERF_NEW_VERSION.x any more: put a perf $PERF_NEW_VERSION at $PERF_NEW_DIR/perf"
    (cd "$tmp" && apt-get "${apt_private[@]}" download -qq "linux-perf=$version")
    rm -rf "$PERF_NEW_DIR"
    mkdir -p "$PERF_NEW_DIR"
    dpkg -x "$tmp"/linux-perf_*.deb "$PERF_NEW_DIR/root"
    # perf's own shell tests are not ours to run.
    rm -rf "$PERF_NEW_DIR/root/usr/lib/perf-core/tests"
    cat >"$PERF_NEW_DIR/perf" <<'EOF'
#!/bin/sh
# perf from bookworm-backports' linux-perf, unpacked beside the system's (tests/setup.sh).
here=$(dirname "$(readlink -f "$0")")
PERF_EXEC_PATH="$here/root/usr/lib/perf-core" exec "$here/root/usr/bin/perf" "$@"
EOF
    chmod +x "$PERF_NEW_DIR/perf"
    "$PERF_NEW_DIR/perf" --version | grep -q "perf version $PERF_NEW_VERSION" ||
        fail "the unpacked perf does not run: $("$PERF_NEW_DIR/perf" --version 2>&1 | head -1)"
fi

# perf 7.3 from trixie-backports. It needs trixie's libraries (glibc 2.38 and
# up), so a private apt state with trixie's sources and an empty dpkg status
# downloads linux-perf with its whole dependency closure; each package is only
# unpacked here (nothing is installed, the system's sources and packages are
# left as they are), and the wrapper starts perf with trixie's loader and
# libraries. perf's own shell tests stay, for `perf test`:
# tests/tools/perf-7.3/root/usr/lib/perf-core/tests/shell.
if ! "$PERF7_DIR/perf" --version 2>/dev/null | grep -q "perf version $PERF7_VERSION" ||
    ! "$PERF7_DIR/python3.13" -c 'import sys; sys.activate_stack_trampoline("perf")' 2>/dev/null; then
    command -v apt-get >/dev/null 2>&1 ||
        fail "perf $PERF7_VERSION comes from Debian trixie-backports: put a perf $PERF7_VERSION at $PERF7_DIR/perf"
    echo "tests/setup.sh: perf $PERF7_VERSION (trixie-backports linux-perf, trixie libraries) into $PERF7_DIR"
    tmp7=$(mktemp -d)
    trap 'rm -rf "${tmp:-}" "$tmp7"' EXIT
    mkdir -p "$tmp7/lists/partial" "$tmp7/cache/archives/partial" "$tmp7/preferences.d"
    : >"$tmp7/status"
    key=/usr/share/keyrings/debian-archive-keyring.gpg
    printf 'deb [signed-by=%s] http://deb.debian.org/debian %s main\n' \
        "$key" trixie "$key" trixie-backports >"$tmp7/sources.list"
    apt7=(-o "Dir::Etc::SourceList=$tmp7/sources.list" -o Dir::Etc::SourceParts=/nonexistent
        -o "Dir::Etc::Preferences=$tmp7/preferences" -o "Dir::Etc::PreferencesParts=$tmp7/preferences.d"
        -o "Dir::State::Lists=$tmp7/lists" -o "Dir::State::status=$tmp7/status"
        -o "Dir::State::extended_states=$tmp7/extended_states" -o "Dir::Cache=$tmp7/cache"
        -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
    apt-get "${apt7[@]}" update -qq
    version=$(apt-cache "${apt7[@]}" madison linux-perf |
        awk -v v="$PERF7_VERSION." '$3 ~ "^" v && $0 ~ /trixie-backports/ { print $3; exit }')
    [ -n "$version" ] || fail "trixie-backports has no linux-perf $PERF7_VERSION.x any more: put a perf $PERF7_VERSION at $PERF7_DIR/perf"
    DEBIAN_FRONTEND=noninteractive apt-get "${apt7[@]}" install -qq -y --download-only \
        --no-install-recommends -t trixie-backports "linux-perf=$version" python3.13-minimal >/dev/null
    rm -rf "$PERF7_DIR"
    mkdir -p "$PERF7_DIR"
    for deb in "$tmp7"/cache/archives/*.deb; do
        # perl (about 60 MB unpacked) only comes for scripts this perf has no
        # use for (it is built without libperl); its tests' .pl helpers run
        # with the system's perl.
        case ${deb##*/} in perl_* | perl-base_* | perl-modules-* | libperl*) continue ;; esac
        dpkg-deb -x "$deb" "$PERF7_DIR/root"
    done
    cat >"$PERF7_DIR/perf" <<'EOF'
#!/bin/sh
# perf from trixie-backports' linux-perf, unpacked with the trixie libraries it
# needs beside the system's (tests/setup.sh). Trixie's loader starts it with
# trixie's libraries only; what perf starts (perf record's workload) gets the
# system's loader and libraries as usual, since nothing goes into LD_*. perf
# puts the folder of its argv[0] first in the PATH of what it starts (perf
# test's shell tests call `perf`): this one, not root/usr/bin.
here=$(dirname "$(readlink -f "$0")")
root=$here/root
# perf script's embedded Python (libpython3.13) looks for its standard library
# under the system's /usr: point it at trixie's. Only for perf script, as the
# system's python3 inherits it and breaks.
case ${1:-} in script) PYTHONHOME=$root/usr && export PYTHONHOME ;; esac
PERF_EXEC_PATH="$root/usr/lib/perf-core" exec "$root/usr/lib64/ld-linux-x86-64.so.2" \
    --library-path "$root/usr/lib/x86_64-linux-gnu" --argv0 "$here/perf" "$root/usr/bin/perf" "$@"
EOF
    chmod +x "$PERF7_DIR/perf"
    # trixie's Python 3.13 (its -X perf trampolines name Python frames for
    # perf; the language matrix's Python row where no python3.12 is on PATH).
    cat >"$PERF7_DIR/python3.13" <<'EOF'
#!/bin/sh
# trixie's python3.13, unpacked beside perf 7.3 (tests/setup.sh).
here=$(dirname "$(readlink -f "$0")")
root=$here/root
PYTHONHOME=$root/usr exec "$root/usr/lib64/ld-linux-x86-64.so.2" \
    --library-path "$root/usr/lib/x86_64-linux-gnu" --argv0 python3.13 "$root/usr/bin/python3.13" "$@"
EOF
    chmod +x "$PERF7_DIR/python3.13"
    "$PERF7_DIR/perf" --version | grep -q "perf version $PERF7_VERSION" ||
        fail "the unpacked perf $PERF7_VERSION does not run: $("$PERF7_DIR/perf" --version 2>&1 | head -1)"
fi
echo "tests/setup.sh: ready ($(perf --version), $("$PERF_NEW_DIR/perf" --version), $("$PERF7_DIR/perf" --version))"
