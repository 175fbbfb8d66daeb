"""The rate check of klcal (results/klcal-rates/README.md): slopes of its pseudo KL-calibration
over the whole window T = 2^12..2^20, and over the horizons where the grid size K is odd or
even, from the folder's trial store; writes bar.csv beside it.

    python scripts/klcal_bar.py results/klcal-rates
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

from fastcdl.experiments.analysis import slope_interval
from fastcdl.experiments.store import TrialStore
from fastcdl.online import registry

METRICS = ("pseudo_klcal", "klcal", "pseudo_ece", "ece")


def main(folder):
    folder = Path(folder)
    with TrialStore(folder / "trials.sqlite", readonly=True) as store:
        rows = store.rows()
    spec = registry.forecaster("klcal")
    cells = {}
    for r in rows:
        key = (r["forecaster_label"], r["adversary_label"])
        k = spec.resolve_params(json.loads(r["forecaster_params"]), r["T"])["k"]
        cells.setdefault(key, {}).setdefault(r["T"], {"k": k, "rows": {}})["rows"][r["seed_index"]] = r
    out = []
    for (f, a), by_T in sorted(cells.items()):
        for m in METRICS:
            for window in ("all", "odd K", "even K"):
                Ts = sorted(T for T in by_T if window == "all" or (by_T[T]["k"] % 2 == 1) == (window == "odd K"))
                if len(Ts) < 2:
                    continue
                seeds = sorted(set.intersection(*(set(by_T[T]["rows"]) for T in Ts)))
                V = np.array([[by_T[T]["rows"][s][m] for s in seeds] for T in Ts], dtype=float)
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
                        ks=" ".join(str(by_T[T]["k"]) for T in Ts),
                        n_seeds=len(seeds),
                        slope=round(slope, 4),
                        lo=round(lo, 4),
                        hi=round(hi, 4),
                        mean_at_t_min=float(V[0].mean()),
                        mean_at_t_max=float(V[-1].mean()),
                    )
                )
    with open(folder / "bar.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    for r in out:
        if r["metric"] == "pseudo_klcal":
            print(
                f"{r['forecaster']:14s} {r['adversary']:11s} {r['window']:7s} K={r['ks']:24s} slope {r['slope']:+.3f} "
                f"[{r['lo']:+.3f}, {r['hi']:+.3f}]"
            )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/klcal-rates")
