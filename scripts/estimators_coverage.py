"""Coverage study of the sample estimators and their intervals (results/estimators-coverage/).

    python scripts/estimators_coverage.py run [--out DIR] [--budget SECONDS]
    python scripts/estimators_coverage.py run [--plan N:R|N:A-B,...] [--estimators A,B,...]
    python scripts/estimators_coverage.py merge --from DIR [--out DIR]
    python scripts/estimators_coverage.py summary [--out DIR]
    python scripts/estimators_coverage.py tables [--out DIR]
    python scripts/estimators_coverage.py validate [--out DIR] [--budget SECONDS]
    python scripts/estimators_coverage.py validate [--plan N:R,...] [--estimators A,B@none] [--file NAME]
    python scripts/estimators_coverage.py validation-table [--out DIR] [--file NAME]
    python scripts/estimators_coverage.py validation-summary [--out DIR]

Models: six (score distribution, calibration curve) pairs, SHAPES below. Population values
are the estimators evaluated on a fine weighted table of the model: M equal-mass points of the
score distribution (the midpoints (j - 1/2)/M of its quantile function), each of weight
(1 - atom)/M with positives c(q) times that weight, plus the atom's own bucket. The exact
metrics accept such weighted tables; the population value of the discretised model differs
from the continuous one by O(1/M), and populations.csv holds the values at M = 250,000 and
M = 1,000,000 to show how little.

For each model, n in N_GRID and replication r (seeded by model, n and r), one sample of n
rounds is drawn and, for every estimator, the script records the estimate and the summaries
of three resampling schemes of the sample's bucket table:

- the bootstrap over rounds as fastcdl.uncertainty.bootstrap draws it (multinomial counts of
  the cells (bucket, y)), B replicates: mean, sd, 2.5% and 97.5% quantiles, and at n = 1000
  the BCa ends (fastcdl.uncertainty._bca, the jackknife over rounds);
- half-samples without replacement (a random permutation of the rounds split in two, H/2
  permutations): mean, sd and quantiles of the estimator on the halves;
- quarter-samples (the permutation split in four): the same.

raw.csv holds one row per (model, n, r, estimator), appended as each sample finishes, so an
interrupted run keeps everything but the sample in flight and resumes where it stopped.
`summary` turns raw.csv into summary.csv: bias, sd, RMSE and, for each interval method, the
coverage with its Wilson 95% interval; and bias_rate.csv: the slope of log |bias| against
log n. The interval methods are formed from the recorded summaries (see METHODS in
summarise()).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats as sps
from scipy.special import expit, logit

import fastcdl as fc
from fastcdl._compiled import resample as _rk
from fastcdl.exact import sample_size_check_off
from fastcdl.measures import MEASURES
from fastcdl.sample import (
    atb_unbiased,
    cdl_monotone,
    cdl_monotone_crossfit,
    cutoff_ce,
    ece_sweep,
    k2_debiased,
    smce,
    vcdl_monotone,
    vcdl_monotone_crossfit,
)
from fastcdl.bucket_table import BucketStats
from fastcdl.uncertainty import _bca, _cells

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "estimators-coverage"
N_GRID = (1000, 10000, 100000, 1000000)
# replications per n, bootstrap replicates, half-samples (and as many quarter-samples)
PLAN = {1000: (150, 200, 100), 10000: (100, 200, 100), 100000: (20, 100, 100), 1000000: (6, 0, 0)}
M_FINE = 1_000_000
M_CHECK = 250_000


def _ece_quantile(st):
    return fc.ece(st.rebin("auto", strategy="quantile"))


ESTIMATORS = {
    "cdl_monotone": cdl_monotone,
    "vcdl_monotone": vcdl_monotone,
    "cutoff_ce": cutoff_ce,
    "smce": smce,
    "atb_unbiased": atb_unbiased,
    "ece_quantile": _ece_quantile,
    # added from the literature after the first run: `run` computes them on the same samples
    # and resamples (the seed is per (model, n, replication), not per estimator)
    "k2_debiased": k2_debiased,
    "ece_sweep": ece_sweep,
    "cdl_monotone_crossfit": cdl_monotone_crossfit,
    "vcdl_monotone_crossfit": vcdl_monotone_crossfit,
}


class Shape:
    """A model: scores from ``dist`` (a frozen scipy distribution on [0, 1]) with probability
    1 - atom, and the score ``atom_at`` with probability atom; E[y | p] = curve(p)."""

    def __init__(self, name, words, dist, curve, atom=0.0, atom_at=0.5, atom_truth=0.5):
        self.name, self.words, self.dist, self.curve = name, words, dist, curve
        self.atom, self.atom_at, self.atom_truth = atom, atom_at, atom_truth

    def table(self, M):
        """The weighted population table of M equal-mass points (and the atom)."""
        q = self.dist.ppf((np.arange(M) + 0.5) / M)
        w = np.full(M, (1.0 - self.atom) / M)
        c = self.curve(q)
        if self.atom > 0.0:
            q = np.r_[q, self.atom_at]
            w = np.r_[w, self.atom]
            c = np.r_[c, self.atom_truth]
        return BucketStats.from_table(q, w, c * w)

    def sample(self, n, rng):
        p = self.dist.rvs(size=n, random_state=rng)
        if self.atom > 0.0:
            p = np.where(rng.random(n) < self.atom, self.atom_at, p)
        truth = self.curve(p)
        if self.atom > 0.0:
            truth = np.where(p == self.atom_at, self.atom_truth, truth)
        y = (rng.random(n) < truth).astype(np.int8)
        return y, p


def _temper(a):
    return lambda p: expit(a * logit(p))


SHAPES = [
    Shape("calibrated", "p ~ U[0,1], E[y|p] = p", sps.uniform(), lambda p: p),
    Shape("overconfident", "p ~ U[0,1], E[y|p] = expit(0.7 logit p)", sps.uniform(), _temper(0.7)),
    Shape("underconfident", "p ~ Beta(2,2), E[y|p] = expit(1.5 logit p)", sps.beta(2, 2), _temper(1.5)),
    Shape(
        "nonmonotone",
        "p ~ U[0,1], E[y|p] = p + 0.1 sin(4 pi p)",
        sps.uniform(),
        lambda p: p + 0.1 * np.sin(4 * np.pi * p),
    ),
    Shape(
        "point_mass",
        "p = 0.7 w.p. 0.3 (E[y|p] = 0.62 there), else p ~ U[0,1] calibrated",
        sps.uniform(),
        lambda p: p,
        atom=0.3,
        atom_at=0.7,
        atom_truth=0.62,
    ),
    Shape("heavy_tails", "p ~ Beta(0.2,0.2), E[y|p] = expit(0.8 logit p)", sps.beta(0.2, 0.2), _temper(0.8)),
]


def true_ece(shape, M):
    q = shape.dist.ppf((np.arange(M) + 0.5) / M)
    val = (1.0 - shape.atom) * np.mean(np.abs(shape.curve(q) - q))
    return val + shape.atom * abs(shape.atom_truth - shape.atom_at)


def true_k2(shape, M):
    q = shape.dist.ppf((np.arange(M) + 0.5) / M)
    val = (1.0 - shape.atom) * np.mean((shape.curve(q) - q) ** 2)
    return val + shape.atom * (shape.atom_truth - shape.atom_at) ** 2


# Estimators whose population value is another's: the cross-fitted CDL_M and VCDL_M estimate
# CDL_M and VCDL_M.
TARGET = {"cdl_monotone_crossfit": "cdl_monotone", "vcdl_monotone_crossfit": "vcdl_monotone"}


def _measure_of_population(key):
    """The registry measure ``key`` of the model's population table (M equal-mass points)."""

    def f(sh, M):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fc.MEASURES[key](sh.table(M))

    return f


# Estimators added after populations.csv was made: their population values, appended to it. The
# measures of model scores (docs/model-scores.md) are functions of the population table itself.
LATER = {
    "k2_debiased": true_k2,
    "ece_sweep": true_ece,
    **{key: _measure_of_population(key) for key in ("smece", "ici", "corp")},
}


def populations(out):
    """Population value of every estimator on every model (cached in populations.csv; the
    estimators of LATER appended to it; the cross-fitted ones take TARGET's)."""
    path = out / "populations.csv"
    if not path.exists():
        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for sh in SHAPES:
                vals = {}
                for M in (M_CHECK, M_FINE):
                    st = sh.table(M)
                    vals[M] = {
                        "cdl_monotone": cdl_monotone(st),
                        "vcdl_monotone": vcdl_monotone(st),
                        "cutoff_ce": cutoff_ce(st),
                        "smce": smce(st),
                        "atb_unbiased": fc.atb(st),
                        "ece_quantile": true_ece(sh, M),
                    }
                for est in vals[M_FINE]:
                    rows.append(
                        {
                            "shape": sh.name,
                            "estimator": est,
                            "value": vals[M_FINE][est],
                            "value_M250k": vals[M_CHECK][est],
                            "model": sh.words,
                        }
                    )
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    have = {r["estimator"] for r in rows}
    extra = [
        {"shape": sh.name, "estimator": est, "value": f(sh, M_FINE), "value_M250k": f(sh, M_CHECK), "model": sh.words}
        for est, f in LATER.items()
        if est not in have
        for sh in SHAPES
    ]
    if extra:
        with open(path, "a", newline="") as fh:
            csv.DictWriter(fh, fieldnames=list(rows[0])).writerows(extra)
        rows += extra
    return {(r["shape"], r["estimator"]): float(r["value"]) for r in rows}


def _summ(v, prefix):
    if v.size == 0:
        return {f"{prefix}_{k}": math.nan for k in ("mean", "sd", "q025", "q975")}
    q025, q975 = np.quantile(v, [0.025, 0.975])
    return {f"{prefix}_mean": v.mean(), f"{prefix}_sd": v.std(ddof=1), f"{prefix}_q025": q025, f"{prefix}_q975": q975}


def _table_from_counts(st, n, s):
    keep = n > 0
    q = st.values[keep]
    return BucketStats(q, n[keep], s[keep], q * n[keep], None, None)


def one_sample(sh, n, r, B, H, names=None):
    """The raw rows of one sample for the estimators ``names`` (default: all). The draws (sample,
    bootstrap counts, permutations) do not depend on ``names``, so estimators computed in
    separate calls see the same sample and the same resamples."""
    ests = {k: ESTIMATORS[k] for k in (ESTIMATORS if names is None else names)}
    rng = np.random.default_rng([SHAPES.index(sh), n, r])
    y, p = sh.sample(n, rng)
    cells = _cells(y, p, None, None, by_outcome=True)
    st = cells.stats
    m = st.n_buckets
    est = {k: f(st) for k, f in ests.items()}
    boot = {k: np.empty(B) for k in ests}
    half = {k: np.empty(H) for k in ests}
    quarter = {k: np.empty(H) for k in ests}
    if B:
        counts = rng.multinomial(n, cells.count / n, size=B)
        nb, sb = _rk.scatter_cells(counts, cells.bucket, cells.y, cells.weight, m)
        nb, sb = nb.astype(np.int64), sb.astype(np.int64)
        for b in range(B):
            t = _table_from_counts(st, nb[b], sb[b])
            for k, f in ests.items():
                boot[k][b] = f(t)
    rounds = np.repeat(np.arange(cells.count.shape[0]), cells.count)  # the cell of every round
    for j in range(H // 2):
        perm = rng.permutation(rounds)
        for part, store, pieces in ((0, half, 2), (1, half, 2), (0, quarter, 4), (1, quarter, 4)):
            size = n // pieces
            c = np.bincount(perm[part * size : (part + 1) * size], minlength=cells.count.shape[0])
            nb, sb = _rk.scatter_cells(c[None, :].astype(np.int64), cells.bucket, cells.y, cells.weight, m)
            t = _table_from_counts(st, nb[0].astype(np.int64), sb[0].astype(np.int64))
            for k, f in ests.items():
                store[k][2 * j + part] = f(t)
    rows = []
    for k, f in ests.items():
        row = {"estimate": est[k]}
        row.update(_summ(boot[k], "boot"))
        row["bca_lo"] = row["bca_hi"] = math.nan
        if B and n <= 1000:
            lo, hi = _bca(f, cells, est[k], boot[k], 0.025)
            row["bca_lo"], row["bca_hi"] = lo, hi
        row.update(_summ(half[k], "half"))
        row.update(_summ(quarter[k], "quarter"))
        rows.append((k, row))
    return rows


FIELDS = [
    "shape",
    "n",
    "rep",
    "estimator",
    "truth",
    "estimate",
    "boot_mean",
    "boot_sd",
    "boot_q025",
    "boot_q975",
    "bca_lo",
    "bca_hi",
    "half_mean",
    "half_sd",
    "half_q025",
    "half_q975",
    "quarter_mean",
    "quarter_sd",
    "quarter_q025",
    "quarter_q975",
    "B",
    "H",
    "seconds",
]


def run(out, budget, plan=None, names=None):
    """Append to raw.csv the rows missing for the estimators ``names`` (default: all) under
    ``plan`` ({n: replications}, default PLAN's; the resampling sizes are PLAN's). A row is keyed
    by (model, n, replication, estimator): the rows already there are kept, never recomputed.
    A plan's value is a number of replications R (0 to R - 1) or a range of them: two processes
    can share the replications of one n, each writing its own --out, merged by `merge`."""
    out.mkdir(parents=True, exist_ok=True)
    pop = populations(out)
    names = list(ESTIMATORS) if names is None else list(names)
    reps = {n: PLAN[n][0] for n in N_GRID} if plan is None else plan
    reps = {n: R if isinstance(R, range) else range(R) for n, R in reps.items()}
    raw = out / "raw.csv"
    done = set()
    if raw.exists():
        with open(raw) as fh:
            done = {(r["shape"], int(r["n"]), int(r["rep"]), r["estimator"]) for r in csv.DictReader(fh)}
    new = not raw.exists()
    start = time.time()
    with open(raw, "a", newline="") as fh, warnings.catch_warnings(), sample_size_check_off():
        warnings.simplefilter("ignore")
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for n, R in reps.items():
            _, B, H = PLAN[n]
            for r in R:  # replications interleaved over models: a stopped run stays balanced
                for sh in SHAPES:
                    todo = [k for k in names if (sh.name, n, r, k) not in done]
                    if not todo:
                        continue
                    if time.time() - start > budget:
                        print("budget spent", flush=True)
                        return
                    t0 = time.time()
                    rows = one_sample(sh, n, r, B, H, todo)
                    dt = time.time() - t0
                    for k, row in rows:
                        w.writerow(
                            {
                                "shape": sh.name,
                                "n": n,
                                "rep": r,
                                "estimator": k,
                                "truth": pop[(sh.name, TARGET.get(k, k))],
                                **row,
                                "B": B,
                                "H": H,
                                "seconds": round(dt, 3),
                            }
                        )
                    fh.flush()
            print(f"n = {n} done at {time.time() - start:.0f} s", flush=True)


def wilson(k, N, z=1.959963984540054):
    if N == 0:
        return math.nan, math.nan
    ph = k / N
    den = 1 + z * z / N
    mid = (ph + z * z / (2 * N)) / den
    half = z * math.sqrt(ph * (1 - ph) / N + z * z / (4 * N * N)) / den
    return mid - half, mid + half


Z = 1.959963984540054


def _hs(d, rate):
    """Half-sample extrapolation: the estimate minus its bias, read off the half-samples' mean
    as if the bias fell like n^-rate: E theta_{n/2} - E theta_n = (2^rate - 1) bias_n."""
    return d["estimate"] - (d["half_mean"] - d["estimate"]) / (2.0**rate - 1.0)


def _rate_est(d):
    num = d["quarter_mean"] - d["half_mean"]
    den = d["half_mean"] - d["estimate"]
    r = np.full(num.shape, 0.5)
    ok = (den > 0) & (num > 0)
    r[ok] = np.log2(num[ok] / den[ok])
    return np.clip(r, 0.5, 1.0)


def methods(d):
    """Every interval method: name -> (point estimate, lo, hi) arrays."""
    th = d["estimate"]
    out = {
        "percentile": (th, d["boot_q025"], d["boot_q975"]),
        "bca": (th, d["bca_lo"], d["bca_hi"]),
        "basic": (2 * th - d["boot_mean"], 2 * th - d["boot_q975"], 2 * th - d["boot_q025"]),
        "normal_bootstrap_bc": (
            2 * th - d["boot_mean"],
            2 * th - d["boot_mean"] - Z * d["boot_sd"],
            2 * th - d["boot_mean"] + Z * d["boot_sd"],
        ),
    }
    # subsampling (Politis and Romano 1994) at b = n/4, rate n^-1/2, finite-population corrected
    f = math.sqrt(0.25 / 0.75)
    out["subsample_n/4"] = (th, th - (d["quarter_q975"] - th) * f, th - (d["quarter_q025"] - th) * f)
    for name, rate in (("hs_1/2", 0.5), ("hs_2/3", 2.0 / 3.0), ("hs_1", 1.0)):
        c = _hs(d, rate)
        out[f"{name}"] = (c, c - Z * d["half_sd"], c + Z * d["half_sd"])
    # the same extrapolation from the quarter-samples, with their spread scaled to n
    for name, rate in (("quarter_1/2", 0.5), ("quarter_2/3", 2.0 / 3.0)):
        c = d["estimate"] - (d["quarter_mean"] - d["estimate"]) / (4.0**rate - 1.0)
        out[name] = (c, c - Z * f * d["quarter_sd"], c + Z * f * d["quarter_sd"])
    c = d["estimate"]
    out["quarter_none"] = (c, c - Z * f * d["quarter_sd"], c + Z * f * d["quarter_sd"])

    def clipped(m):  # the interval met with the parameter's range [0, inf): an empty meet becomes {0}
        point, lo, hi = out[m]
        return point, np.maximum(lo, 0.0), np.maximum(hi, 0.0)

    out["quarter_1/2c"] = clipped("quarter_1/2")
    # the union of the intervals over bias rates from 1/2 to 2/3 (point: rate 2/3)
    c12 = d["estimate"] - (d["quarter_mean"] - d["estimate"]) / (4.0**0.5 - 1.0)
    c23 = d["estimate"] - (d["quarter_mean"] - d["estimate"]) / (4.0 ** (2.0 / 3.0) - 1.0)
    lo = np.minimum(c12, c23) - Z * f * d["quarter_sd"]
    hi = np.maximum(c12, c23) + Z * f * d["quarter_sd"]
    out["quarter_band"] = (c23, np.maximum(lo, 0.0), np.maximum(hi, 0.0))
    out["quarter_2/3c"] = clipped("quarter_2/3")
    # fastcdl.interval's rule: quarter-samples, the union over the Measure's bias rates 1/2 to 2/3
    # (point estimate at 2/3), no correction for the unbiased ones (atb_unbiased, k2_debiased)
    rate = MEASURES[d["estimator"]].bias_rate if d["estimator"] in MEASURES else (0.5, 2.0 / 3.0)
    assert rate in (None, (0.5, 2.0 / 3.0)), (d["estimator"], rate)
    out["default"] = out["quarter_none"] if rate is None else out["quarter_band"]
    r = _rate_est(d)
    c = d["estimate"] - (d["half_mean"] - d["estimate"]) / (2.0**r - 1.0)
    out["hs_rate_est"] = (c, c - Z * d["half_sd"], c + Z * d["half_sd"])
    return out


def summarise(out):
    with open(out / "raw.csv") as fh:
        rows = list(csv.DictReader(fh))
    keys = sorted(
        {(r["shape"], int(r["n"]), r["estimator"]) for r in rows},
        key=lambda k: ([s.name for s in SHAPES].index(k[0]), k[1], list(ESTIMATORS).index(k[2])),
    )
    num = [f for f in FIELDS if f not in ("shape", "estimator")]
    summ, rate_rows = [], []
    for key in keys:
        sel = [r for r in rows if (r["shape"], int(r["n"]), r["estimator"]) == key]
        d = {f: np.array([float(r[f]) for r in sel]) for f in num}
        d["estimator"] = key[2]
        truth = d["truth"][0]
        R = len(sel)
        for meth, (point, lo, hi) in methods(d).items():
            ok = np.isfinite(lo) & np.isfinite(hi)
            if not ok.any():
                continue
            cover = (lo[ok] <= truth) & (truth <= hi[ok])
            k = int(cover.sum())
            wl, wh = wilson(k, int(ok.sum()))
            err = point - truth
            summ.append(
                {
                    "shape": key[0],
                    "n": key[1],
                    "estimator": key[2],
                    "method": meth,
                    "truth": truth,
                    "samples": int(ok.sum()),
                    "mean": point.mean(),
                    "bias": err.mean(),
                    "sd": point.std(ddof=1) if R > 1 else math.nan,
                    "rmse": math.sqrt(np.mean(err**2)),
                    "coverage": k / ok.sum(),
                    "coverage_lo": wl,
                    "coverage_hi": wh,
                    "below": float(np.mean(hi[ok] < truth)),
                    "above": float(np.mean(lo[ok] > truth)),
                    "mean_width": float(np.mean(hi[ok] - lo[ok])),
                }
            )
        # the plug-in estimate's bias at n = 10^6 comes from the estimate alone
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(summ[0]))
        w.writeheader()
        for s in summ:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in s.items()})
    # bias decay: slope of log |bias| of the plug-in estimate against log n, per model and estimator
    for sh in SHAPES:
        for est in ESTIMATORS:
            pts = [
                (s["n"], s["bias"], s["sd"], s["samples"])
                for s in summ
                if s["shape"] == sh.name and s["estimator"] == est and s["method"] == "percentile"
            ]
            pts += [
                (
                    key[1],
                    np.mean([float(r["estimate"]) for r in rows if (r["shape"], int(r["n"]), r["estimator"]) == key])
                    - float(next(r["truth"] for r in rows if (r["shape"], int(r["n"]), r["estimator"]) == key)),
                    math.nan,
                    0,
                )
                for key in keys
                if key[0] == sh.name and key[2] == est and key[1] not in {p[0] for p in pts}
            ]
            pts.sort()
            good = [(n, b) for n, b, _, _ in pts if b > 0]
            slope = math.nan
            if len(good) >= 2:
                slope = float(np.polyfit(np.log([g[0] for g in good]), np.log([g[1] for g in good]), 1)[0])
            rate_rows.append(
                {
                    "shape": sh.name,
                    "estimator": est,
                    **{f"bias_n{n}": f"{b:.3g}" for n, b, _, _ in pts},
                    "log_log_slope": f"{slope:.3f}",
                }
            )
    fields = ["shape", "estimator"] + [f"bias_n{n}" for n in N_GRID] + ["log_log_slope"]
    with open(out / "bias_rate.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rate_rows)


VALIDATE_PLAN = {5000: 150, 50000: 100}
VALIDATED = ("cdl_monotone", "vcdl_monotone", "cutoff_ce", "smce", "atb_unbiased")


def validate(out, budget, plan=None, estimators=VALIDATED, name="validation.csv"):
    """fastcdl.interval itself, as a user calls it (defaults, seed per sample), at the sample
    sizes the issue names, 5,000 and 50,000 rounds, on the same models: validation.csv, one row
    per (model, n, replication, estimator), appended as each sample finishes. ``plan`` ({n:
    replications}, default VALIDATE_PLAN), ``estimators`` and the file ``name`` select a part
    (validation-large.csv: more replications at 10^5 rounds)."""
    from fastcdl.uncertainty import CoverageWarning, interval

    plan = VALIDATE_PLAN if plan is None else plan
    pop = populations(out)
    path = out / name
    done = set()
    if path.exists():
        with open(path) as fh:
            done = {(r["shape"], int(r["n"]), int(r["rep"]), r["estimator"]) for r in csv.DictReader(fh)}
    fields = ["shape", "n", "rep", "estimator", "truth", "value", "estimate", "lo", "hi", "seconds"]
    new = not path.exists()
    start = time.time()
    with open(path, "a", newline="") as fh, warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        w = csv.DictWriter(fh, fieldnames=fields)
        if new:
            w.writeheader()
        for n, R in plan.items():
            for r in range(R):
                for sh in SHAPES:
                    todo = [est for est in estimators if (sh.name, n, r, est) not in done]
                    if not todo:
                        continue
                    if time.time() - start > budget:
                        print("budget spent", flush=True)
                        return
                    rng = np.random.default_rng([100 + SHAPES.index(sh), n, r])
                    y, p = sh.sample(n, rng)
                    for est in todo:
                        t0 = time.time()
                        # "name@none": the interval without a bias correction (rate=None)
                        base, _, how = est.partition("@")
                        iv = interval(base, y, p, seed=r) if not how else interval(base, y, p, seed=r, rate=None)
                        target = TARGET.get(base, base)
                        w.writerow(
                            {
                                "shape": sh.name,
                                "n": n,
                                "rep": r,
                                "estimator": est,
                                "truth": pop[(sh.name, target)],
                                "value": iv.value,
                                "estimate": iv.estimate,
                                "lo": iv.lo,
                                "hi": iv.hi,
                                "seconds": round(time.time() - t0, 3),
                            }
                        )
                    fh.flush()
            print(f"validation n = {n} done at {time.time() - start:.0f} s", flush=True)


VALIDATION_FILES = (
    "validation.csv",
    "validation-large.csv",
    "validation-binned.csv",
    "validation-crossfit.csv",
    "validation-scores.csv",
)


def validation_summary(out):
    """validation_summary.csv: per file, estimator, n and model, the samples, the coverage of
    fastcdl.interval with its Wilson 95% interval, and the bias, sd and RMSE of the plug-in value
    and of the debiased estimate; rows "all" pool the models."""
    summ = []
    for name in VALIDATION_FILES:
        path = out / name
        if not path.exists():
            continue
        with open(path) as fh:
            rows = list(csv.DictReader(fh))
        keys = sorted({(r["estimator"], int(r["n"])) for r in rows})
        for est, n in keys:
            sel_all = [r for r in rows if r["estimator"] == est and int(r["n"]) == n]
            for shape in [s.name for s in SHAPES] + ["all"]:
                sel = sel_all if shape == "all" else [r for r in sel_all if r["shape"] == shape]
                if not sel:
                    continue
                truth = np.array([float(r["truth"]) for r in sel])
                value = np.array([float(r["value"]) for r in sel]) - truth
                estimate = np.array([float(r["estimate"]) for r in sel]) - truth
                k = sum(float(r["lo"]) <= float(r["truth"]) <= float(r["hi"]) for r in sel)
                wl, wh = wilson(k, len(sel))
                summ.append(
                    {
                        "file": name,
                        "estimator": est,
                        "n": n,
                        "shape": shape,
                        "samples": len(sel),
                        "covered": k,
                        "coverage": k / len(sel),
                        "coverage_lo": wl,
                        "coverage_hi": wh,
                        "truth": truth[0] if shape != "all" else math.nan,
                        "bias_plugin": value.mean(),
                        "bias_estimate": estimate.mean(),
                        "sd_plugin": value.std(ddof=1) if len(sel) > 1 else math.nan,
                        "sd_estimate": estimate.std(ddof=1) if len(sel) > 1 else math.nan,
                        "rmse_plugin": math.sqrt(np.mean(value**2)),
                        "rmse_estimate": math.sqrt(np.mean(estimate**2)),
                    }
                )
    with open(out / "validation_summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(summ[0]))
        w.writeheader()
        for r in summ:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def validation_table(out, name="validation.csv"):
    with open(out / name) as fh:
        rows = list(csv.DictReader(fh))
    plan = sorted({int(r["n"]) for r in rows})
    ests = list(dict.fromkeys(r["estimator"] for r in rows))
    print("| estimator | n | " + " | ".join(s.name for s in SHAPES) + " |")
    print("|---|---|" + "---|" * len(SHAPES))
    for est in ests:
        for n in plan:
            cells = []
            for sh in SHAPES:
                sel = [r for r in rows if r["estimator"] == est and int(r["n"]) == n and r["shape"] == sh.name]
                k = sum(float(r["lo"]) <= float(r["truth"]) <= float(r["hi"]) for r in sel)
                cells.append(f"{k}/{len(sel)}" if sel else "")
            if any(cells):
                print(f"| {est} | {n} | " + " | ".join(cells) + " |")


SHOWN_METHODS = (
    "default",
    "percentile",
    "bca",
    "basic",
    "normal_bootstrap_bc",
    "subsample_n/4",
    "hs_1/2",
    "hs_2/3",
    "quarter_1/2",
    "quarter_2/3",
    "quarter_band",
)


def tables(out):
    """Markdown tables of summary.csv and bias_rate.csv, for the README and docs/estimators.md."""
    with open(out / "summary.csv") as fh:
        summ = list(csv.DictReader(fh))
    by = {(s["shape"], int(s["n"]), s["estimator"], s["method"]): s for s in summ}
    ns = sorted({int(s["n"]) for s in summ if s["method"] == "default"})
    shapes = [s.name for s in SHAPES]
    print("Coverage of the default interval (fastcdl.interval) at nominal 0.95, with its Wilson 95% interval:\n")
    print("| estimator | model | " + " | ".join(f"n = {n}" for n in ns) + " |")
    print("|---|---|" + "---|" * len(ns))
    for est in ESTIMATORS:
        for sh in shapes:
            cells = []
            for n in ns:
                s = by.get((sh, n, est, "default"))
                cells.append(
                    ""
                    if s is None
                    else f"{float(s['coverage']):.2f} [{float(s['coverage_lo']):.2f}, {float(s['coverage_hi']):.2f}]"
                )
            print(f"| {est} | {sh} | " + " | ".join(cells) + " |")
    print("\nLowest coverage over the six models, by method (samples per model in brackets, the least to the most):\n")
    for n in ns:
        print(f"\nn = {n}:\n")
        meths = [m for m in SHOWN_METHODS if any((sh, n, e, m) in by for sh in shapes for e in ESTIMATORS)]
        print("| estimator | " + " | ".join(meths) + " |")
        print("|---|" + "---|" * len(meths))
        for est in ESTIMATORS:
            cells = []
            for m in meths:
                cov = [float(by[(sh, n, est, m)]["coverage"]) for sh in shapes if (sh, n, est, m) in by]
                cells.append(f"{min(cov):.2f}" if cov else "")
            if not any(cells):
                continue  # not run at this n
            R = sorted({int(by[(sh, n, est, "default")]["samples"]) for sh in shapes if (sh, n, est, "default") in by})
            print(f"| {est} ({R[0] if len(R) == 1 else f'{R[0]} to {R[-1]}'}) | " + " | ".join(cells) + " |")
    print("\nBias and RMSE of the plug-in estimate and of the default debiased estimate (x 1000):\n")
    print("| estimator | model | truth | " + " | ".join(f"n = {n}: bias plug-in / debiased" for n in ns) + " |")
    print("|---|---|---|" + "---|" * len(ns))
    for est in ESTIMATORS:
        for sh in shapes:
            cells = []
            truth = None
            for n in ns:
                a, b = by.get((sh, n, est, "percentile")), by.get((sh, n, est, "default"))
                if a is None or b is None:
                    cells.append("")
                    continue
                truth = float(a["truth"])
                cells.append(f"{1000 * float(a['bias']):.2f} / {1000 * float(b['bias']):.2f}")
            print(f"| {est} | {sh} | {'' if truth is None else f'{1000 * truth:.3f}'} | " + " | ".join(cells) + " |")


def _reps(text):
    """ "R": replications 0 to R - 1; "a-b": a to b - 1."""
    a, _, b = text.partition("-")
    return range(int(a)) if not b else range(int(a), int(b))


def merge(out, other):
    """Append to out/raw.csv the rows of other/raw.csv whose (model, n, replication, estimator)
    it lacks (a second process's share of the replications)."""
    with open(out / "raw.csv") as fh:
        done = {(r["shape"], r["n"], r["rep"], r["estimator"]) for r in csv.DictReader(fh)}
    with open(other / "raw.csv") as fh:
        new = [r for r in csv.DictReader(fh) if (r["shape"], r["n"], r["rep"], r["estimator"]) not in done]
    with open(out / "raw.csv", "a", newline="") as fh:
        csv.DictWriter(fh, fieldnames=FIELDS).writerows(new)
    print(f"{len(new)} rows merged from {other / 'raw.csv'}", flush=True)


def figure(out):
    """coverage.png from validation_summary.csv: the coverage of fastcdl.interval's default
    interval for every validated estimator and model, at each sample size, with Wilson 95%
    intervals of the coverage itself, against the nominal 0.95 and the 0.90 the study asks."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    with open(out / "validation_summary.csv") as fh:
        # a cell of fewer than 20 samples (the 4-sample start of validation-large.csv) says little
        rows = [
            r
            for r in csv.DictReader(fh)
            if r["shape"] != "all" and "@" not in r["estimator"] and int(r["samples"]) >= 20
        ]
    sizes = sorted({int(r["n"]) for r in rows})
    estimators = sorted({r["estimator"] for r in rows})
    shapes = sorted({r["shape"] for r in rows})
    fig = Figure(figsize=(5.0 * len(sizes), 0.42 * len(estimators) + 1.6), layout="constrained")
    axes = fig.subplots(1, len(sizes), sharey=True, squeeze=False)[0]
    for ax, n in zip(axes, sizes):
        for k, sh in enumerate(shapes):
            dy = (k - (len(shapes) - 1) / 2) * 0.1
            pts = [r for r in rows if int(r["n"]) == n and r["shape"] == sh]
            ys = [estimators.index(r["estimator"]) + dy for r in pts]
            cov = np.array([float(r["coverage"]) for r in pts])
            lo = np.array([float(r["coverage_lo"]) for r in pts])
            hi = np.array([float(r["coverage_hi"]) for r in pts])
            ax.errorbar(cov, ys, xerr=[cov - lo, hi - cov], fmt="o", markersize=4, color=f"C{k}", label=sh)
        ax.axvline(0.95, color="0.3", linestyle="--", linewidth=1)
        ax.axvline(0.90, color="C3", linestyle=":", linewidth=1)
        ax.set_title(f"n = {n:,} rounds", fontsize="medium")
        ax.set_xlabel("coverage of the 95% interval")
        ax.set_xlim(0.4, 1.01)
        ax.grid(True, axis="x", color="0.92")
    axes[0].set_yticks(range(len(estimators)), estimators)
    axes[-1].legend(fontsize="small", loc="lower left", title="model")
    fig.suptitle("fastcdl.interval: coverage in the validation runs (Wilson 95% bars; dashed 0.95, dotted 0.90)")
    fig.savefig(out / "coverage.png", dpi=110)
    print(out / "coverage.png")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "what",
        choices=("run", "summary", "tables", "validate", "validation-table", "validation-summary", "merge", "figure"),
    )
    ap.add_argument("--from", dest="other", default=None, help="merge: the --out of the other run")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--budget", type=float, default=math.inf, help="stop starting samples after this many seconds")
    ap.add_argument(
        "--plan", default=None, help="run, validate: n:replications,... (default: PLAN's replications, VALIDATE_PLAN)"
    )
    ap.add_argument(
        "--estimators",
        default=None,
        help="run, validate: comma-separated (default: every estimator of ESTIMATORS, VALIDATED)",
    )
    ap.add_argument("--file", default="validation.csv", help="validate, validation-table: the file in --out")
    a = ap.parse_args()
    out = Path(a.out)
    if a.what == "tables":
        tables(out)
        return
    if a.what == "validate":
        plan = None if a.plan is None else {int(k): int(v) for k, v in (x.split(":") for x in a.plan.split(","))}
        ests = VALIDATED if a.estimators is None else tuple(a.estimators.split(","))
        validate(out, a.budget, plan, ests, a.file)
        return
    if a.what == "validation-table":
        validation_table(out, a.file)
        return
    if a.what == "validation-summary":
        validation_summary(out)
        return
    if a.what == "figure":
        figure(out)
        return
    if a.what == "merge":
        merge(out, Path(a.other))
    if a.what == "run":
        plan = None if a.plan is None else {int(k): _reps(v) for k, v in (x.split(":") for x in a.plan.split(","))}
        run(out, a.budget, plan, None if a.estimators is None else a.estimators.split(","))
    summarise(out)


if __name__ == "__main__":
    main()
