#!/usr/bin/env python3
"""Does the loss advice hold? perfz as given against perfz as advised, side
by side, as alternating pairs.

    benches/advice.py [--pairs N] [--seconds S] [--markdown FILE] [-- OPTIONS...]

Records the repo's workload as benches/vs_perf.py does (workload pinned to
CPU 1, the recorder to CPU 0, `-C 1 ... -- sleep S`) with OPTIONS (default:
`-F 20000 --call-graph dwarf,32768 -m 128 --codec zstd:1`, perf's default
ring). A first run gives the advice (`--stats-json`: advice.suggested_dwarf_size
and suggested_pages_with_dwarf, else suggested_pages); then N pairs alternate
the given options and the advised ones. The table gives lost samples
(medians, min-max), the ratio, and the locked ring memory of each. Needs
root, perf (for the workload's build only: cc), cc.
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("vs_perf", os.path.join(HERE, "vs_perf.py"))
vs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vs)


def run(opts, secs, tmp, i):
    out = os.path.join(tmp, f"r{i}.data")
    js = os.path.join(tmp, f"r{i}.json")
    argv = [vs.PERFZ, "record", "-q", "-C", vs.W] + opts + ["--stats-json", js, "-o", out,
                                                              "--", "sleep", str(secs)]
    vs.run_recorder(argv)
    s = json.load(open(js))
    os.unlink(out)
    return s


def advised(opts, advice):
    """OPTIONS with the advice applied: -m and the dwarf size replaced."""
    new, skip = [], False
    for k, o in enumerate(opts):
        if skip:
            skip = False
            continue
        if o == "-m":
            skip = True
            continue
        if o == "--call-graph" and k + 1 < len(opts) and opts[k + 1].startswith("dwarf"):
            skip = True
            continue
        new.append(o)
    dwarf = advice.get("suggested_dwarf_size")
    pages = advice.get("suggested_pages_with_dwarf") if dwarf else advice.get("suggested_pages")
    if dwarf:
        new += ["--call-graph", f"dwarf,{dwarf}"]
    if pages:
        new += ["-m", str(pages)]
    return new


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--markdown")
    ap.add_argument("options", nargs="*")
    a = ap.parse_args()
    opts = a.options or ["-F", "20000", "--call-graph", "dwarf,32768", "-m", "128",
                         "--codec", "zstd:1"]
    tmp = tempfile.mkdtemp(prefix="perfz-advice-")
    deep = vs.build(tmp)
    w = vs.workload("deep", deep)
    try:
        first = None
        for i in range(5):
            s = run(opts, a.seconds, tmp, f"first{i}")
            if s.get("advice") and (s["advice"].get("suggested_pages")
                                    or s["advice"].get("suggested_dwarf_size")):
                first = s
                break
        if first is None:
            sys.exit("no run lost samples: no advice to follow")
        better = advised(opts, first["advice"])
        rows = {"given": [], "advised": []}
        for i in range(a.pairs):
            order = ["given", "advised"] if i % 2 == 0 else ["advised", "given"]
            for which in order:
                s = run(opts if which == "given" else better, a.seconds, tmp, f"{which}{i}")
                rows[which].append(s)
    finally:
        w.kill()
        w.wait()

    def lost(s):
        return max(s["lost_events"], s["lost_samples"])

    def cell(which):
        v = [lost(s) for s in rows[which]]
        pages = rows[which][0]["pages"]
        return (f"{statistics.median(v):.0f} ({min(v)}–{max(v)})",
                f"{pages} pages ({pages * 4096 / (1 << 20):.1f} MiB) x {rows[which][0]['rings']}")
    g, b = cell("given"), cell("advised")
    ratio = (statistics.median(lost(s) for s in rows["advised"])
             / max(statistics.median(lost(s) for s in rows["given"]), 1))
    text = "\n".join([
        f"Command: `benches/advice.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
        f"{a.pairs} alternating pairs, {a.seconds:g} s each)", "",
        f"Advice from the first run that lost samples: {first['advice']['text']}", "",
        "| run | options | lost samples, median (min–max) | locked ring memory |",
        "|---|---|---|---|",
        f"| as given | `{' '.join(opts)}` | {g[0]} | {g[1]} |",
        f"| as advised | `{' '.join(better)}` | {b[0]} | {b[1]} |", "",
        f"Advised / given lost: {ratio:.3f}", ""])
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
