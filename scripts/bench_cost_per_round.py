"""Cost per round of forecasters in one process, alternated, against one adversary.

Each repeat times every forecaster once (simulate's compiled loop, JIT excluded) at each
horizon, in an order that rotates from repeat to repeat; prints the median ns per round and
the ratio to the first forecaster (the baseline), with the load average before and after.

    python scripts/bench_cost_per_round.py --forecasters kt klcal --adversary bernoulli \
        --log2T 16 20 --repeats 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import benchrecord

from fastcdl.online import simulate


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forecasters", nargs="+", default=["kt", "klcal"])
    ap.add_argument("--adversary", default="bernoulli")
    ap.add_argument("--log2T", nargs="+", type=int, default=[16])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    load0 = os.getloadavg()
    for f in a.forecasters:
        simulate(f, a.adversary, horizon=1024, seed=1)
    out = {"command": " ".join(sys.argv), "load_before": load0, "runs": {}, "summary": {}}
    for k in a.log2T:
        T = 2**k
        times = {f: [] for f in a.forecasters}
        for r in range(a.repeats):
            order = a.forecasters[r % len(a.forecasters) :] + a.forecasters[: r % len(a.forecasters)]
            for f in order:
                times[f].append(simulate(f, a.adversary, horizon=T, seed=r).seconds)
        out["runs"][str(T)] = times
        base = statistics.median(times[a.forecasters[0]])
        for f in a.forecasters:
            med = statistics.median(times[f])
            out["summary"][f"{f} T=2^{k}"] = {"ns_per_round": 1e9 * med / T, "ratio_to_" + a.forecasters[0]: med / base}
            print(f"T=2^{k} {f:10s} {1e9 * med / T:10.1f} ns/round  {med / base:8.2f}x {a.forecasters[0]}")
    out["load_after"] = os.getloadavg()
    # the machine, and the commit and fastcdl modules timed (scripts/bench_check.py reads them)
    out["machine"] = benchrecord.cpu()
    out["source"] = {**benchrecord.source(), "timed_modules": benchrecord.timed_modules()}
    print("load before", load0, "after", out["load_after"])
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
