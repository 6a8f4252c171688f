#!/usr/bin/env python3
"""What a sample filter (`perfz record --filter EXPR` on a sampling event,
perf's BPF-filter grammar, run by perfz's BPF program in the kernel or in
perfz's push path before the codec) costs the recorder, as alternating
runs of four arms on the same work:

  none      no filter;
  tid       `tid == T`, T one of the workload's 10 busy threads, in the
            kernel: keeps about a tenth of the samples (the kept share is
            measured and shown: other tasks the scheduler puts on the CPU
            lower it);
  tid push  the same in the push path (PERFZ_SAMPLE_FILTER_IN_PUSH_PATH=1);
  ip>0      a filter that keeps every sample, in the kernel: the cost of
            running the program alone.

Each run checks where its filter ran (--stats-json `sample_filter.where`).
The kernel's share of the cost (the program runs at each overflow, on the
sampled CPU) is the workload's, not the recorder's: not in these figures.

    benches/sample_filter.py [--pairs N] [--seconds S] [--perf PERF] [--markdown FILE]

The workload (tests/workload/parallel.c, 10 threads, CPU-bound) runs pinned
to CPU W; each recorder, pinned to CPU R, records CPU W system-wide
(`-C W -e cpu-clock -F 20000 -g ... -- sleep S`, and a second scenario with
`--call-graph dwarf`). Per run: the recorder's own CPU seconds (its rusage
from wait4, user + sys: not the workload's), samples written and samples
the filter dropped (--stats-json), lost samples, the output's bytes. Every
output is read whole by `perfz stat --json` and by `perf report --stats`
(the sample counts must agree with --stats-json), else the bench fails.
Each cell: median (min-max); the ratios to the no-filter arm (medians) come
first, as the figure that holds on a loaded machine; the load average is
noted.

Needs root, cc, perf (to read the outputs back). Builds perfz in release mode.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_perf as v  # noqa: E402

THREADS = 10
SCENARIOS = {
    "fp": ["-F", "20000", "-g"],
    "dwarf": ["-F", "20000", "--call-graph", "dwarf"],
}
ARMS = ["none", "tid", "tid push", "ip>0"]
WHERE = {"none": None, "tid": "kernel", "tid push": "push path", "ip>0": "kernel"}


def build(tmp):
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=v.ROOT, check=True)
    exe = os.path.join(tmp, "parallel")
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", exe,
                    os.path.join(v.ROOT, "tests", "workload", "parallel.c"), "-lpthread"],
                   check=True)
    return exe


def perf_report_samples(perf, path):
    """SAMPLE events as `perf report --stats` counts them; fails where it
    cannot read the file."""
    r = subprocess.run([perf, "report", "--stats", "-i", path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"perf report --stats cannot read {path}: {r.stderr.strip()}")
    # The first count is the aggregate; per-event sections follow.
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "SAMPLE" and f[1] == "events:":
            return int(f[2])
    return 0


def perf_version(perf):
    return subprocess.run([perf, "--version"], capture_output=True, text=True).stdout.strip()


def one(arm, common, tid, a, tmp):
    out = os.path.join(tmp, f"{arm.replace(' ', '-')}.data")
    stats = os.path.join(tmp, "stats.json")
    filt = {"none": [], "tid": ["--filter", f"tid == {tid}"], "ip>0": ["--filter", "ip > 0"]}
    filt["tid push"] = filt["tid"]
    filt = filt[arm]
    # env execs perfz: the rusage is still the recorder's.
    push = ["env", "PERFZ_SAMPLE_FILTER_IN_PUSH_PATH=1"] if arm.endswith("push") else []
    argv = push + [v.PERFZ, "record", "-q", "-C", v.W, "-e", "cpu-clock"] + common + filt + [
        "-o", out, "--stats-json", stats, "--", "sleep", str(a.seconds)]
    cpu, _, _ = v.run_recorder(argv)
    with open(stats) as f:
        s = json.load(f)
    r = subprocess.run([v.PERFZ, "stat", "--json", out], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"perfz stat cannot read {out}: {r.stderr.strip()}")
    st = json.loads(r.stdout)
    read = sum(e["samples"] for e in st["events"])
    theirs = perf_report_samples(a.perf, out)
    if not (read == theirs == s["samples"]):
        sys.exit(f"{arm}: samples written {s['samples']}, perfz stat reads {read}, "
                 f"perf report --stats {theirs}")
    where = s["sample_filter"]["where"] if s["sample_filter"] else None
    if where != WHERE[arm]:
        sys.exit(f"{arm}: the filter ran in {where}, not {WHERE[arm]}: {s['sample_filter']}")
    dropped = s["sample_filter"]["samples_dropped"] if s["sample_filter"] else 0
    row = {"cpu": cpu, "written": s["samples"], "dropped": dropped,
           "lost": max(st["lost_events"], st["lost_samples"]), "bytes": os.path.getsize(out)}
    row["kept"] = 100.0 * row["written"] / max(row["written"] + row["dropped"], 1)
    os.unlink(out)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--perf", default="perf", help="the perf that reads the outputs back")
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    ap.add_argument("--markdown", help="append the table to this file")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="perfz-sample-filter-")
    exe = build(tmp)
    load0 = os.getloadavg()
    wl = subprocess.Popen(["taskset", "-c", v.W, exe, "100000", str(THREADS)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {}
    try:
        time.sleep(0.5)
        tids = sorted(int(t) for t in os.listdir(f"/proc/{wl.pid}/task") if int(t) != wl.pid)
        if len(tids) != THREADS:
            sys.exit(f"workload has {len(tids)} threads, not {THREADS}")
        tid = tids[0]
        for name in a.scenario or list(SCENARIOS):
            runs = {arm: [] for arm in ARMS}
            for i in range(a.pairs):
                for arm in ARMS if i % 2 == 0 else ARMS[::-1]:
                    r = one(arm, SCENARIOS[name], tid, a, tmp)
                    runs[arm].append(r)
                    print(f"{name:<5} pair {i} {arm:<8} cpu {r['cpu']:.2f}s written "
                          f"{r['written']} dropped {r['dropped']} kept {r['kept']:.1f}% "
                          f"lost {r['lost']} bytes {r['bytes']}", file=sys.stderr)
            results[name] = runs
    finally:
        wl.kill()
        wl.wait()
    load1 = os.getloadavg()

    def med(rows, k):
        return statistics.median(r[k] for r in rows)

    lines = [
        f"Command: `benches/sample_filter.py {' '.join(sys.argv[1:])}` "
        f"({time.strftime('%Y-%m-%d')}; read back by {perf_version(a.perf)}; {a.pairs} alternating rounds of the four arms, "
        f"{a.seconds:g} s each; workload `parallel 100000 {THREADS}` on CPU {v.W}, "
        f"perfz on CPU {v.R} recording CPU {v.W} with -e cpu-clock; "
        f"{os.cpu_count()} CPUs, load average {load0[0]:.1f} before, {load1[0]:.1f} after)",
        "",
        "Ratios to the no-filter arm (medians):",
        "",
        "| scenario | filter | recorder CPU × | samples written × | bytes × |",
        "|---|---|---|---|---|",
    ]
    for name, runs in results.items():
        base = runs["none"]
        for arm in ARMS[1:]:
            z = runs[arm]
            lines.append(
                f"| {name} | {arm} | {med(z, 'cpu') / max(med(base, 'cpu'), 1e-9):.2f} "
                f"| {med(z, 'written') / max(med(base, 'written'), 1):.3f} "
                f"| {med(z, 'bytes') / max(med(base, 'bytes'), 1):.3f} |")
    lines += [
        "",
        "Each cell: median (min-max).",
        "",
        "| scenario | filter | recorder CPU s | samples written | samples dropped | kept % "
        "| lost | MB written |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in results.items():
        for arm in ARMS:
            z = runs[arm]
            lines.append(
                f"| {name} | {arm} | {v.spread(z, 'cpu', '{:.3f}')} | {v.spread(z, 'written')} "
                f"| {v.spread(z, 'dropped')} | {v.spread(z, 'kept', '{:.1f}')} "
                f"| {v.spread(z, 'lost')} | {v.spread(z, 'bytes', '{:.2f}', 1e6)} |")
    v.emit("\n".join(lines) + "\n", a.markdown)


if __name__ == "__main__":
    main()
