#!/usr/bin/env python3
"""The compressed flight recorder against `perf record --overwrite` (issue 14).

    benches/flight.py [--rounds N] [--seconds S] [--mib M] [--markdown FILE]

The workload (deep.c) runs pinned to CPU 1, the recorder to CPU 0, recording
CPU 1 (`-C 1 ... -- sleep S`). With M MiB of memory each:
  perf record --overwrite -m PAGES   (its ring, dumped at the end)
  perfz record --flight-recorder M --codec zstd:1 | zstd:3 | lz4
  perfz record --codec zstd:1        (plain recording, for the CPU it costs)
History = the time between the first and last sample of the file written
at the end, in seconds per MiB of memory; CPU = user + sys of the recorder
(wait4); peak RSS = the recorder's ru_maxrss (its mapped ring pages, codec
state, history and map records together).
"At equal memory": perfz's flight recorder also holds its kernel ring,
zstd's state and its map history besides the M MiB, so a calibration run
measures its peak RSS, and perf --overwrite gets -m raised to the power of
two of pages at or above that footprint (so perf never has less memory than
perfz used). Scenarios: dwarf (-F 20000 --call-graph dwarf,32768) and fp
(-F 20000 -g). Medians over the rounds. A history as long as the run itself
means the memory never filled (a lower bound, marked >=).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")
SCEN = {
    "dwarf": ["-F", "20000", "--call-graph", "dwarf,32768"],
    "fp": ["-F", "20000", "-g"],
}


def run(argv):
    """(CPU seconds, peak RSS KiB) of argv pinned to CPU 0."""
    p = subprocess.Popen(["taskset", "-c", "0"] + argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv} failed: {err}")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def span(path):
    """(samples, seconds between first and last sample) via perfz's reader."""
    out = subprocess.run([PERFZ, "stat", "--json", path], capture_output=True, text=True,
                         check=True).stdout
    samples = sum(e["samples"] for e in json.loads(out)["events"])
    times = subprocess.run(["perf", "script", "-F", "time", "-i", path], capture_output=True,
                           text=True).stdout.split()
    ts = [float(t.rstrip(":")) for t in times if t.rstrip(":").replace(".", "").isdigit()]
    return samples, (max(ts) - min(ts)) if ts else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--mib", type=int, default=1)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="perfz-flight-")
    deep = os.path.join(tmp, "deep")
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", deep,
                    os.path.join(ROOT, "tests", "workload", "deep.c")], check=True)
    pages = a.mib * 1024 * 1024 // os.sysconf("SC_PAGE_SIZE")
    mem = f"{a.mib}M"
    tools = {
        f"perf --overwrite -m {pages}": lambda o: ["perf", "record", "-q", "--overwrite", "-m",
                                                   str(pages), "-o", o],
        f"perfz --flight-recorder {mem} zstd:1": lambda o: [PERFZ, "record", "-q",
                                                            "--flight-recorder", mem, "--codec",
                                                            "zstd:1", "-o", o],
        f"perfz --flight-recorder {mem} zstd:3": lambda o: [PERFZ, "record", "-q",
                                                            "--flight-recorder", mem, "--codec",
                                                            "zstd:3", "-o", o],
        f"perfz --flight-recorder {mem} lz4": lambda o: [PERFZ, "record", "-q",
                                                         "--flight-recorder", mem, "--codec",
                                                         "lz4", "-o", o],
        "perfz zstd:1 to a file": lambda o: [PERFZ, "record", "-q", "--codec", "zstd:1", "-o", o],
    }
    rows = []
    for scen, common in SCEN.items():
        wl = subprocess.Popen(["taskset", "-c", "1", deep, "100000"], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        # Calibration: perfz's footprint with the flight recorder (zstd:1).
        cal = os.path.join(tmp, "cal.data")
        _, rss = run([PERFZ, "record", "-q", "--flight-recorder", mem, "--codec", "zstd:1",
                      "-o", cal, "-C", "1"] + common + ["--", "sleep", str(a.seconds)])
        for f in os.listdir(tmp):
            if f.startswith("cal.data"):
                os.unlink(os.path.join(tmp, f))
        eq = 1
        while eq * os.sysconf("SC_PAGE_SIZE") < rss * 1024:
            eq *= 2
        tools_here = dict(tools)
        tools_here[f"perf --overwrite -m {eq} (perfz's footprint)"] = (
            lambda o, eq=eq: ["perf", "record", "-q", "--overwrite", "-m", str(eq), "-o", o])
        res = {t: [] for t in tools_here}
        try:
            for r in range(a.rounds):
                for t, mk in tools_here.items():
                    out = os.path.join(tmp, "f.data")
                    argv = mk(out) + ["-C", "1"] + common + ["--", "sleep", str(a.seconds)]
                    cpu, rss = run(argv)
                    if "flight-recorder" in t:
                        snaps = sorted(f for f in os.listdir(tmp) if f.startswith("f.data."))
                        path = os.path.join(tmp, snaps[-1])
                    else:
                        path = out
                    if t == "perfz zstd:1 to a file":
                        res[t].append({"cpu": cpu, "span": 0.0, "samples": 0, "rss": rss})
                        print(f"{scen} round {r} {t:<38} cpu {cpu:.2f}s", file=sys.stderr)
                        os.unlink(out)
                        continue
                    n, s = span(path)
                    if "lz4" in t:
                        z = os.path.join(tmp, "z.data")
                        subprocess.run([PERFZ, "recompress", path, "-o", z, "--codec", "zstd:1"],
                                       check=True, stderr=subprocess.DEVNULL)
                        n, s = span(z)
                    res[t].append({"cpu": cpu, "span": s, "samples": n, "rss": rss})
                    print(f"{scen} round {r} {t:<38} cpu {cpu:.2f}s history {s:.3f}s samples {n} "
                          f"rss {rss} KiB", file=sys.stderr)
                    for f in os.listdir(tmp):
                        if f.startswith("f.data") or f == "z.data":
                            os.unlink(os.path.join(tmp, f))
        finally:
            wl.kill()
            wl.wait()
        for t, rs in res.items():
            cpu = statistics.median(x["cpu"] for x in rs)
            s = statistics.median(x["span"] for x in rs)
            rss = statistics.median(x["rss"] for x in rs) / 1024
            full = s >= a.seconds * 0.9
            rows.append((scen, t, cpu, s, full, rss))
    plain = {scen: cpu for scen, t, cpu, s, full, rss in rows if t == "perfz zstd:1 to a file"}
    lines = [f"Command: `benches/flight.py {' '.join(sys.argv[1:])}` ({time.strftime('%Y-%m-%d')}; "
             f"{a.rounds} rounds, {a.seconds:g} s each, medians; {a.mib} MiB of memory; "
             "workload on CPU 1, recorder on CPU 0)", "",
             "| stream | recorder | history s | s per MiB of peak RSS | peak RSS MiB "
             "| recorder CPU s | CPU × plain zstd:1 |",
             "|---|---|---|---|---|---|---|"]
    for scen, t, cpu, s, full, rss in rows:
        if t == "perfz zstd:1 to a file":
            hist = "—"
            per = "—"
        else:
            mark = ">=" if full else ""
            hist = f"{mark}{s:.3f}"
            per = f"{mark}{s / rss:.3f}"
        lines.append(f"| {scen} | {t} | {hist} | {per} | {rss:.1f} | {cpu:.2f} "
                     f"| {cpu / plain[scen]:.2f} |")
    table = "\n".join(lines)
    print(table)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
