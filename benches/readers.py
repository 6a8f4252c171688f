#!/usr/bin/env python3
"""Readers other than perf: samply and hotspot on perfz's files (issue 13).

    benches/readers.py [--seconds S] [--no-install]

Installs samply 0.13.1 (`cargo install samply --locked --version 0.13.1`)
and hotspot (`apt-get install -y hotspot`, for hotspot-perfparser) unless
they are there, then records tests/workload/deep.c with two threads twice:
with perf (uncompressed, perf's own file) and with perfz (default zstd),
decompresses perfz's file with `perfz decompress`, and reads all three with
both readers. For each file and reader it prints the threads, the samples
the reader saw, the samples perf itself counts in that file, and whether the
workload's functions are named. It exits non-zero unless, for perf's file
and perfz's decompressed one alike, each reader sees every sample perf
counts, the same threads, and the workload's functions; and that the
compressed files, perfz's and perf's own `-z` one alike, show them nothing
(no reader of the two takes COMPRESSED records): the README's claim.

Needs root (recording), perf, cc, cargo.
"""

import argparse
import collections
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_perf import perf_samples  # noqa: E402  (same helpers, one place)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")
PERFPARSER = "/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser"
FUNCS = ["perfz_workload_leaf", "perfz_workload_recurse"]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def install():
    if not shutil.which("samply"):
        sh(["cargo", "install", "samply", "--locked", "--version", "0.13.1"])
    if not os.path.exists(PERFPARSER):
        sh(["apt-get", "install", "-y", "hotspot"])


def symbols(binary):
    """[(address, name)] of the functions of `binary`, sorted (nm)."""
    out = subprocess.run(["nm", "-n", binary], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            syms.append((int(f[0], 16), f[2]))
    return syms


def samply(path, tmp, binary):
    """(threads {tid: samples}, workload functions named) as samply imports it.

    samply leaves symbolication to the viewer: its functions are addresses
    within a library, which we name with the workload binary's symbols."""
    out = os.path.join(tmp, "samply.json")
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run(["samply", "import", path, "--save-only", "-o", out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.exists(out):
        return {}, set()
    prof = json.load(open(out))
    syms = symbols(binary)
    libs = [lib["name"] for lib in prof.get("libs", [])]
    threads, names = {}, set()
    for t in prof.get("threads", []):
        n = t.get("samples", {}).get("length", 0)
        if n:
            threads[str(t.get("tid"))] = n
        funcs, res, strings = t["funcTable"], t["resourceTable"], t["stringArray"]
        for i in range(funcs["length"]):
            r = funcs["resource"][i]
            if r is None or r < 0 or libs[res["lib"][r]] != os.path.basename(binary):
                continue
            s = strings[funcs["name"][i]]
            if not s.startswith("0x"):
                continue
            addr = int(s, 16)
            hit = [name for a, name in syms if a <= addr]
            if hit:
                names.update(f for f in FUNCS if hit[-1] == f)
    return threads, names


def perfparser(path, tmp):
    """(thread starts, samples, function names) of hotspot-perfparser's stream.

    The stream is "QPERFSTREAM\\0", a u32 version, then messages of a u32
    size and a payload whose first byte is the event type: 1 ThreadStart,
    13 Sample (counted by type; the rest is not decoded)."""
    out = os.path.join(tmp, "hs.bin")
    subprocess.run([PERFPARSER, "--input", path, "--output", out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = open(out, "rb").read() if os.path.exists(out) else b""
    types = collections.Counter()
    p = 16
    while p + 4 <= len(d):
        n = struct.unpack_from("<I", d, p)[0]
        p += 4
        if n == 0 or p + n > len(d):
            break
        types[d[p]] += 1
        p += n
    names = {f for f in FUNCS if f.encode() in d}
    return types[1], types[13], names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--no-install", action="store_true")
    a = ap.parse_args()
    if not a.no_install:
        install()
    sh(["cargo", "build", "--release", "-q"], cwd=ROOT)
    tmp = tempfile.mkdtemp(prefix="perfz-readers-")
    deep = os.path.join(tmp, "deep")
    sh(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o", deep,
        os.path.join(ROOT, "tests", "workload", "deep.c")])
    files = {
        "perf (uncompressed)": os.path.join(tmp, "perf.data"),
        "perfz (zstd)": os.path.join(tmp, "perfz.data"),
        "perfz decompressed": os.path.join(tmp, "perfz.plain.data"),
        "perf -z": os.path.join(tmp, "perf-z.data"),
    }
    wl = [deep, str(a.seconds), "2"]
    sh(["perf", "record", "-q", "-g", "-F", "999", "-o", files["perf (uncompressed)"], "--"] + wl)
    sh([PERFZ, "record", "-q", "-g", "-F", "999", "-o", files["perfz (zstd)"]] + wl)
    sh(["perf", "record", "-q", "-z", "-g", "-F", "999", "-o", files["perf -z"], "--"] + wl)
    sh([PERFZ, "decompress", files["perfz (zstd)"], "-o", files["perfz decompressed"]],
       stderr=subprocess.DEVNULL)
    rows = {}
    print(f"{'file':<22} {'perf counts':>11} | {'samply threads/samples':>24} {'names':>5} "
          f"| {'perfparser threads/samples':>27} {'names':>5}")
    for label, f in files.items():
        n = perf_samples(f)
        st, sn = samply(f, tmp, deep)
        ht, hs, hn = perfparser(f, tmp)
        rows[label] = (n, st, sn, ht, hs, hn)
        print(f"{label:<22} {n:>11} | {len(st):>10} / {sum(st.values()):>11} {len(sn):>5} "
              f"| {ht:>12} / {hs:>12} {len(hn):>5}")
    ok = True
    for label in ("perf (uncompressed)", "perfz decompressed"):
        n, st, sn, ht, hs, hn = rows[label]
        want_threads = 2
        checks = {
            "samply sees every sample": sum(st.values()) == n,
            "samply sees both threads": len(st) == want_threads,
            "samply names the functions": sn == set(FUNCS),
            "perfparser sees every sample": hs == n,
            "perfparser sees both threads": ht >= want_threads,
            "perfparser names the functions": hn == set(FUNCS),
        }
        for what, good in checks.items():
            if not good:
                print(f"FAIL {label}: {what}", file=sys.stderr)
                ok = False
    for label in ("perfz (zstd)", "perf -z"):
        n, st, sn, ht, hs, hn = rows[label]
        if sum(st.values()) != 0 or hs != 0:
            print(f"FAIL {label}: a reader saw samples in a compressed file "
                  f"(samply {sum(st.values())}, perfparser {hs}): the README says none",
                  file=sys.stderr)
            ok = False
    print("both readers read perfz's decompressed file as perf's own, and no "
          "compressed file (perf's -z included)" if ok else "MISMATCH")
    shutil.rmtree(tmp)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
