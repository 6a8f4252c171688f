#!/usr/bin/env python3
"""The recorder's own cost before and after a change: two perfz binaries on
vs_perf.py's scenarios, as alternating pairs, the same options for both.

    benches/before_after.py --before OLD_PERFZ [--after NEW_PERFZ] [--pairs N]
                            [--seconds S] [--scenario NAME ...] [--markdown FILE]
                            [--export]

Build the old binary from a worktree, e.g.
    git worktree add /tmp/old REV && (cd /tmp/old && cargo build --release)
    benches/before_after.py --before /tmp/old/target/release/perfz

Same setup as vs_perf.py (workload pinned to CPU 1, recorder to CPU 0,
recording CPU 1 system-wide); each cell is a median (min–max).

--export: each scenario is recorded once (by the new binary), then both
binaries' `perfz export -o FILE.folded` of that same file are timed the
same way (their CPU, alternating pairs); the outputs must be equal.

Besides vs_perf.py's scenarios, perfz's own strategies (no perf to compare):
dwarf-threads-z1 (`--threads`, a directory), dwarf-flight-z1 (the flight
recorder; its last snapshot at the end) and dwarf-switch-z1
(`--switch-output=1s`: outputs handed over and finished every second).
Every output a run leaves is counted (samples, losses, bytes) and removed.
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_perf as v  # noqa: E402

# perfz's own strategies, in vs_perf.py's shape (no perf options).
OWN = {
    "dwarf-threads-z1": ("deep", None, ["--threads", "--codec", "zstd:1"], v.DWARF),
    "dwarf-flight-z1": ("deep", None, ["--flight-recorder", "64M", "--codec", "zstd:1"], v.DWARF),
    "dwarf-switch-z1": ("deep", None, ["--switch-output=1s", "--codec", "zstd:1"], v.DWARF),
    "dwarf-aio-thread-z1": ("deep", None,
                            ["--aio=1", "--aio-backend", "thread", "--codec", "zstd:1"], v.DWARF),
}
SCENARIOS = {**v.SCENARIOS, **OWN}


def outputs(out):
    """Every output a recording to `out` left: the file or directory, and
    the timestamped ones (switches, snapshots)."""
    return ([out] if os.path.exists(out) else []) + sorted(glob.glob(glob.escape(out) + ".*"))


def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def one(exe, opts, common, secs, out):
    argv = [exe, "record", "-q", "-C", v.W] + common + opts + ["-o", out, "--", "sleep", str(secs)]
    cpu, rss, _ = v.run_recorder(argv)
    samples = lost = nbytes = 0
    for o in outputs(out):
        s, lo = v.count(o)
        samples, lost, nbytes = samples + s, lost + lo, nbytes + size(o)
        (shutil.rmtree if os.path.isdir(o) else os.unlink)(o)
    return {"cpu": cpu, "rss_kb": rss, "lost": lost, "samples": samples,
            "bps": nbytes / max(samples, 1)}


def export_pairs(a, name, opts, common, deep, tmp):
    """The export of one recording of `name`, before and after, in pairs."""
    kind = SCENARIOS[name][0]
    wl = v.workload(kind, deep)
    data = os.path.join(tmp, "export.data")
    try:
        argv = [a.after, "record", "-q", "-C", v.W] + common + opts
        v.run_recorder(argv + ["-o", data, "--", "sleep", str(a.seconds)])
    finally:
        wl.kill()
        wl.wait()
    runs, outs = {"before": [], "after": []}, {}
    for i in range(a.pairs):
        for which in (["before", "after"] if i % 2 == 0 else ["after", "before"]):
            exe = a.before if which == "before" else a.after
            out = os.path.join(tmp, f"{which}.folded")
            cpu, rss, _ = v.run_recorder([exe, "export", data, "-o", out])
            runs[which].append({"cpu": cpu, "rss_kb": rss})
            outs[which] = open(out, "rb").read()
            print(f"{name:<10} export pair {i} {which:<6} cpu {cpu:.2f}s", file=sys.stderr)
    same = "same" if outs["before"] == outs["after"] else "DIFFERENT"
    b, f = runs["before"], runs["after"]
    ratio = statistics.median(r["cpu"] for r in f) / max(statistics.median(r["cpu"] for r in b), 1e-9)
    return (f"| {name} export | {v.spread(b, 'cpu', '{:.2f}')} | {v.spread(f, 'cpu', '{:.2f}')} "
            f"| {ratio:.2f} | output {same} | | |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=v.PERFZ)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    ap.add_argument("--markdown")
    ap.add_argument("--export", action="store_true")
    a = ap.parse_args()
    names = a.scenario or ["dwarf-z1", "fp-z1"]
    tmp = tempfile.mkdtemp(prefix="perfz-before-after-")
    deep = v.build(tmp)
    lines = [f"Command: `benches/before_after.py {' '.join(sys.argv[1:])}` "
             f"({time.strftime('%Y-%m-%d')}; {a.pairs} alternating pairs, {a.seconds:g} s each)",
             "", "| scenario | CPU s before | CPU s after | after / before (medians) | lost before "
             "| lost after | bytes/sample before / after |", "|---|---|---|---|---|---|---|"]
    for name in names:
        kind, _, opts, common = SCENARIOS[name]
        if a.export:
            lines.append(export_pairs(a, name, opts, common, deep, tmp))
            continue
        wl = v.workload(kind, deep)
        time.sleep(0.5)
        runs = {"before": [], "after": []}
        try:
            for i in range(a.pairs):
                order = ["before", "after"] if i % 2 == 0 else ["after", "before"]
                for which in order:
                    exe = a.before if which == "before" else a.after
                    r = one(exe, opts, common, a.seconds, os.path.join(tmp, f"{which}.data"))
                    runs[which].append(r)
                    print(f"{name:<10} pair {i} {which:<6} cpu {r['cpu']:.2f}s lost {r['lost']}",
                          file=sys.stderr)
        finally:
            wl.kill()
            wl.wait()
        b, f = runs["before"], runs["after"]
        ratio = statistics.median(r["cpu"] for r in f) / max(statistics.median(r["cpu"] for r in b), 1e-9)
        lines.append(f"| {name} | {v.spread(b, 'cpu', '{:.2f}')} | {v.spread(f, 'cpu', '{:.2f}')} "
                     f"| {ratio:.2f} | {v.spread(b, 'lost')} | {v.spread(f, 'lost')} "
                     f"| {statistics.median(r['bps'] for r in b):.0f} / "
                     f"{statistics.median(r['bps'] for r in f):.0f} |")
    v.emit("\n".join(lines) + "\n", a.markdown)


if __name__ == "__main__":
    main()
