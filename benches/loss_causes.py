#!/usr/bin/env python3
"""What ran on the recorder's CPU when samples were lost, for perfz and perf side by side.

    benches/loss_causes.py [--pairs N] [--seconds S] [--scenario NAME ...] [--markdown FILE]

Runs the scenarios of benches/vs_perf.py (default: the equal-ring ones, where
losses are large enough to attribute) as alternating perf/perfz pairs, each
recorder wrapped in `perf sched record -C R` so that every context switch on the
recorder's CPU is traced beside the recording. Every LOST record of the
recording (`perf script --show-lost-events`) is then matched against that CPU's
schedule (`perf sched timehist`): the longest stretch another task ran on the
recorder's CPU in the WINDOW_MS before the loss is blamed when it is at least
BLAME_MS (half the time a 512 KiB ring holds at 20 kHz of dwarf,32768 samples);
otherwise nothing else held its CPU ("no other task"), and the loss goes to
the longer of the recorder's own longest stretch in the window ("the recorder
running": its own work) and the CPU's longest idle stretch ("its CPU idle":
the recorder was woken late, such as an idle vCPU's wake-up).

The tracer costs both tools the same; its numbers are for attribution, not for
the loss tables of vs_perf.py.

Needs root, perf (linux-perf), cc. Builds perfz in release mode.
"""

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_perf  # noqa: E402  (the scenarios, the workload and the counting)

WINDOW_MS = 6.0
BLAME_MS = 0.4
DEFAULT = ["dwarf-z1-m128", "dwarf-aio-z1-m128"]


def category(comm, child):
    """Names the kind of task a stretch on the recorder's CPU belongs to."""
    name = comm.split("[")[0]
    if name == child:
        return f"the command ({child}: its exec)"
    if name.startswith("kdamond"):
        return "kdamond (DAMON)"
    if name.startswith(("kworker", "ksoftirqd", "kcompactd", "rcu", "migration", "kswapd")):
        return "other kernel threads"
    if name.startswith("iou-wrk"):
        return "the recorder's io_uring worker"
    return f"other: {name}"


def timehist(path):
    """(end s, comm, tid, run ms) of every stretch a task ran, from perf sched timehist."""
    out = subprocess.run(["perf", "sched", "timehist", "-i", path], capture_output=True,
                         text=True).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        # time [cpu] comm[tid/pid] wait sch-delay run
        if len(f) < 6 or not f[1].startswith("["):
            continue
        try:
            end, run = float(f[0]), float(f[-1])
        except ValueError:
            continue
        comm = " ".join(f[2:-3])
        rows.append((end, comm, run))
    return rows


def losses(path):
    """(time s, samples) of every LOST record."""
    out = subprocess.run(["perf", "script", "-i", path, "--show-lost-events", "-F", "time"],
                         capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        if "PERF_RECORD_LOST " in line:
            t, rest = line.split(":", 1)
            found.append((float(t), int(rest.split()[-1])))
    return found


def attribute(lost, sched, recorder, child):
    blame = collections.Counter()
    for t, n in lost:
        # the longest stretch of another task, of the recorder, of idle
        best, who, own, idle = 0.0, None, 0.0, 0.0
        for end, comm, run in sched:
            if end > t or end < t - WINDOW_MS / 1000:
                continue
            # the part of this stretch inside the window
            inside = min(run, (end - (t - WINDOW_MS / 1000)) * 1000)
            name = comm.split("[")[0]
            if name == "<idle>":
                idle = max(idle, inside)
            elif name == recorder:
                own = max(own, inside)
            elif inside > best:
                best, who = inside, comm
        if best >= BLAME_MS:
            blame[category(who, child)] += n
        elif own >= idle:
            blame["no other task: the recorder running"] += n
        else:
            blame["no other task: its CPU idle"] += n
    return blame


def one(tool, opts, common, secs, tmp):
    out = os.path.join(tmp, f"{tool}.data")
    sched = os.path.join(tmp, f"{tool}.sched")
    exe = "perf" if tool == "perf" else vs_perf.PERFZ
    # The tracer itself runs on the workload's CPU, not on the one it traces.
    argv = ["taskset", "-c", vs_perf.W, "perf", "sched", "record", "-q", "-C", vs_perf.R,
            "-o", sched, "--",
            "taskset", "-c", vs_perf.R, exe, "record", "-q", "-C", vs_perf.W] + common + opts + [
            "-o", out, "--", "sleep", str(secs)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found = losses(out)
    blame = attribute(found, timehist(sched), "perf" if tool == "perf" else "perfz", "sleep")
    _, lost = vs_perf.count(out)
    if lost > sum(blame.values()):
        # counted (LOST_SAMPLES, or LOST records perf script leaves out) but not timed
        blame["not timed"] += lost - sum(blame.values())
    os.unlink(out)
    os.unlink(sched)
    return lost, blame


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--scenario", action="append", choices=sorted(vs_perf.SCENARIOS))
    ap.add_argument("--markdown", help="append the table to this file")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="perfz-loss-causes-")
    deep = vs_perf.build(tmp)
    lines = [f"Command: `benches/loss_causes.py {' '.join(sys.argv[1:])}` "
             f"({time.strftime('%Y-%m-%d')}; {a.pairs} alternating pairs, {a.seconds:g} s each; "
             f"workload on CPU {vs_perf.W}, recorder on CPU {vs_perf.R}, traced by "
             f"`perf sched record -C {vs_perf.R}`)", "",
             "| scenario | tool | lost, median (min–max) | share of all lost samples, by what "
             "held the recorder's CPU |", "|---|---|---|---|"]
    for name in a.scenario or DEFAULT:
        kind, perf_opts, perfz_opts, common = vs_perf.SCENARIOS[name]
        wl = vs_perf.workload(kind, deep)
        time.sleep(0.5)
        lost = {"perf": [], "perfz": []}
        blame = {"perf": collections.Counter(), "perfz": collections.Counter()}
        try:
            for i in range(a.pairs):
                for tool in (["perf", "perfz"] if i % 2 == 0 else ["perfz", "perf"]):
                    n, b = one(tool, perf_opts if tool == "perf" else perfz_opts, common,
                               a.seconds, tmp)
                    lost[tool].append(n)
                    blame[tool].update(b)
                    print(f"{name} pair {i} {tool:<5} lost {n:>5}  " + ", ".join(
                        f"{k}: {v}" for k, v in b.most_common()), file=sys.stderr)
        finally:
            wl.kill()
            wl.wait()
        for tool in ("perfz", "perf"):
            total = sum(blame[tool].values()) or 1
            shares = ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in blame[tool].most_common())
            ls = lost[tool]
            lines.append(f"| {name} | {tool} | {statistics.median(ls):.0f} ({min(ls)}–{max(ls)}) "
                         f"| {shares or '—'} |")
    table = "\n".join(lines)
    print(table)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
