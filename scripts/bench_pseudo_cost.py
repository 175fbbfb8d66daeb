"""What keeping the expected-count table costs the two-point loops: simulate's loop with the
table kept (as simulate runs) and with it off (empty arrays: one predictable branch a round),
alternated in one process, medians of the paired ratios.

    python scripts/bench_pseudo_cost.py --forecasters truthful kt cdl --log2T 20 --repeats 9 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import benchrecord
import numpy as np

from fastcdl.online import engine
from fastcdl.online.simulate import _build, _run_loop


def _once(name, adversary, T, seed, keep):
    f, a = _build(name, adversary, T, seed, None, None)
    if not keep:
        f.out = engine.Draw(f.out.points, f.out.probs, f.out.buckets)  # no expected-count table
    return _run_loop(f, a, T, np.zeros(0), np.zeros(0, dtype=np.int8))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forecasters", nargs="+", default=["truthful", "kt", "cdl"])
    ap.add_argument("--adversary", default="bernoulli")
    ap.add_argument("--log2T", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    T = 2**a.log2T
    out = {"command": " ".join(sys.argv), "T": T, "load_before": os.getloadavg(), "runs": {}, "summary": {}}
    for f in a.forecasters:
        _once(f, a.adversary, 1024, 1, True)
        _once(f, a.adversary, 1024, 1, False)
        on, off = [], []
        for r in range(a.repeats):
            for keep in (True, False) if r % 2 == 0 else (False, True):
                (on if keep else off).append(_once(f, a.adversary, T, r, keep))
        ratio = statistics.median(x / y for x, y in zip(on, off))
        out["runs"][f] = {"kept": on, "off": off}
        out["summary"][f] = {
            "ns_per_round_kept": 1e9 * statistics.median(on) / T,
            "ns_per_round_off": 1e9 * statistics.median(off) / T,
            "ratio_kept_to_off": ratio,
        }
        print(
            f"{f:10s} kept {1e9 * statistics.median(on) / T:8.2f} ns/round  off "
            f"{1e9 * statistics.median(off) / T:8.2f} ns/round  median paired ratio {ratio:.3f}"
        )
    out["load_after"] = os.getloadavg()
    # the machine, and the commit and fastcdl modules timed (scripts/bench_check.py reads them)
    out["machine"] = benchrecord.cpu()
    out["source"] = {**benchrecord.source(), "timed_modules": benchrecord.timed_modules()}
    print("load before", out["load_before"], "after", out["load_after"])
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
