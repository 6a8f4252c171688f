#!/usr/bin/env python3
"""perfz export against the pipeline its users run, `perf script --no-inline
| inferno-collapse-perf` (and `| inferno-flamegraph` for svg), on a real
program: a C++ compile (g++ -O2 of tests/workload/cxx.cpp, three times),
recorded by perfz at 10 kHz with dwarf stacks and with frame pointers (g++
itself has none: its fp chains are short), and by perf itself (the first
--perf: `perf record --call-graph dwarf`, uncompressed, perf's default) at
10 kHz with dwarf stacks. With --inline, also `perfz export
--inline` against `perf script | inferno-collapse-perf` (perf's inline frames
on, its default) on 3 s dwarf recordings of programs with full debug info:
tests/workload/rustapp (cargo --release, debug = 2) and
tests/workload/lang/cxxlib.cpp (g++ -O2 -g, the standard library's
templates). Alternating pairs, medians (min-max) of wall time; peak RSS of
the largest process of each path (/usr/bin/time). The folded outputs are
compared: the share of the weight on identical stacks is printed.

    benches/export_tools.py [--pairs N] [--perf PATH]... [--inline] [--markdown FILE]
                            [--before OLD_PERFZ] [--only NAME,...]

--before times another perfz binary's export the same way, in the same
alternation (perfz, the old perfz, perf), and adds its median and the ratio
new / old: a change's effect beside perf's, on one machine in one run.
--only keeps the recordings named (dwarf, fp, perf-dwarf, rust-inline,
cxx-inline).

Needs root (or perf_event_paranoid <= 1), perf, g++, cargo, inferno 0.12.8
(tests/setup.sh installs it under tests/tools/inferno) and a release build
(cargo build --release).
"""

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")


def tool(name):
    mine = os.path.join(ROOT, "tests", "tools", "inferno", "bin", name)
    return mine if os.path.exists(mine) else shutil.which(name) or name


def timed(cmd, out_path):
    """Runs a shell pipeline; returns (seconds, peak RSS in KiB of its
    largest process), its stdout in out_path."""
    tmp = tempfile.mkdtemp()
    parts = cmd.split(" | ")
    wrapped = " | ".join(
        f"/usr/bin/time -f %M -o {tmp}/rss{i} {p}" for i, p in enumerate(parts)
    )
    t = time.monotonic()
    subprocess.run(f"{wrapped} > {out_path}", shell=True, check=True,
                   stderr=subprocess.DEVNULL)
    dt = time.monotonic() - t
    rss = max(int(open(os.path.join(tmp, f)).read().split()[-1])
              for f in os.listdir(tmp))
    shutil.rmtree(tmp)
    return dt, rss


def folded(path):
    c = collections.Counter()
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line:
            stack, n = line.rsplit(" ", 1)
            c[stack] += int(n)
    return c


def agreement(ref, ours):
    total = sum(ref.values())
    same = sum(min(n, ours.get(k, 0)) for k, n in ref.items())
    return same / max(total, 1)


def med(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f}) s"


def inline_programs(work):
    """The inline rows' programs, built with full debug info: (mode,
    record options, command, what, inline)."""
    target = os.path.join(work, "rustapp")
    env = dict(os.environ, CARGO_TARGET_DIR=target, CARGO_PROFILE_RELEASE_DEBUG="2")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path",
                    os.path.join(ROOT, "tests", "workload", "rustapp", "Cargo.toml")],
                   check=True, env=env)
    cxxlib = os.path.join(work, "cxxlib")
    subprocess.run(["g++", "-O2", "-g", "-o", cxxlib,
                    os.path.join(ROOT, "tests", "workload", "lang", "cxxlib.cpp")], check=True)
    dwarf = ["--call-graph", "dwarf"]
    return [("rust-inline", dwarf, [os.path.join(target, "release", "rustapp"), "3"],
             "rustapp (cargo --release, debug = 2), 3 s", True),
            ("cxx-inline", dwarf, [cxxlib, "3"], "cxxlib.cpp (g++ -O2 -g), 3 s", True)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--perf", action="append",
                    help="a perf to compare with (repeat for several; default: perf)")
    ap.add_argument("--inline", action="store_true",
                    help="also the inline rows (rustapp, cxxlib)")
    ap.add_argument("--markdown")
    ap.add_argument("--before", help="an older perfz binary to time beside")
    ap.add_argument("--only", help="the recordings to keep, comma-separated")
    a = ap.parse_args()
    perfs = a.perf or ["perf"]
    work = tempfile.mkdtemp(prefix="perfz-export-tools-")
    src = os.path.join(ROOT, "tests", "workload", "cxx.cpp")
    compile3 = f"for i in 1 2 3; do g++ -O2 -c {src} -o /dev/null; done"
    recordings = [("dwarf", ["--call-graph", "dwarf"], ["sh", "-c", compile3],
                   "3x g++ -O2 cxx.cpp", False),
                  ("fp", ["-g"], ["sh", "-c", compile3], "3x g++ -O2 cxx.cpp", False),
                  ("perf-dwarf", ["--call-graph", "dwarf"], ["sh", "-c", compile3],
                   "3x g++ -O2 cxx.cpp, recorded by perf (uncompressed)", False)]
    if a.inline:
        recordings += inline_programs(work)
    if a.only:
        keep = a.only.split(",")
        recordings = [r for r in recordings if r[0] in keep]
    rows = []
    for mode, cg, cmd, what, inline in recordings:
        data = os.path.join(work, f"{mode}.data")
        recorder = [perfs[0], "record"] if mode.startswith("perf-") else [PERFZ, "record"]
        subprocess.run([*recorder, "-q", "-F", "4000" if inline else "10000", *cg,
                        "-o", data, "--", *cmd], check=True)
        samples = subprocess.run(
            [PERFZ, "export", "--sample-counts", data], capture_output=True,
            text=True, check=True).stdout
        n = sum(int(l.rsplit(" ", 1)[1]) for l in samples.splitlines() if l)
        size = os.path.getsize(data) / 1e6
        label = f"{mode}: {what}, {n} samples, {size:.1f} MB file"
        for perf in perfs:
            pname = subprocess.run([perf, "--version"], capture_output=True,
                                   text=True).stdout.strip().replace("perf version ", "perf ")
            script = f"{perf} script -i {data}" if inline else f"{perf} script --no-inline -i {data}"
            paths = {
                "folded": (f"{PERFZ} export {'--inline ' if inline else ''}{data}",
                           f"{script} | {tool('inferno-collapse-perf')}"),
            }
            if not inline:
                paths["svg"] = (f"{PERFZ} export --format svg {data}",
                                f"{script} | {tool('inferno-collapse-perf')}"
                                f" | {tool('inferno-flamegraph')}")
            for kind, (ours_cmd, theirs_cmd) in paths.items():
                ours_t, theirs_t, ours_m, theirs_m, old_t = [], [], [], [], []
                o_out, t_out = os.path.join(work, "o.out"), os.path.join(work, "t.out")
                for _ in range(a.pairs):
                    dt, m = timed(ours_cmd, o_out)
                    ours_t.append(dt)
                    ours_m.append(m)
                    if a.before:
                        old_out = os.path.join(work, "old.out")
                        old_t.append(timed(ours_cmd.replace(PERFZ, a.before, 1), old_out)[0])
                    dt, m = timed(theirs_cmd, t_out)
                    theirs_t.append(dt)
                    theirs_m.append(m)
                ratio = statistics.median(theirs_t) / statistics.median(ours_t)
                agree = (f"{100 * agreement(folded(t_out), folded(o_out)):.1f} %"
                         if kind == "folded" else "")
                kind = "folded --inline" if inline else kind
                before = ""
                if a.before:
                    new_old = statistics.median(ours_t) / statistics.median(old_t)
                    before = f" {med(old_t)}, new/old {new_old:.2f}x |"
                rows.append((label, kind, med(ours_t), max(ours_m) // 1024, pname,
                             med(theirs_t), max(theirs_m) // 1024, ratio, agree, before))
    head = ("| recording | output | perfz export | peak RSS | perf | perf script + inferno "
            "| peak RSS | perf path / perfz | identical stacks |"
            + (" perfz before |" if a.before else "")
            + "\n|---|---|---|---|---|---|---|---|---|" + ("---|" if a.before else ""))
    lines = [head] + [
        f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} MiB | {r[4]} | {r[5]} | {r[6]} MiB | {r[7]:.2f}x | {r[8]} |{r[9]}"
        for r in rows
    ]
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text + "\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
