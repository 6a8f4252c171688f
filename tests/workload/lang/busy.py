# The language matrix's Python program: nested Python functions busy until
# the process has used SECONDS of CPU time (however busy the machine). With
# `-X perf` (3.12+) each Python frame gets a trampoline perf names from
# /tmp/perf-PID.map.
import sys
import time


def leaf(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def middle(n):
    return leaf(n) + sorted(str(i) for i in range(n // 10))[0].__len__()


def outer(seconds):
    while time.process_time() < seconds:
        middle(20000)


outer(float(sys.argv[1]))
