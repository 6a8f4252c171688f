#!/usr/bin/env python3
"""What `perfz export --format speedscope` costs per sample against the
folded export of the same recording: alternating pairs, wall time and
peak RSS (by /usr/bin/time), medians.

    benches/export_formats.py [--pairs N] [--seconds S1,S2] [--modes fp,dwarf]
                              [--formats speedscope,pprof] [--markdown FILE]

Records the repo's workload (tests/workload/deep.c) at 20 kHz with frame
pointers (and, with --modes fp,dwarf, built without them with --call-graph
dwarf) for each of the --seconds, then times `perfz export -o FILE` as
folded and as each of --formats. Per recording: samples, each format's
wall time per sample and peak RSS; the format's RSS above the folded
export's per sample; its output per sample. Between the two recordings'
lengths, the growth of its RSS per added sample. Needs root, cc.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
PERFZ = os.path.join(TARGET, "release", "perfz")


def record(tmp, mode, seconds):
    """A recording of the workload, at 20 kHz."""
    prog = os.path.join(tmp, "deep-" + mode)
    fp = "-fno-omit-frame-pointer" if mode == "fp" else "-fomit-frame-pointer"
    subprocess.run(["cc", "-O1", "-g", fp, "-fno-inline", "-o", prog,
                    os.path.join(ROOT, "tests", "workload", "deep.c")], check=True)
    data = os.path.join(tmp, f"{mode}-{seconds:g}.data")
    cg = ["-g"] if mode == "fp" else ["--call-graph", "dwarf"]
    subprocess.run([PERFZ, "record", "-q", "-F", "20000"] + cg + ["-o", data, "--", prog,
                   str(seconds)], check=True)
    return data


def export(data, fmt, out):
    """Wall seconds, peak RSS (KiB), and the samples perfz export read."""
    t = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", PERFZ, "export", "--format", fmt,
                        "-o", out, data], stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t
    if p.returncode != 0:
        sys.exit(f"perfz export --format {fmt} failed: {p.stderr}")
    samples = int(re.search(r"perfz export: (\d+) samples", p.stderr).group(1))
    return wall, int(p.stderr.strip().splitlines()[-1]), samples


def measure(data, formats, pairs):
    """Medians of (wall, RSS KiB) per format, samples, output bytes per format."""
    runs = {f: [] for f in formats}
    sizes, samples = {}, 0
    for i in range(pairs):
        for fmt in (formats if i % 2 == 0 else formats[::-1]):
            out = f"{data}.{fmt}"
            w, rss, samples = export(data, fmt, out)
            runs[fmt].append((w, rss))
            sizes[fmt] = os.path.getsize(out)
    med = {f: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
           for f, v in runs.items()}
    return med, samples, sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", default="4,8")
    ap.add_argument("--modes", default="fp")
    ap.add_argument("--formats", default="speedscope")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="perfz-export-formats-")
    formats = ["folded"] + a.formats.split(",")
    rows = ["| recording | samples | format | wall (µs/sample) | peak RSS | RSS over folded "
            "(B/sample) | output (B/sample) |", "|---|---|---|---|---|---|---|"]
    for mode in a.modes.split(","):
        seen = []
        for secs in (float(s) for s in a.seconds.split(",")):
            data = record(tmp, mode, secs)
            med, n, sizes = measure(data, formats, a.pairs)
            seen.append((n, med))
            for f in formats:
                w, rss = med[f]
                over = (rss - med["folded"][1]) * 1024 / n
                rows.append(f"| {mode} {secs:g} s | {n} | {f} | {w:.2f} s ({w * 1e6 / n:.2f}) "
                            f"| {rss / 1024:.0f} MiB | {over:.0f} | {sizes[f] / n:.0f} |")
        if len(seen) >= 2:
            (n1, m1), (n2, m2) = seen[0], seen[-1]
            for f in formats:
                slope = (m2[f][1] - m1[f][1]) * 1024 / max(n2 - n1, 1)
                rows.append(f"| {mode}: growth {n1}→{n2} samples | | {f} | | "
                            f"{slope:.0f} B per added sample | | |")
    text = "\n".join([f"Command: `benches/export_formats.py {' '.join(sys.argv[1:])}` "
                      f"({time.strftime('%Y-%m-%d')}; {a.pairs} alternating pairs)", ""] + rows)
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as fh:
            fh.write(text + "\n\n")


if __name__ == "__main__":
    main()
