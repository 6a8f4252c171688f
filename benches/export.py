#!/usr/bin/env python3
"""perfz export vs perf script + a collapse, on the same recording, as
alternating pairs: wall time and peak RSS, medians (min-max).

    benches/export.py [--pairs N] [--seconds S] [--markdown FILE]

Records the repo's workload with frame pointers at 20 kHz for S seconds
(perfz, zstd:3), then times `perfz export -o OUT` against `perf script -F
comm,ip,sym,dso` alone (the lower bound of the perf path) and piped into
the reference collapse of tests/it/export.rs (here in Python). The folded
outputs are compared: a mismatch is reported. Needs root, perf, cc.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="perfz-export-bench-")
    deep = os.path.join(tmp, "deep")
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", deep,
                    os.path.join(ROOT, "tests", "workload", "deep.c")], check=True)
    data = os.path.join(tmp, "fp.data")
    subprocess.run([PERFZ, "record", "-q", "-F", "20000", "-g", "-o", data, "--", deep,
                    str(a.seconds)], check=True)
    out = os.path.join(tmp, "ours.folded")
    runs = {"perfz": [], "script": [], "script+collapse": []}
    same = True
    for i in range(a.pairs):
        for tool in (["perfz", "script"] if i % 2 == 0 else ["script", "perfz"]):
            if tool == "perfz":
                w, rss, _ = timed([PERFZ, "export", "-o", out, data])
                runs["perfz"].append((w, rss))
            else:
                w, rss, text = timed(["perf", "script", "-F", "comm,ip,sym,dso", "-i", data],
                                     stdout=subprocess.PIPE)
                t = time.monotonic()
                folded = collapse(text.decode(errors="replace"))
                c = time.monotonic() - t
                runs["script"].append((w, rss))
                runs["script+collapse"].append((w + c, rss))
                same &= folded == open(out).read()
    size = os.path.getsize(data)
    med = {k: statistics.median(x[0] for x in v) for k, v in runs.items()}

    def cell(k):
        v = [x[0] for x in runs[k]]
        r = [x[1] / 1024 for x in runs[k]]
        return (f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f}) s, "
                f"{statistics.median(r):.0f} MiB")
    lines = [f"Command: `benches/export.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
             f"{a.pairs} alternating pairs; a {a.seconds:g} s fp recording, {size / 1e6:.1f} MB)", "",
             "| path | wall time (min–max), peak RSS | perf path / perfz |", "|---|---|---|",
             f"| perfz export (folded) | {cell('perfz')} | 1 |",
             f"| perf script alone | {cell('script')} | {med['script'] / med['perfz']:.1f} |",
             f"| perf script + reference collapse (Python) | {cell('script+collapse')} "
             f"| {med['script+collapse'] / med['perfz']:.1f} |", "",
             "Outputs identical: " + ("yes" if same else "NO")]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
