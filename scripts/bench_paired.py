"""Paired timing of simulate's compiled loop under two source trees (before / after a change).

Each repeat runs one fresh process per tree, the trees' order alternating from repeat to
repeat; a process times every forecaster once against the adversary at horizon T (after a
warm-up run that compiles or loads the loops). Prints, and writes as JSON, the medians and
the median of the per-repeat ratios after / before, with the load average at every repeat.

    python scripts/bench_paired.py BEFORE_TREE AFTER_TREE --forecasters truthful kt cdl \
        --adversary bernoulli --log2T 22 --repeats 9 --json out.json [--after-kwargs '{"pseudo": false}']
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import json, sys, time
from fastcdl.online import simulate
fs, adv, T, kw = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
out = {}
for f in fs:
    simulate(f, adv, horizon=1024, seed=1, **kw)
for f in fs:
    out[f] = simulate(f, adv, horizon=T, seed=0, **kw).seconds
print(json.dumps(out))
"""


def _once(tree, forecasters, adversary, T, kwargs="{}"):
    env = dict(os.environ, PYTHONPATH=tree)
    r = subprocess.run(
        [sys.executable, "-c", _CHILD, ",".join(forecasters), adversary, str(T), kwargs],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--forecasters", nargs="+", default=["truthful", "kt", "cdl"])
    ap.add_argument("--adversary", default="bernoulli")
    ap.add_argument("--log2T", type=int, default=22)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--json")
    ap.add_argument("--before-kwargs", default="{}", help="simulate's keyword arguments in BEFORE (JSON)")
    ap.add_argument(
        "--after-kwargs", default="{}", help='simulate\'s keyword arguments in AFTER (JSON), e.g. {"pseudo": false}'
    )
    a = ap.parse_args(argv)
    T = 2**a.log2T
    runs = []
    for i in range(a.repeats):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        rep = {"load": os.getloadavg()}
        for which in order:
            rep[which] = _once(getattr(a, which), a.forecasters, a.adversary, T, getattr(a, f"{which}_kwargs"))
        runs.append(rep)
        print(i, rep, flush=True)
    summary = {}
    for f in a.forecasters:
        b = [r["before"][f] for r in runs]
        n = [r["after"][f] for r in runs]
        summary[f] = {
            "before_s": statistics.median(b),
            "after_s": statistics.median(n),
            "ratio": statistics.median(x / y for x, y in zip(n, b)),
            "ns_per_round_before": 1e9 * statistics.median(b) / T,
            "ns_per_round_after": 1e9 * statistics.median(n) / T,
        }
        print(
            f"{f:10s} before {summary[f]['ns_per_round_before']:.2f} ns/round  after "
            f"{summary[f]['ns_per_round_after']:.2f} ns/round  ratio after/before {summary[f]['ratio']:.4f}"
        )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(
                {"command": " ".join(sys.argv), "T": T, "adversary": a.adversary, "runs": runs, "summary": summary},
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
