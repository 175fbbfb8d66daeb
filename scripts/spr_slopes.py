"""The rate check of spr (results/spr-rates/README.md): the least-squares slope of log(mean ECE)
against log T for every forecaster and environment of the folder, over all its horizons and over
the upper half, with jackknife-t 95% intervals, next to the paper's slope; writes slopes.csv.

    python scripts/spr_slopes.py results/spr-rates
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from fastcdl.experiments.analysis import slope_interval
from fastcdl.experiments.leaderboard import PAPER_RATES
from fastcdl.experiments.store import TrialStore

METRICS = ("ece", "k2", "cdl")


def main(folder):
    folder = Path(folder)
    with TrialStore(folder / "trials.sqlite", readonly=True) as store:
        rows = store.rows()
    cells = {}
    for r in rows:
        cells.setdefault((r["forecaster_label"], r["adversary_label"]), {}).setdefault(r["T"], {})[r["seed_index"]] = r
    paper = PAPER_RATES["spr"]
    out = []
    for (f, a), by_T in sorted(cells.items()):
        all_T = sorted(by_T)
        for m in METRICS:
            for window, Ts in (("all", all_T), ("upper half", all_T[len(all_T) // 2 :])):
                seeds = sorted(set.intersection(*(set(by_T[T]) for T in Ts)))
                V = np.array([[by_T[T][s][m] for s in seeds] for T in Ts], dtype=float)
                slope, lo, hi, _ = slope_interval(Ts, V)
                out.append(
                    dict(
                        forecaster=f,
                        adversary=a,
                        metric=m,
                        window=window,
                        t_min=Ts[0],
                        t_max=Ts[-1],
                        horizons=len(Ts),
                        n_seeds=len(seeds),
                        slope=round(slope, 4),
                        lo=round(lo, 4),
                        hi=round(hi, 4),
                        paper_slope=round(paper.slope_over(Ts), 4) if m == "ece" else "",
                        mean_at_t_min=float(V[0].mean()),
                        mean_at_t_max=float(V[-1].mean()),
                    )
                )
    with open(folder / "slopes.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(out[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    for r in out:
        if r["metric"] == "ece":
            print(
                f"{r['forecaster']:9s} {r['adversary']:13s} {r['window']:10s} slope {r['slope']:+.3f} "
                f"[{r['lo']:+.3f}, {r['hi']:+.3f}]  mean ECE {r['mean_at_t_min']:.4g} -> {r['mean_at_t_max']:.4g}"
            )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/spr-rates")
