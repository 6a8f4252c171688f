#!/usr/bin/env bash
# Runs a command; if it is still running after LIMIT seconds, prints where
# every process under it waits (kernel wait channel and stack, and gdb's
# backtrace of every thread where gdb is installed), then kills the tree.
# A hang then fails CI with the place it hangs in, before CI's own limit.
# Usage: .ci/watchdog.sh LIMIT COMMAND [ARGS...]
set -u
limit=$1; shift
"$@" &
pid=$!
tree() { # pid and its descendants
    local p=$1; echo "$p"
    for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do tree "$c"; done
}
dump() {
    # Only the end of CI's output may be kept: user-space backtraces first,
    # then what the kernel says of every task (io-wq workers included), last.
    echo "== watchdog: '$*' still runs after ${limit} s"
    if command -v gdb >/dev/null 2>&1; then
        for p in $(tree "$pid"); do
            echo "-- gdb $p: $(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null | cut -c1-200)"
            timeout 60 gdb -p "$p" -batch -nx -ex 'thread apply all bt 12' 2>/dev/null |
                grep -E '^(Thread|#)' | grep -v ' in std::\| in core::\| in proptest::' | head -80 | sed 's/^/   /'
        done
    fi
    echo "== where each process waits:"
    ps -o pid,ppid,etimes,stat,wchan:32,args --forest -g "$(ps -o sid= -p $$ | tr -d ' ')" 2>/dev/null || ps -ef --forest
    for p in $(tree "$pid"); do
        echo "-- $p: $(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null | cut -c1-200)"
        for t in /proc/"$p"/task/*; do
            echo "   task ${t##*/} $(cat "$t"/comm 2>/dev/null) $(cut -d' ' -f3 "$t"/stat 2>/dev/null) wchan $(cat "$t"/wchan 2>/dev/null)"
            head -8 "$t"/stack 2>/dev/null | sed 's/^/      /'
        done
    done
    echo "== machine:"
    grep -E 'MemAvailable|Dirty|Writeback:' /proc/meminfo
    head -2 /proc/pressure/io /proc/pressure/memory 2>/dev/null
    df -h /tmp . 2>/dev/null
}
(
    # Polls the command, bounded by LIMIT (this is CI glue, not a test).
    t=0
    while [ "$t" -lt "$limit" ] && kill -0 "$pid" 2>/dev/null; do sleep 5; t=$((t + 5)); done
    if kill -0 "$pid" 2>/dev/null; then
        dump "$@"
        for p in $(tree "$pid"); do kill -9 "$p" 2>/dev/null; done
    fi
) &
dog=$!
wait "$pid"
rc=$?
kill "$dog" 2>/dev/null
wait "$dog" 2>/dev/null
exit "$rc"
