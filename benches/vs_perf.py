#!/usr/bin/env python3
"""perfz record vs perf record, side by side, as alternating A/B pairs.

    benches/vs_perf.py [--pairs N] [--seconds S] [--scenario NAME ...] [--markdown FILE]

The workload runs pinned to one CPU (W), the recorder pinned to the other (R),
recording CPU W system-wide (`-C W ... -- sleep S`), so the recorder's own
resource usage (wait4 of the recorder process: user + sys CPU, peak RSS) does
not include the workload. Each pair runs perf then perfz (or the reverse, by
pair parity) with the same options; the table gives medians per tool and the
ratio perfz / perf, and the three ratios are printed last.

Lost = max(events in LOST records, LOST_SAMPLES counts), since the kernel
counts each lost sample in both; perf's own count ("Total Lost Samples" of
`perf report`) is shown beside it. Samples are counted by perfz's reader and,
for every file, by `perf report --stats` (a mismatch is reported). Every
figure is a median with the min-max of its runs: losses move a lot between
runs. The `-keep` scenarios run perfz with `--keep-stack-padding` (the same
bytes perf compresses): set beside their plain twins they separate the
stack cut from everything else.

Needs root, perf (linux-perf), cc. Builds perfz in release mode.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The perf binary (--perf).
PERF = "perf"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")
W, R = "1", "0"  # workload CPU, recorder CPU

DWARF = ["-F", "20000", "--call-graph", "dwarf,32768"]
FP = ["-F", "20000", "-g"]

# name: (workload, perf options, perfz options, common options)
SCENARIOS = {
    "dwarf-z1": ("deep", ["-z"], ["--codec", "zstd:1"], DWARF),
    "dwarf-z1-keep": ("deep", ["-z"], ["--codec", "zstd:1", "--keep-stack-padding"], DWARF),
    "dwarf-z3": ("deep", ["--compression-level=3"], ["--codec", "zstd:3"], DWARF),
    "dwarf-z3-keep": ("deep", ["--compression-level=3"],
                      ["--codec", "zstd:3", "--keep-stack-padding"], DWARF),
    "dwarf-aio-z1": ("deep", ["--aio", "-z"], ["--aio=1", "--codec", "zstd:1"], DWARF),
    "dwarf-aio-z3": ("deep", ["--aio", "--compression-level=3"], ["--aio=1", "--codec", "zstd:3"], DWARF),
    "dwarf-none": ("deep", [], ["--codec", "none"], DWARF),
    # Equal rings: both at perf's default -m (perfz sizes dwarf rings itself).
    "dwarf-z1-m128": ("deep", ["-z"], ["--codec", "zstd:1"], DWARF + ["-m", "128"]),
    "dwarf-z3-m128": ("deep", ["--compression-level=3"], ["--codec", "zstd:3"], DWARF + ["-m", "128"]),
    "dwarf-aio-z1-m128": ("deep", ["--aio", "-z"], ["--aio=1", "--codec", "zstd:1"],
                          DWARF + ["-m", "128"]),
    "dwarf-z1-m128-keep": ("deep", ["-z"], ["--codec", "zstd:1", "--keep-stack-padding"],
                           DWARF + ["-m", "128"]),
    "dwarf-aio-z1-m128-keep": ("deep", ["--aio", "-z"],
                               ["--aio=1", "--codec", "zstd:1", "--keep-stack-padding"],
                               DWARF + ["-m", "128"]),
    "dwarf-aio-z3-m128": ("deep", ["--aio", "--compression-level=3"],
                          ["--aio=1", "--codec", "zstd:3"], DWARF + ["-m", "128"]),
    "fp-z1": ("deep", ["-z"], ["--codec", "zstd:1"], FP),
    "fp-z3": ("deep", ["--compression-level=3"], ["--codec", "zstd:3"], FP),
    "switch-z1": ("pipe", ["-z"], ["--codec", "zstd:1"], ["-F", "20000", "-g", "--switch-events"]),
}


def build(tmp):
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    deep = os.path.join(tmp, "deep")
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", deep,
                    os.path.join(ROOT, "tests", "workload", "deep.c")], check=True)
    return deep


def workload(kind, deep):
    """Starts the pinned workload; returns the Popen."""
    if kind == "deep":
        cmd = [deep, "100000"]
    else:  # context-switch heavy: two tasks ping-ponging over a pipe on one CPU
        cmd = [PERF, "bench", "sched", "pipe", "-l", "1000000000"]
    return subprocess.Popen(["taskset", "-c", W] + cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def run_recorder(argv):
    """Runs argv pinned to CPU R; returns (cpu seconds, peak RSS KiB, wall s)."""
    t = time.monotonic()
    p = subprocess.Popen(["taskset", "-c", R] + argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} failed ({p.returncode}): {err}")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss, time.monotonic() - t


def perf_samples(path):
    out = subprocess.run([PERF, "report", "--stats", "-i", path], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith("SAMPLE events:"):
            return int(line.split()[2])
    return -1


def perf_lost(path):
    """perf's own count of lost samples ("Total Lost Samples")."""
    out = subprocess.run([PERF, "report", "--stdio", "-g", "none", "--sort", "comm", "-i", path],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Total Lost Samples:" in line:
            return int(line.split(":")[1])
    return -1


def count(path):
    s = json.loads(subprocess.run([PERFZ, "stat", "--json", path], capture_output=True,
                                  text=True, check=True).stdout)
    samples = sum(e["samples"] for e in s["events"])
    lost = max(s["lost_events"], s["lost_samples"])
    return samples, lost


def one(tool, opts, common, secs, out):
    exe = PERF if tool == "perf" else PERFZ
    argv = [exe, "record", "-q", "-C", W] + common + opts + ["-o", out, "--", "sleep", str(secs)]
    cpu, rss, wall = run_recorder(argv)
    samples, lost = count(out)
    theirs = perf_samples(out)
    r = {"cpu": cpu, "rss_kb": rss, "lost": lost, "perf_lost": perf_lost(out), "samples": samples,
         "bytes": os.path.getsize(out), "perf_agrees": theirs == samples, "wall": wall}
    r["bytes_per_sample"] = r["bytes"] / max(samples, 1)
    os.unlink(out)
    return r


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def emit(text, markdown):
    """Prints a table, and appends it to the file `markdown` where given."""
    print(text)
    if markdown:
        with open(markdown, "a") as fh:
            fh.write(text + "\n")


def spread(rows, key, fmt="{:.0f}", scale=1.0):
    """median (min-max)"""
    v = [r[key] / scale for r in rows]
    return (fmt.format(statistics.median(v)) + " (" + fmt.format(min(v)) + "–"
            + fmt.format(max(v)) + ")")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", default="perf", help="the perf to compare with and read with (e.g. tests/tools/perf-6.12/perf, which tests/setup.sh unpacks)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    ap.add_argument("--markdown", help="append the table to this file")
    ap.add_argument("--json", help="write every run to this file")
    a = ap.parse_args()
    global PERF
    PERF = a.perf
    names = a.scenario or list(SCENARIOS)
    tmp = tempfile.mkdtemp(prefix="perfz-vs-perf-")
    deep = build(tmp)
    rows = []
    raw = {}
    for name in names:
        kind, perf_opts, perfz_opts, common = SCENARIOS[name]
        wl = workload(kind, deep)
        time.sleep(0.5)
        runs = {"perf": [], "perfz": []}
        try:
            for i in range(a.pairs):
                order = ["perf", "perfz"] if i % 2 == 0 else ["perfz", "perf"]
                for tool in order:
                    opts = perf_opts if tool == "perf" else perfz_opts
                    r = one(tool, opts, common, a.seconds, os.path.join(tmp, f"{tool}.data"))
                    runs[tool].append(r)
                    print(f"{name:<14} pair {i} {tool:<5} cpu {r['cpu']:.2f}s lost {r['lost']:>6} "
                          f"samples {r['samples']:>6} B/sample {r['bytes_per_sample']:.0f} "
                          f"rss {r['rss_kb']} KiB{'' if r['perf_agrees'] else ' PERF DISAGREES'}",
                          file=sys.stderr)
        finally:
            wl.kill()
            wl.wait()
        raw[name] = runs
        p, z = runs["perf"], runs["perfz"]
        row = {"scenario": name}
        for k in ("cpu", "lost", "perf_lost", "bytes_per_sample", "rss_kb", "samples"):
            row[f"perf_{k}"] = med(p, k)
            row[f"perfz_{k}"] = med(z, k)
        row["text"] = {
            tool: {
                "cpu": spread(rs, "cpu", "{:.2f}"),
                "lost": spread(rs, "lost"),
                "perf_lost": spread(rs, "perf_lost"),
                "bps": spread(rs, "bytes_per_sample"),
                "rss": spread(rs, "rss_kb", "{:.1f}", 1024.0),
            }
            for tool, rs in (("perf", p), ("perfz", z))
        }
        row["cpu_ratio"] = row["perfz_cpu"] / max(row["perf_cpu"], 1e-9)
        row["lost_ratio"] = (row["perfz_lost"] / row["perf_lost"]) if row["perf_lost"] else (
            0.0 if row["perfz_lost"] == 0 else float("inf"))
        row["bytes_ratio"] = row["perfz_bytes_per_sample"] / max(row["perf_bytes_per_sample"], 1e-9)
        row["perf_agrees"] = all(r["perf_agrees"] for r in z)
        rows.append(row)
    cmd = "benches/vs_perf.py " + " ".join(sys.argv[1:])
    lines = [f"Command: `{cmd}` ({time.strftime('%Y-%m-%d')}; {a.pairs} alternating pairs, "
             f"{a.seconds:g} s each, medians; workload on CPU {W}, recorder on CPU {R}; "
             f"{subprocess.run([PERF, '--version'], capture_output=True, text=True).stdout.strip()})", "",
             "Each cell: median (min–max). Lost: by perfz's reader (LOST + LOST_SAMPLES), "
             "and as `perf report` counts it (Total Lost Samples).", "",
             "| scenario | CPU s perfz | CPU s perf | lost perfz | lost perf | perf report lost "
             "perfz / perf | bytes/sample perfz | bytes/sample perf | peak RSS MiB perfz / perf "
             "| CPU × | lost × | bytes × |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lr = "—" if r["perf_lost"] == 0 and r["perfz_lost"] == 0 else f"{r['lost_ratio']:.2f}"
        tz, tp = r["text"]["perfz"], r["text"]["perf"]
        lines.append(
            f"| {r['scenario']} | {tz['cpu']} | {tp['cpu']} | {tz['lost']} | {tp['lost']} "
            f"| {tz['perf_lost']} / {tp['perf_lost']} | {tz['bps']} | {tp['bps']} "
            f"| {tz['rss']} / {tp['rss']} "
            f"| {r['cpu_ratio']:.2f} | {lr} | {r['bytes_ratio']:.2f} |"
            + ("" if r["perf_agrees"] else " (perf's sample count differs from ours!)"))
    table = "\n".join(lines)
    print(table)
    print()
    for r in rows:
        print(f"{r['scenario']:<14} CPU ×{r['cpu_ratio']:.2f}  lost ×{r['lost_ratio']:.2f}  "
              f"bytes ×{r['bytes_ratio']:.2f}")
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(table + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
