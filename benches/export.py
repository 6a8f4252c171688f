#!/usr/bin/env python3
"""perfz export vs perf script + a collapse, on the same recording, as
alternating pairs: wall time and peak RSS, medians (min-max).

    benches/export.py [--pairs N] [--seconds S] [--dwarf-seconds S]
                      [--modes fp,dwarf] [--markdown FILE]

Records the repo's workload at 20 kHz (perfz, zstd:3): with frame pointers
for S seconds, and built without frame pointers with `--call-graph dwarf`
for --dwarf-seconds (3 s: about 500 MB of ring data). Then times `perfz
export -o OUT` against `perf script -F comm,ip,sym,dso` alone (the lower
bound of the perf path) and piped into the reference collapse of
tests/it/export.rs (here in Python), both without inline frames
(`--no-inline`), and `perfz export --inline` against `perf script
--inline` + the collapse. The folded outputs are compared: a mismatch is
reported. Needs root, perf, cc.
"""

import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The perf binary (--perf).
PERF = "perf"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")


def collapse(text):
    counts = collections.Counter()
    comm, stack = None, []

    def flush():
        nonlocal comm, stack
        if comm is not None:
            counts[";".join([comm.replace(" ", "_")] + stack[::-1])] += 1
        comm, stack = None, []

    for line in text.splitlines():
        if not line.strip():
            flush()
        elif not line.startswith((" ", "\t")):
            flush()
            comm = line.split("\t")[0].rstrip()
        else:
            m = re.match(r"^\s*[0-9a-f]+\s+(.+) \((\S*)\)$", line)
            if m:
                func, mod = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)
                if func == "[unknown]":
                    func = mod.split("/")[-1] if mod != "[unknown]" else "unknown"
                stack.append(func)
    flush()
    return "".join(f"{k} {counts[k]}\n" for k in sorted(counts))


def timed(argv, stdout=subprocess.DEVNULL):
    """Wall seconds, peak RSS in KiB (by /usr/bin/time: a forked Python
    child would report this script's own pages), and stdout if piped."""
    t = time.monotonic()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M"] + argv, stdout=stdout,
                         stderr=subprocess.PIPE)
    out = p.stdout.read() if stdout == subprocess.PIPE else None
    err = p.stderr.read().decode(errors="replace")
    if p.wait() != 0:
        sys.exit(f"{argv[0]} failed: {err}")
    return time.monotonic() - t, int(err.strip().splitlines()[-1]), out


def record(tmp, mode, seconds):
    """A recording of the workload; its path and MB of ring data."""
    prog = os.path.join(tmp, "deep-" + mode)
    fp = "-fno-omit-frame-pointer" if mode == "fp" else "-fomit-frame-pointer"
    subprocess.run(["cc", "-O1", "-g", fp, "-fno-inline", "-o", prog,
                    os.path.join(ROOT, "tests", "workload", "deep.c")], check=True)
    data = os.path.join(tmp, mode + ".data")
    cg = ["-g"] if mode == "fp" else ["--call-graph", "dwarf"]
    p = subprocess.run([PERFZ, "record", "-F", "20000"] + cg + ["-o", data, "--", prog,
                       str(seconds)], check=True, stderr=subprocess.PIPE, text=True)
    m = re.search(r"original ([0-9.]+) MB", p.stderr)
    return data, float(m.group(1)) if m else float("nan")


def compare(data, pairs, inline):
    """Alternating pairs of perfz export and perf script (+ collapse)."""
    out = data + (".inline" if inline else "") + ".folded"
    runs = {"perfz": [], "script": [], "script+collapse": []}
    same = ""
    perf_inlined = 0
    flag = ["--inline"] if inline else []
    for i in range(pairs):
        for tool in (["perfz", "script"] if i % 2 == 0 else ["script", "perfz"]):
            if tool == "perfz":
                w, rss, _ = timed([PERFZ, "export"] + flag + ["-o", out, data])
                runs["perfz"].append((w, rss))
            else:
                w, rss, text = timed([PERF, "script", "--inline" if inline else "--no-inline",
                                      "-F", "comm,ip,sym,dso", "-i", data],
                                     stdout=subprocess.PIPE)
                t = time.monotonic()
                folded = collapse(text.decode(errors="replace"))
                c = time.monotonic() - t
                runs["script"].append((w, rss))
                runs["script+collapse"].append((w + c, rss))
                same = agreement(folded, open(out).read())
                perf_inlined = text.count(b"(inlined)")
    if inline and perf_inlined == 0:
        same += " (perf 6.1 printed no inline frame: it shows them on dwarf-unwound chains only)"
    return runs, same


def agreement(theirs, ours):
    """How many samples have the same folded stack in both."""
    def counts(text):
        c = collections.Counter()
        for line in text.splitlines():
            stack, n = line.rsplit(" ", 1)
            c[stack] += int(n)
        return c
    a, b = counts(theirs), counts(ours)
    same = sum(min(n, b[k]) for k, n in a.items())
    total = sum(a.values())
    return "all" if a == b else f"{same} of {total} samples"


def table(runs, same, label):
    med = {k: statistics.median(x[0] for x in v) for k, v in runs.items()}

    def cell(k):
        v = [x[0] for x in runs[k]]
        r = [x[1] / 1024 for x in runs[k]]
        return (f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f}) s, "
                f"{statistics.median(r):.0f} MiB")
    return [f"| {label}: perfz export | {cell('perfz')} | 1 |",
            f"| {label}: perf script alone | {cell('script')} | {med['script'] / med['perfz']:.1f} |",
            f"| {label}: perf script + reference collapse (Python) | {cell('script+collapse')} "
            f"| {med['script+collapse'] / med['perfz']:.1f} |",
            f"| {label}: samples with the same folded stack | {same} | |"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", default="perf", help="the perf to compare with and read with (e.g. tests/tools/perf-6.12/perf, which tests/setup.sh unpacks)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--dwarf-seconds", type=float, default=3)
    ap.add_argument("--modes", default="fp,dwarf")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    global PERF
    PERF = a.perf
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="perfz-export-bench-")
    lines = [f"Command: `benches/export.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
             f"{a.pairs} alternating pairs per row group)", ""]
    rows = ["| recording: path | wall time (min–max), peak RSS | perf path / perfz |",
            "|---|---|---|"]
    for mode in a.modes.split(","):
        secs = a.seconds if mode == "fp" else a.dwarf_seconds
        data, ring = record(tmp, mode, secs)
        size = os.path.getsize(data) / 1e6
        what = f"{mode} {secs:g} s ({ring:.0f} MB ring data, {size:.1f} MB file)"
        for inline in (False, True):
            runs, same = compare(data, a.pairs, inline)
            rows += table(runs, same, what + (", inline frames" if inline else ""))
    text = "\n".join(lines + rows) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
