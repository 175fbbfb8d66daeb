"""The ECE floor of a forecaster whose stated values lie on a fixed grid, measured.

    nice -n 10 .venv/bin/python scripts/ece_floor.py --out results/ece-lower-bound/floor.csv

For each forecaster and horizon T: g is the widest gap of {0, stated values, 1} and c its
midpoint. Against Bernoulli(c) outcomes every stated value v has E[bias_v] = (v - c) E[n_v],
so E[ECE] >= sum_v |v - c| E[n_v] / T >= g / 2 (normalised ECE), whatever the forecaster
does (docs/ece-lower-bound.md). The script runs bernoulli with p = c and signpreserve on
seeds 0..seeds-1 and writes, per forecaster and T: m, g / 2, and the mean and smallest ECE
of each adversary over the seeds. Cost: 2 x seeds simulations per row.
"""

from __future__ import annotations

import argparse
import csv

import numpy as np

from fastcdl.experiments.presets import parse_horizon
from fastcdl.online import make_forecaster, simulate

FORECASTERS = ("cdl", "foster", "kt", "sign", "uniform", "acrs")


def widest_gap(q):
    """(g, c): the widest gap of {0, q, 1} and its midpoint (the lowest of equally wide ones)."""
    edges = np.concatenate([[0.0], np.asarray(q, dtype=float), [1.0]])
    widths = np.diff(edges)
    j = int(np.argmax(widths))
    return float(widths[j]), float(0.5 * (edges[j] + edges[j + 1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--horizons", default="2^10,2^14,2^18")
    ap.add_argument("--seeds", type=int, default=8)
    args = ap.parse_args()
    rows = []
    for T in [parse_horizon(h) for h in args.horizons.split(",")]:
        for f in FORECASTERS:
            q = make_forecaster(f, horizon=T, seed=0).table.q
            g, c = widest_gap(q)
            row = {"forecaster": f, "T": T, "m": len(q), "gap_midpoint": c, "floor": g / 2}
            for name, adv, params in (("midpoint", "bernoulli", {"p": c}), ("signpreserve", "signpreserve", {})):
                e = [simulate(f, adv, horizon=T, seed=s, adversary_params=params).ece for s in range(args.seeds)]
                row[f"{name}_mean"] = float(np.mean(e))
                row[f"{name}_min"] = float(np.min(e))
            rows.append(row)
            print(", ".join(f"{k}={v:.5g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
