#!/usr/bin/env python3
"""Parallel streaming, measured side by side (issue #12).

    benches/threads.py vs-perf [--rounds N] [--seconds S] [--level L] [--markdown FILE]
    benches/threads.py rings   [--threads 1,8,64] [--seconds S] [--markdown FILE]

vs-perf: `-a` over every CPU while a busy workload (tests/workload/deep.c)
runs one thread per CPU, dwarf stacks. Three recorders in rotating order
each round: `perfz --threads`, perfz with one drain thread, and
`perf record --threads -z` (or --compression-level=L), all at zstd level L.
Reported: medians of lost events (max of LOST and LOST_SAMPLES counts),
recorder CPU (user + sys of the recorder process tree, wait4), bytes per
sample, as ratios to perf.

rings: per-thread mode (`--per-thread -p PID`) on a workload with 1, 8 and 64
threads, so 1, 8 and 64 rings, at a rate neither tool loses records at;
perfz and `perf record --per-thread -z` alternate. Reported per MB of trace
(the uncompressed ring bytes): recorder CPU ms, wakeups, and syscalls (counted
by `perf stat -e raw_syscalls:sys_enter` around the recorder).

Needs root, perf (linux-perf), cc. Builds perfz in release mode.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The perf binary (--perf).
PERF = "perf"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_perf import count, perf_samples  # noqa: E402  (same helpers, one place)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")


def build(tmp):
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    deep = os.path.join(tmp, "deep")
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", deep,
                    os.path.join(ROOT, "tests", "workload", "deep.c")], check=True)
    return deep


def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.unlink(path)


def run(argv, syscalls=False):
    """Runs a recorder; returns (cpu s, stderr, syscalls or None)."""
    stat_out = None
    if syscalls:
        fd, stat_out = tempfile.mkstemp(suffix=".csv")
        os.close(fd)
        argv = [PERF, "stat", "-x,", "-o", stat_out, "-e", "raw_syscalls:sys_enter", "--"] + argv
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv} failed: {err}")
    n = None
    if stat_out:
        for line in open(stat_out):
            f = line.split(",")
            if len(f) > 2 and "raw_syscalls:sys_enter" in f[2]:
                n = int(f[0])
        os.unlink(stat_out)
    # perf stat's own CPU is in ru too; it is small and the same for both tools.
    return ru.ru_utime + ru.ru_stime, err, n


def woken(err):
    m = re.search(r"Woken up (\d+) times", err)
    return int(m.group(1)) if m else 0


# ---------------------------------------------------------------- vs-perf

def vs_perf(a, deep, tmp):
    ncpu = os.cpu_count()
    lvl = str(a.level)
    perf_z = ["-z"] if a.level == 1 else [f"--compression-level={lvl}"]
    common = ["-a", "-F", str(a.freq), "--call-graph", f"dwarf,{a.stack}"]
    tools = {
        "perfz --threads": [PERFZ, "record", "-q", "--threads", "--codec", f"zstd:{lvl}"],
        "perfz 1 drain": [PERFZ, "record", "-q", "--codec", f"zstd:{lvl}"],
        "perf --threads": [PERF, "record", "-q", "--threads"] + perf_z,
    }
    runs = {t: [] for t in tools}
    wl = subprocess.Popen([deep, "100000", str(ncpu)], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        names = list(tools)
        for i in range(a.rounds):
            order = names[i % 3:] + names[:i % 3]
            for t in order:
                out = os.path.join(tmp, "t.data")
                remove(out)
                cpu, _, _ = run(tools[t] + common + ["-o", out, "--", "sleep", str(a.seconds)])
                samples, lost = count(out)
                r = {"cpu": cpu, "lost": lost, "samples": samples, "bytes": size(out),
                     "perf_agrees": perf_samples(out) == samples}
                r["bps"] = r["bytes"] / max(samples, 1)
                runs[t].append(r)
                print(f"round {i} {t:<16} cpu {cpu:.2f}s lost {lost:>7} samples {samples:>7} "
                      f"B/sample {r['bps']:.0f}{'' if r['perf_agrees'] else ' PERF DISAGREES'}",
                      file=sys.stderr)
                remove(out)
    finally:
        wl.kill()
        wl.wait()
    med = {t: {k: statistics.median(r[k] for r in rs) for k in ("cpu", "lost", "samples", "bps")}
           for t, rs in runs.items()}
    p = med["perf --threads"]
    lines = [f"Command: `benches/threads.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
             f"{a.rounds} rounds in rotating order, {a.seconds:g} s each, medians; `-a` on {ncpu} CPUs, "
             f"deep.c with {ncpu} threads, `-F {a.freq} --call-graph dwarf,{a.stack}`, zstd level {lvl})",
             "", "| recorder | CPU s | lost | samples | bytes/sample | CPU × perf | lost × perf | bytes × perf |",
             "|---|---|---|---|---|---|---|---|"]
    for t, m in med.items():
        lost_x = "—" if p["lost"] == 0 else f"{m['lost'] / p['lost']:.2f}"
        lines.append(f"| {t} | {m['cpu']:.2f} | {m['lost']:.0f} | {m['samples']:.0f} | {m['bps']:.0f} "
                     f"| {m['cpu'] / max(p['cpu'], 1e-9):.2f} | {lost_x} | {m['bps'] / max(p['bps'], 1e-9):.2f} |"
                     + ("" if all(r["perf_agrees"] for r in runs[t]) else " (perf's count differs!)"))
    return "\n".join(lines), runs


# ---------------------------------------------------------------- rings

def rings(a, deep, tmp):
    counts = [int(x) for x in a.threads.split(",")]
    common = ["--per-thread", "-F", str(a.freq), "--call-graph", f"dwarf,{a.stack}"]
    rows = []
    raw = {}
    for n in counts:
        wl = subprocess.Popen([deep, "100000", str(n)], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        pid = str(wl.pid)
        runs = {"perfz": [], "perf": []}
        try:
            for i in range(a.pairs):
                for tool in (["perfz", "perf"] if i % 2 == 0 else ["perf", "perfz"]):
                    out = os.path.join(tmp, f"{tool}.data")
                    remove(out)
                    json_out = os.path.join(tmp, "s.json")
                    if tool == "perfz":
                        argv = [PERFZ, "record", "--codec", "zstd:1", "--stats-json", json_out]
                    else:
                        argv = [PERF, "record", "-z"]
                    argv += common + ["-p", pid, "-o", out, "--", "sleep", str(a.seconds)]
                    cpu, err, sysc = run(argv, syscalls=True)
                    samples, lost = count(out)
                    if tool == "perfz":
                        s = json.load(open(json_out))
                        trace, wake = s["ring_bytes"], s["wakeups"]
                        assert s["rings"] == n, s["rings"]
                    else:
                        m = re.search(r"original ([\d.]+) MB", err)
                        trace, wake = (float(m.group(1)) * 1e6 if m else 0), woken(err)
                    mb = max(trace, 1) / 1e6
                    r = {"cpu_ms_per_mb": cpu * 1e3 / mb, "wakeups_per_mb": wake / mb,
                         "syscalls_per_mb": (sysc or 0) / mb, "lost": lost, "samples": samples,
                         "mb": mb}
                    runs[tool].append(r)
                    print(f"{n:>3} threads pair {i} {tool:<5} {mb:7.1f} MB  cpu {r['cpu_ms_per_mb']:.2f} ms/MB "
                          f"wakeups {r['wakeups_per_mb']:.2f}/MB syscalls {r['syscalls_per_mb']:.1f}/MB "
                          f"lost {lost}", file=sys.stderr)
                    remove(out)
        finally:
            wl.kill()
            wl.wait()
        raw[n] = runs
        row = {"rings": n}
        for tool, rs in runs.items():
            for k in ("cpu_ms_per_mb", "wakeups_per_mb", "syscalls_per_mb", "lost", "mb"):
                row[f"{tool}_{k}"] = statistics.median(r[k] for r in rs)
        rows.append(row)
    lines = [f"Command: `benches/threads.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
             f"{a.pairs} alternating pairs, {a.seconds:g} s each, medians; `--per-thread -p PID "
             f"-F {a.freq} --call-graph dwarf,{a.stack}`, zstd level 1; per MB of uncompressed trace)",
             "", "| rings | MB traced perfz / perf | CPU ms/MB perfz / perf | wakeups/MB perfz / perf "
             "| syscalls/MB perfz / perf | lost perfz / perf |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rings']} | {r['perfz_mb']:.0f} / {r['perf_mb']:.0f} "
                     f"| {r['perfz_cpu_ms_per_mb']:.2f} / {r['perf_cpu_ms_per_mb']:.2f} "
                     f"| {r['perfz_wakeups_per_mb']:.2f} / {r['perf_wakeups_per_mb']:.2f} "
                     f"| {r['perfz_syscalls_per_mb']:.1f} / {r['perf_syscalls_per_mb']:.1f} "
                     f"| {r['perfz_lost']:.0f} / {r['perf_lost']:.0f} |")
    return "\n".join(lines), raw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", default="perf", help="the perf to compare with and read with (e.g. tests/tools/perf-6.12/perf, which tests/setup.sh unpacks)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("vs-perf")
    v.add_argument("--rounds", type=int, default=5)
    v.add_argument("--seconds", type=float, default=3)
    v.add_argument("--level", type=int, default=1)
    v.add_argument("--freq", type=int, default=20000)
    v.add_argument("--stack", type=int, default=32768)
    r = sub.add_parser("rings")
    r.add_argument("--threads", default="1,8,64")
    r.add_argument("--pairs", type=int, default=3)
    r.add_argument("--seconds", type=float, default=3)
    r.add_argument("--freq", type=int, default=1000)
    r.add_argument("--stack", type=int, default=8192)
    for p in (v, r):
        p.add_argument("--markdown", help="append the table to this file")
        p.add_argument("--json", help="write every run to this file")
    a = ap.parse_args()
    global PERF
    PERF = a.perf
    tmp = tempfile.mkdtemp(prefix="perfz-threads-")
    deep = build(tmp)
    table, raw = (vs_perf if a.cmd == "vs-perf" else rings)(a, deep, tmp)
    print(table)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(table + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
