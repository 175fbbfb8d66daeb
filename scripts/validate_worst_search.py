"""Recall of the worst-case search: for every forecaster and family at T = 2^12 and 2^14, the
best candidate the search scored (results/worstcase/candidates.csv) against the best of an
exhaustive fine sweep computed here on its own, on the same search seeds (common random
numbers: the two means are of the same runs wherever the parameters coincide).

    python scripts/validate_worst_search.py [results/worstcase] [--forecasters cdl,kt] [--workers 2]
        [--reuse results/worstcase/validation.csv]

Writes validation.csv into the folder: forecaster, T, m, family, points (of the exhaustive
sweep), search_best, search_params, exhaustive_best, exhaustive_params, recall = search_best /
exhaustive_best (the search's best of the family), winner_recall = the search winner's mean on
the same seeds / exhaustive_best (does the worst case found reach the family's best?). Where the exhaustive best
beats the winner on those seeds (winner_recall < 1), the exhaustive best is also run on the
fresh seeds of worst.csv: exhaustive_fresh is its mean there and fresh_recall the winner's fresh
mean over it (the maximum of thousands of means over a few seeds is itself biased upwards; on
fresh seeds neither side was chosen on them). Both are empty in the other cells.
The exhaustive sweeps (finer than the search's, and made without it):

- a level (bernoulli's p): 32 points per cell of the forecaster's grid over [0, 1];
- gridedge's position: 257 points over [0, 1];
- a 2-parameter family: a 48 x 48 product grid over its box (log axes where the search's are);
- sweep (4 parameters): a 9^4 product grid;
- a family without parameters: its one adversary.

Each point is the mean CDL over the first ``search_seeds`` search seeds, from
fastcdl.online.simulate directly (no store). ``--reuse`` takes the exhaustive columns of an
earlier validation.csv where forecaster, T, m, family and points agree: the exhaustive sweep
does not depend on the search, and its trials are the same while the algorithm version is.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HORIZONS = (2**12, 2**14)
COLUMNS = (
    "forecaster",
    "T",
    "m",
    "family",
    "points",
    "search_best",
    "search_params",
    "exhaustive_best",
    "exhaustive_params",
    "recall",
    "winner_recall",
    "exhaustive_fresh",
    "fresh_recall",
)


def exhaustive_points(family, m, T) -> list[dict]:
    """The exhaustive sweep of a family (its parameters), as documented above."""
    dims = family.dims
    if not dims:
        return [family.params((), T)]
    if len(dims) == 1:
        (d,) = dims
        if d.kind == "level" and m is not None:
            n = 32 * m
            return [family.params_of_values([d.lo + (d.hi - d.lo) * k / n], T) for k in range(n + 1)]
        return [family.params_of_values([d.value(k / 256)], T) for k in range(257)]
    n = 48 if len(dims) == 2 else 9
    axis = [k / (n - 1) for k in range(n)]
    return [family.params(u, T) for u in itertools.product(axis, repeat=len(dims))]


def _mean_cdl(job):
    from fastcdl.experiments.runner import trial_seed
    from fastcdl.experiments.worst import SEARCH_MASTER
    from fastcdl.online import simulate

    forecaster, adversary, params_list, T, seeds = job
    return [
        float(
            np.mean(
                [
                    simulate(
                        forecaster, adversary, horizon=T, seed=trial_seed(SEARCH_MASTER, i), adversary_params=p
                    ).cdl
                    for i in range(seeds)
                ]
            )
        )
        for p in params_list
    ]


def _fresh_mean_cdl(job):
    from fastcdl.experiments.runner import trial_seed
    from fastcdl.experiments.worst import FRESH_MASTER
    from fastcdl.online import simulate

    forecaster, adversary, params, T, seeds = job
    return float(
        np.mean(
            [
                simulate(
                    forecaster, adversary, horizon=T, seed=trial_seed(FRESH_MASTER, i), adversary_params=params
                ).cdl
                for i in range(seeds)
            ]
        )
    )


def validate(folder: Path, forecasters=None, workers=2, reuse=None) -> list[dict]:
    from fastcdl.experiments.families import FAMILIES
    from fastcdl.online import registry

    cands = list(csv.DictReader((folder / "candidates.csv").read_text().splitlines()))
    worst = [w for w in csv.DictReader((folder / "worst.csv").read_text().splitlines()) if w["metric"] == "cdl"]
    winners = {(w["forecaster"], int(w["T"])): (w["adversary"], w["adversary_params"]) for w in worst}
    fresh = {(w["forecaster"], int(w["T"])): (float(w["mean"]), int(w["n_seeds"])) for w in worst}
    seeds = int(cands[0]["search_seeds"])
    if any(int(c["search_seeds"]) != seeds for c in cands):
        raise ValueError("candidates.csv mixes search seed counts; the search means are not comparable")
    old = {}
    if reuse is not None:
        for r in csv.DictReader(Path(reuse).read_text().splitlines()):
            old[(r["forecaster"], int(r["T"]), r["m"], r["family"], int(r["points"]))] = r
    rows = []
    with ProcessPoolExecutor(workers) as pool:
        for f in forecasters or list(dict.fromkeys(c["forecaster"] for c in cands)):
            for T in HORIZONS:
                mine = [c for c in cands if c["forecaster"] == f and int(c["T"]) == T]
                if not mine:
                    continue
                m = registry.forecaster(f).grid_m({}, T)
                for name, fam in FAMILIES.items():
                    found = [c for c in mine if c["adversary"] == name]
                    if not found:
                        continue
                    best = max(found, key=lambda c: float(c["search_mean_cdl"]))
                    win = next(
                        float(c["search_mean_cdl"])
                        for c in mine
                        if (c["adversary"], c["adversary_params"]) == winners[(f, T)]
                    )
                    pts = exhaustive_points(fam, m, T)
                    t0 = time.perf_counter()
                    was = old.get((f, T, str(m), name, len(pts)))
                    if was is not None:
                        top, top_params = float(was["exhaustive_best"]), was["exhaustive_params"]
                    else:
                        chunks = [pts[i : i + 64] for i in range(0, len(pts), 64)]
                        means = [
                            v
                            for part in pool.map(_mean_cdl, [(f, fam.adversary, c, T, seeds) for c in chunks])
                            for v in part
                        ]
                        k = int(np.argmax(means))
                        top, top_params = means[k], json.dumps(pts[k], sort_keys=True)
                    row = dict(
                        forecaster=f,
                        T=T,
                        m=m,
                        family=name,
                        points=len(pts),
                        search_best=float(best["search_mean_cdl"]),
                        search_params=best["adversary_params"],
                        exhaustive_best=top,
                        exhaustive_params=top_params,
                        recall=float(best["search_mean_cdl"]) / top if top > 0 else 1.0,
                        winner_recall=win / top if top > 0 else 1.0,
                        exhaustive_fresh="",
                        fresh_recall="",
                    )
                    if row["winner_recall"] < 1:
                        win_fresh, n_fresh = fresh[(f, T)]
                        ex = pool.submit(
                            _fresh_mean_cdl, (f, fam.adversary, json.loads(top_params), T, n_fresh)
                        ).result()
                        row.update(exhaustive_fresh=ex, fresh_recall=win_fresh / ex if ex > 0 else 1.0)
                    rows.append(row)
                    print(
                        f"{f:<8} T = {T:<6} {name:<12} recall {row['recall']:.4f} "
                        f"(search {row['search_best']:.4g}, exhaustive {row['exhaustive_best']:.4g} over "
                        f"{len(pts)} points, {time.perf_counter() - t0:.0f} s)",
                        flush=True,
                    )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default="results/worstcase")
    ap.add_argument("--forecasters", help="comma-separated (default: every forecaster of candidates.csv)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reuse", help="an earlier validation.csv whose exhaustive sweeps to reuse")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    rows = validate(folder, args.forecasters.split(",") if args.forecasters else None, args.workers, args.reuse)
    from fastcdl._writing import atomic_write, csv_text

    atomic_write({folder / "validation.csv": csv_text(rows, COLUMNS)})
    low = [r for r in rows if r["recall"] < 0.97]
    print(
        f"{len(rows)} (forecaster, T, family) cells; recall min {min(r['recall'] for r in rows):.4f}; "
        f"{len(low)} below 0.97; winner recall min {min(r['winner_recall'] for r in rows):.4f}"
    )
    for r in rows:
        if r["fresh_recall"] != "":
            print(
                f"{r['forecaster']} T = {r['T']} {r['family']}: the exhaustive best on the fresh seeds "
                f"{r['exhaustive_fresh']:.4g}, the winner's fresh mean over it {r['fresh_recall']:.4f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
