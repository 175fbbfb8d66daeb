"""Cost of every sample estimator, its interval and the tests of perfect calibration, as a ratio
to np.sort of the same predictions, timed in one run (results/benchmarks/sample-costs.md and
sample-costs.json).

    python scripts/bench_sample_costs.py [--T 200000] [--repeat 5]
    python scripts/bench_sample_costs.py --render    # sample-costs.md from sample-costs.json

Data: T distinct scores p ~ U[0, 1] with y ~ Bernoulli(p). Every figure is the median of
--repeat calls after a warm-up call (compilation excluded); the calls of a repeat are timed
one after the other, so the machine's load affects them alike. The JSON keeps the raw times,
the CPU model, the load average before and after, numba's thread count, a hash of fastcdl's
sources and the command.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
import warnings
from pathlib import Path

import benchrecord
import numba
import numpy as np

import fastcdl as fc
from fastcdl import sample as fs
from fastcdl.uncertainty import CoverageWarning, bootstrap, calibration_test, interval

ROOT = Path(__file__).resolve().parents[1]
OUT_MD = ROOT / "results" / "benchmarks" / "sample-costs.md"
OUT_JSON = ROOT / "results" / "benchmarks" / "sample-costs.json"


def median_time(f, repeat):
    ts = benchrecord.repeats({"f": f}, repeat).seconds["f"]
    return float(np.median(ts)), ts


def measure(a):
    """Time every row; write sample-costs.json."""
    T = a.T
    y, p = benchrecord.definitions("data").sample_rounds(T)  # the rounds asv's sample suites time
    st = fc.bucket_stats(y, p)
    load_before = os.getloadavg()
    rows = []

    def add(name, cost, f, repeat=a.repeat):
        med, ts = median_time(f, repeat)
        rows.append({"what": name, "cost": cost, "seconds": med, "times": ts})
        print(f"{name}: {med:.4f} s", flush=True)

    add("np.sort of the predictions", "O(T log T)", lambda: np.sort(p))
    add("bucket_stats (the exact table)", "O(T) radix sort", lambda: fc.bucket_stats(y, p))
    for name in (
        "cdl_monotone",
        "vcdl_monotone",
        "cdl_monotone_report",
        "cutoff_ce",
        "cutoff_ce_test",
        "smce",
        "atb",
        "atb_unbiased",
        "brier",
        "k2_debiased",
        "ece_sweep",
        "cdl_monotone_crossfit",
        "vcdl_monotone_crossfit",
    ):
        f = getattr(fs, name)
        cost = {"smce": "O(m log m)", "ece_sweep": "O(m) per number of bins tried"}.get(name, "O(m)")
        # a new table object each call (the same arrays): some estimators keep what they computed
        # for the last table they saw (fastcdl._tables.last_table), which would be timed instead
        add(f"{name} (from the table)", cost, lambda f=f: f(copy.copy(st)))
    add(
        "ece, round(T^(1/3)) equal-mass bins (from the rounds)",
        "O(T)",
        lambda: fc.ece(y, p, bins="auto", strategy="quantile"),
    )
    add(
        "calibration_test, cutoff CE, 1000 simulations (kernel)",
        "O(m) per simulation",
        lambda: calibration_test(st, n_sim=1000, seed=1),
    )
    # the table-by-table road (any metric): a callable that is not fastcdl's cutoff_ce takes it
    add(
        "calibration_test, cutoff CE through the metric, 100 simulations",
        "O(m) per simulation + a table each",
        lambda: calibration_test(st, metric=lambda t: fs.cutoff_ce(t), n_sim=100, seed=1),
        repeat=max(1, a.repeat // 2),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        for name in ("cdl_monotone", "cutoff_ce", "smce", "atb_unbiased"):
            add(
                f"interval({name}), 200 subsamples of T/4",
                "200 evaluations at T/4 + O(T) per split",
                lambda name=name: interval(name, copy.copy(st), seed=1),
                repeat=max(1, a.repeat // 2),
            )
        add(
            "bootstrap(cutoff_ce), 1000 replicates, percentile",
            "O(m) per replicate",
            lambda: bootstrap("cutoff_ce", st, n_boot=1000, seed=1),
            repeat=max(1, a.repeat // 2),
        )
    load_after = os.getloadavg()
    sort_s = rows[0]["seconds"]
    for r in rows:
        r["ratio_to_sort"] = r["seconds"] / sort_s
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    meta = {
        "T": T,
        "repeat": a.repeat,
        "cpu": benchrecord.cpu()["model"],
        "cores": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "load_before": load_before,
        "load_after": load_after,
        "source_hash": benchrecord.source()["fastcdl_sources_sha256"][:12],
        "commit": benchrecord.source()["commit"],
        "timed_modules": benchrecord.timed_modules(),  # the code timed: make bench-check reads it
        "command": command,
        "numpy": np.__version__,
        "numba": numba.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    OUT_JSON.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")


def render(doc):
    meta, rows = doc["meta"], doc["rows"]
    lines = [
        "# Cost of the sample estimators, their intervals and the calibration tests",
        "",
        f"T = {meta['T']:,} distinct scores p ~ U[0, 1], y ~ Bernoulli(p); medians of {meta['repeat']} calls after a warm-up "
        "(resampling rows: of about half as many), ratios to np.sort of the same predictions timed in the "
        "same run.",
        "",
        f"Machine: {meta['cpu']}, {meta['cores']} cores shared with other jobs, numba threads "
        f"{meta['numba_threads']}; load average (1, 5, 15 min) {', '.join(f'{x:.2f}' for x in meta['load_before'])} "
        f"before and {', '.join(f'{x:.2f}' for x in meta['load_after'])} after. Sources {meta['source_hash']}, "
        f"{meta['date']}. Raw times: sample-costs.json.",
        "",
        f"Command: `{meta['command']}`",
        "",
        "| what | cost | seconds | / np.sort |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['what']} | {r['cost']} | {r['seconds']:.4g} | {r['ratio_to_sort']:.3g}x |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="only write sample-costs.md from sample-costs.json")
    a = ap.parse_args()
    if not a.render:
        measure(a)
    OUT_MD.write_text("\n".join(render(json.loads(OUT_JSON.read_text()))) + "\n")


if __name__ == "__main__":
    main()
