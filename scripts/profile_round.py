"""Run one forecaster against greedy so that perf can name the compiled functions it samples.

    FASTCDL_CACHE=0 perf record -F 20000 -o /tmp/round.perf .venv/bin/python scripts/profile_round.py cdl 5e6
    perf report -i /tmp/round.perf --sort sym        # the run's share of each function

numba's machine code has no symbols perf can read, so this script writes perf's map file for
JIT code (/tmp/perf-<pid>.map: start, size and name of every function in the forecaster's
simulate loop and what it links in: the msmwc kernels, NRT_incref/NRT_decref, ...), then runs
the loop. It must compile afresh (FASTCDL_CACHE=0), since cached code cannot list its functions.
The samples of the compilation come first; the shares of the run are those of the functions
named here, plus the C library's exp and log (compare with --sort sym restricted by time, or
run a T long enough that compilation is a small part, as above). With --dump DIR, the bytes of
each function are also written there (DIR/<start address>.bin, for objdump -D -b binary
-mi386:x86-64 --adjust-vma=<start>), to attribute samples to instructions.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import time
from pathlib import Path

import benchrecord


def _mapped_end(addr):
    for line in open("/proc/self/maps"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= addr < hi:
            return hi
    return addr


def write_perf_map(loop, dump=None):
    """perf's JIT map for every compiled overload of ``loop``; returns the map's path."""
    funcs = []
    for cres in loop.overloads.values():
        lib = cres.library
        for label in re.findall(r"^([A-Za-z_][^\s:]*):$", lib.get_asm_str(), flags=re.M):
            addr = lib.get_pointer_to_function(label)
            if addr:
                funcs.append((addr, label))
    funcs.sort()
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    with path.open("w") as fh:
        for j, (addr, label) in enumerate(funcs):
            end = funcs[j + 1][0] if j + 1 < len(funcs) else addr + (1 << 20)
            size = min(end, _mapped_end(addr)) - addr
            name = re.sub(r"B\d+v\d+.*", "", label)[:100]  # the qualified name without the type mangling
            fh.write(f"{addr:x} {size:x} {name}\n")
            if dump:
                Path(dump).mkdir(parents=True, exist_ok=True)
                (Path(dump) / f"{addr:x}.bin").write_bytes(ctypes.string_at(addr, size))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("forecaster")
    ap.add_argument("T", type=float)
    ap.add_argument("--dump", help="also write each function's bytes to this folder")
    args = ap.parse_args()
    from fastcdl.online import registry, simulate

    simulate(args.forecaster, "greedy", horizon=1000, seed=0)
    path = write_perf_map(registry.forecaster(args.forecaster).loop, args.dump)
    T = int(args.T)
    cpu = benchrecord.repeats(
        {"run": lambda: simulate(args.forecaster, "greedy", horizon=T, seed=1)},
        1,
        warmup=False,
        clock=time.process_time,
        n_inner=T,
    ).seconds["run"][0]
    print(f"{args.forecaster} vs greedy, T = {T}: {cpu * 1e9:.0f} ns of CPU per round (under perf); map {path}")


if __name__ == "__main__":
    main()
