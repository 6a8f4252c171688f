#!/usr/bin/env python3
"""perfz export of a recording whose process mapped a jitdump with code
moves (issue 41): the time per dump size, which grows linearly when moves
are matched to their loads by index (and with the square of the moves
when each searched the loads before it).

    benches/jitdump_moves.py [--sizes 20,39,78,156] [--perfz PATH]
                             [--timeout S]

Records (perfz record) a Python child that links a jitdump into place as
jit-PID.dump, maps it executable (as a JIT's agent does, so the recording
names it) and spins; then for each size (MB) writes a dump of N code loads
and N moves, each move of a load in load order, and times `perfz export -o
/dev/null` of the recording (the dump is read at export time). An export
past --timeout (default 900 s) is reported as such. Needs root (or a low
perf_event_paranoid).
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFZ = os.path.join(ROOT, "target", "release", "perfz")

# The recorded child: jit-PID.dump linked to argv[1], mapped PROT_EXEC.
CHILD = r"""
import mmap, os, sys, time
dump = os.path.join(os.path.dirname(sys.argv[1]), f"jit-{os.getpid()}.dump")
os.link(sys.argv[1], dump)
with open(dump, "rb") as f:
    m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
end = time.monotonic() + 0.3
while time.monotonic() < end:
    pass
print(dump)
"""

LOAD_FMT = "<IIQIIQQQQ"  # id, total_size, timestamp, pid, tid, vma, code_addr, code_size, code_index
MOVE_FMT = "<IIQIIQQQQQ"  # ..., vma, old_code_addr, new_code_addr, code_size, code_index
CODE = b"\xcc" * 16


def write_dump(path, mb):
    """A jitdump of about `mb` MB: N loads then a move of each."""
    name = b"JS:*function_%08d bench.js:1:1\0"
    load_size = struct.calcsize(LOAD_FMT) + len(name % 0) + len(CODE)
    move_size = struct.calcsize(MOVE_FMT)
    n = mb * 1_000_000 // (load_size + move_size)
    with open(path, "wb") as f:
        f.write(struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 1, 0, 0))
        out = []
        for i in range(n):
            addr = 0x10_0000_0000 + i * 64
            out.append(struct.pack(LOAD_FMT, 0, load_size, 0, 1, 1, addr, addr, 16, i))
            out.append(name % i)
            out.append(CODE)
            if len(out) > 30000:
                f.write(b"".join(out))
                out.clear()
        for i in range(n):
            old, new = 0x10_0000_0000 + i * 64, 0x20_0000_0000 + i * 64
            out.append(struct.pack(MOVE_FMT, 1, move_size, 0, 1, 1, new, old, new, 16, i))
            if len(out) > 30000:
                f.write(b"".join(out))
                out.clear()
        f.write(b"".join(out))
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,39,78,156")
    ap.add_argument("--perfz", default=PERFZ)
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="perfz-jitdump-") as d:
        src = os.path.join(d, "dump")
        write_dump(src, 1)
        data = os.path.join(d, "rec.data")
        r = subprocess.run(
            [a.perfz, "record", "-q", "-o", data, "--", sys.executable, "-c", CHILD, src],
            capture_output=True, text=True, check=True)
        dump = r.stdout.strip()
        print(f"perfz {a.perfz}")
        print("| dump | loads + moves | perfz export |")
        print("|---:|---:|---:|")
        for mb in [int(s) for s in a.sizes.split(",")]:
            os.unlink(src)
            os.unlink(dump)
            n = write_dump(src, mb)
            os.link(src, dump)
            size = os.path.getsize(dump) / 1e6
            t0 = time.monotonic()
            try:
                subprocess.run([a.perfz, "export", "-o", "/dev/null", data],
                               capture_output=True, check=True, timeout=a.timeout)
                took = f"{time.monotonic() - t0:.2f} s"
            except subprocess.TimeoutExpired:
                took = f"> {a.timeout:.0f} s (stopped)"
            print(f"| {size:.0f} MB | {n} + {n} | {took} |", flush=True)


if __name__ == "__main__":
    main()
