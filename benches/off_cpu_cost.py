#!/usr/bin/env python3
"""What recording off-CPU time costs on a context-switch heavy workload:
perfz record --off-cpu -g against perf's recipe for it (perf record -e
sched:sched_switch -g --switch-events, every switch written whole), on the
same work, as alternating runs.

    benches/off_cpu_cost.py [--pairs N] [--seconds S] [--perf PERF] [--markdown FILE]

The workload is `perf bench sched pipe` (two processes bouncing a byte
over a pipe) pinned to CPU 1, started once; each recorder, pinned to CPU 0
(perf's recipe; perfz --off-cpu with -e dummy, the recipe's content; perfz
--off-cpu with its default cpu-clock beside),
attaches to both processes (-p) for S seconds. Per run: the recorder's CPU
seconds, the file's bytes, the switches the kernel counted for the two
processes in the window (/proc/PID/status, voluntary and not) against the
switches the recording holds (perfz: switch-outs seen, from --stats-json;
perf: sched_switch samples), lost events, and the workload's rate in the
middle half of the recording (once the recorder has started its `sleep`)
against a window with no recorder: its slowdown.
Each cell: median (min-max).
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


def switches(pids):
    n = 0
    for p in pids:
        with open(f"/proc/{p}/status") as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    n += int(line.split()[1])
    return n


def perf_stats(perf, path):
    out = subprocess.run([perf, "report", "--stats", "-i", path], capture_output=True,
                         text=True).stdout
    got = {"SAMPLE": 0, "LOST": 0}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] in got and f[1] == "events:":
            got[f[0]] += int(f[2])
    return got["SAMPLE"], got["LOST"]


def has_sleep_child(pid):
    """Whether the recorder `pid` has started its workload (`sleep` exec'd):
    it is recording."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                for c in f.read().split():
                    with open(f"/proc/{c}/comm") as g:
                        if g.read().strip() == "sleep":
                            return True
    except OSError:
        pass
    return False


def run_watched(argv, pids, seconds):
    """Runs the recorder argv (ending in `sleep SECONDS`) pinned to CPU R;
    returns its CPU seconds and the workload's switch rate in the middle
    half of its recording (from outside, the recorder's start would count
    as if recording: a second for perf)."""
    p = subprocess.Popen(["taskset", "-c", v.R] + argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    while not has_sleep_child(p.pid):
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            sys.exit(f"{argv[0]} ended before recording ({os.waitstatus_to_exitcode(status)})")
        time.sleep(0.005)
    time.sleep(seconds / 4)
    n0, t0 = switches(pids), time.monotonic()
    time.sleep(seconds / 2)
    rate = (switches(pids) - n0) / (time.monotonic() - t0)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} failed ({os.waitstatus_to_exitcode(status)})")
    return ru.ru_utime + ru.ru_stime, rate


def one(which, a, pids, tmp):
    out = os.path.join(tmp, f"{which}.data")
    plist = ",".join(map(str, pids))
    before = switches(pids)
    t0 = time.monotonic()
    if which == "idle":
        time.sleep(a.seconds)
        cpu, size, held, lost = 0.0, 0, 0, 0
        rate = 0.0
    elif which == "perf":
        argv = [a.perf, "record", "-q", "-e", "sched:sched_switch", "-g", "--switch-events",
                "-p", plist, "-o", out, "--", "sleep", str(a.seconds)]
        cpu, rate = run_watched(argv, pids, a.seconds)
        size = os.path.getsize(out)
        held, lost = perf_stats(a.perf, out)
    else:
        # perfz's default on-CPU event (cpu-clock) beside, or none (-e
        # dummy: the recipe's content, off-CPU time alone).
        stats = os.path.join(tmp, "stats.json")
        on = ["-e", "dummy"] if which == "perfz-off" else []
        argv = [v.PERFZ, "record", "-q", "--off-cpu", "-g", "-p", plist, "-o", out,
                "--stats-json", stats] + on + ["--", "sleep", str(a.seconds)]
        cpu, rate = run_watched(argv, pids, a.seconds)
        size = os.path.getsize(out)
        with open(stats) as f:
            s = json.load(f)
        held, lost = s["off_cpu"]["seen"], s["lost_events"] + s["lost_samples"]
    secs = time.monotonic() - t0
    n = switches(pids) - before
    if which == "idle":
        rate = n / secs
    return {"cpu": cpu, "bytes": size, "held": held, "switches": n, "lost": lost,
            "rate": rate}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--perf", default="perf")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=v.ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="perfz-off-cpu-cost-")
    wl = subprocess.Popen(["taskset", "-c", v.W, a.perf, "bench", "sched", "pipe", "-l",
                           "2000000000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        with open(f"/proc/{wl.pid}/task/{wl.pid}/children") as f:
            pids = [wl.pid] + [int(x) for x in f.read().split()]
        runs = {"idle": [], "perf": [], "perfz": [], "perfz-off": []}
        for i in range(a.pairs):
            order = ["idle", "perf", "perfz", "perfz-off"]
            order = order if i % 2 == 0 else order[::-1]
            for which in order:
                r = one(which, a, pids, tmp)
                runs[which].append(r)
                print(f"pair {i} {which:<5} cpu {r['cpu']:.2f}s bytes {r['bytes']} "
                      f"switches {r['switches']} held {r['held']} lost {r['lost']}",
                      file=sys.stderr)
    finally:
        wl.kill()
        wl.wait()
    idle = statistics.median(r["rate"] for r in runs["idle"])
    p = runs["perf"]

    def ratio(k, z):
        return statistics.median(r[k] for r in z) / max(statistics.median(r[k] for r in p), 1e-9)

    lines = [
        f"Command: `benches/off_cpu_cost.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
        f"{a.pairs} rounds of idle / perf / perfz, {a.seconds:g} s each; workload "
        f"`perf bench sched pipe` on CPU {v.W}, recorders on CPU {v.R})",
        "",
        "| | recorder CPU s | µs CPU a switch recorded | MB written | switches in the window | switches recorded | lost | workload rate vs idle |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in [("perf recipe", p), ("perfz --off-cpu -e dummy (off-CPU alone)", runs["perfz-off"]),
                       ("perfz --off-cpu (and cpu-clock, its default)", runs["perfz"])]:
        slow = [r["rate"] / idle for r in rows]
        for r in rows:
            r["us"] = r["cpu"] / max(r["held"], 1) * 1e6
        lines.append(
            f"| {name} | {v.spread(rows, 'cpu', '{:.2f}')} | {v.spread(rows, 'us', '{:.2f}')} "
            f"| {v.spread(rows, 'bytes', '{:.2f}', 1e6)} "
            f"| {v.spread(rows, 'switches')} | {v.spread(rows, 'held')} "
            f"| {v.spread(rows, 'lost')} | {statistics.median(slow):.2f} "
            f"({min(slow):.2f}–{max(slow):.2f}) |")
    for name in ["perfz-off", "perfz"]:
        lines.append(f"\n{name} / perf (medians): CPU {ratio('cpu', runs[name]):.2f}x, "
                     f"CPU a switch recorded {ratio('us', runs[name]):.2f}x, "
                     f"bytes {ratio('bytes', runs[name]):.4f}x")
    lines += ["", f"idle rate {idle:.0f} switches/s"]
    v.emit("\n".join(lines) + "\n", a.markdown)


if __name__ == "__main__":
    main()
