"""Rates, slopes and CDL/ECE ratios from stored trials (docs/experiments.md).

Per (forecaster, adversary, metric): the mean over seeds at each T with a bootstrap 95%
interval of the mean, and the least-squares slope of log(mean) against log T over the
upper half of the grid with a bootstrap-over-seeds 95% interval (seeds are resampled
jointly across T, because a seed index is shared by every T of a run). Each interval's
bootstrap stream derives from the master seed and its cell's labels only, so a cell's
interval does not depend on which other forecasters, adversaries or horizons were run.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections import defaultdict
from pathlib import Path

import numpy as np

RATES_COLUMNS = ("forecaster", "adversary", "T", "metric", "mean", "lo", "hi", "n_seeds")
SUMMARY_COLUMNS = ("forecaster", "adversary", "metric", "slope", "slope_lo", "slope_hi", "t_min_fit", "t_max_fit", "n_seeds")
N_BOOT = 2000


def fit_slope(T, y) -> float:
    """Least-squares slope b of log y = a + b log T. NaN if some y <= 0 or fewer than two points.

    >>> round(fit_slope([10, 100, 1000], [1.0, 0.1, 0.01]), 12)
    -1.0
    """
    T = np.asarray(T, dtype=float)
    y = np.asarray(y, dtype=float)
    if T.shape[0] < 2 or np.any(~(y > 0)):
        return float("nan")
    x = np.log(T)
    ly = np.log(y)
    xc = x - x.mean()
    return float((xc * (ly - ly.mean())).sum() / (xc * xc).sum())


def _group(rows, metrics):
    """{(forecaster, adversary, metric): {T: {seed_index: value}}}."""
    g = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        for m in metrics:
            if r.get(m) is not None:
                g[(r["forecaster_label"], r["adversary_label"], m)][r["T"]][r["seed_index"]] = r[m]
    return g


def _cell_rng(seed, *cell):
    """The bootstrap stream of one cell, e.g. ("rate", forecaster, adversary, metric, T):
    SeedSequence entropy from the master seed and a stable hash of the cell's labels."""
    digest = hashlib.sha256(json.dumps(cell).encode()).digest()
    return np.random.default_rng(np.random.SeedSequence([seed, int.from_bytes(digest[:16], "little")]))


def analyze(rows, metrics, *, seed=0, n_boot=N_BOOT):
    """Return (rates, slopes, ratios) as lists of dicts, deterministic for a given seed."""
    rates, slopes = [], []
    groups = _group(rows, metrics)
    for (f, a, m), by_T in sorted(groups.items()):
        Ts = sorted(T for T in by_T if len(by_T[T]) >= 1)
        for T in Ts:
            v = np.array([by_T[T][s] for s in sorted(by_T[T])])
            mean = float(v.mean())
            if v.shape[0] >= 2:
                rng = _cell_rng(seed, "rate", f, a, m, int(T))
                boot = v[rng.integers(0, v.shape[0], (n_boot, v.shape[0]))].mean(axis=1)
                lo, hi = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
            else:
                lo = hi = float("nan")
            rates.append(dict(forecaster=f, adversary=a, T=T, metric=m, mean=mean, lo=lo, hi=hi, n_seeds=int(v.shape[0])))
        fit_T = [T for T in Ts if len(by_T[T]) >= 2]
        fit_T = fit_T[len(fit_T) // 2 :] if len(fit_T) >= 4 else fit_T
        if len(fit_T) < 2:
            continue
        seeds = sorted(set.intersection(*(set(by_T[T]) for T in fit_T)))
        means = [np.mean(list(by_T[T].values())) for T in fit_T]
        slope = fit_slope(fit_T, means)
        lo = hi = float("nan")
        if len(seeds) >= 2 and np.isfinite(slope):
            V = np.array([[by_T[T][s] for s in seeds] for T in fit_T])  # (n_T, n_seeds)
            idx = _cell_rng(seed, "slope", f, a, m).integers(0, len(seeds), (n_boot, len(seeds)))
            boot_means = V[:, idx].mean(axis=2)  # (n_T, n_boot)
            bs = np.array([fit_slope(fit_T, boot_means[:, b]) for b in range(n_boot)])
            bs = bs[np.isfinite(bs)]
            if bs.shape[0]:
                lo, hi = (float(x) for x in np.percentile(bs, [2.5, 97.5]))
        slopes.append(
            dict(forecaster=f, adversary=a, metric=m, slope=slope, slope_lo=lo, slope_hi=hi,
                 t_min_fit=fit_T[0], t_max_fit=fit_T[-1], n_seeds=len(seeds))
        )
    ratios = []
    mean_of = {(r["forecaster"], r["adversary"], r["T"], r["metric"]): r["mean"] for r in rates}
    for (f, a, T, m), v in sorted(mean_of.items()):
        if m == "cdl" and (f, a, T, "ece") in mean_of:
            e = mean_of[(f, a, T, "ece")]
            ratios.append(dict(forecaster=f, adversary=a, T=T, cdl=v, ece=e, cdl_over_ece=v / e if e > 0 else float("nan")))
    return rates, slopes, ratios


def _atomic_write(texts: dict) -> None:
    """Write {path: text}: every file to a temporary name first, then each renamed over its
    target (os.replace): a crash or a signal never leaves a truncated file, and only the
    renames (microseconds) separate the files' changes."""
    tmps = {path: path.with_name(f".{path.name}.tmp{os.getpid()}") for path in texts}
    try:
        for path, text in texts.items():
            tmps[path].write_text(text)
        for path, tmp in tmps.items():
            os.replace(tmp, path)
    finally:
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)


def _csv_text(rows, columns) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items() if k in columns})
    return buf.getvalue()


def write_summary(out_dir, rows, *, metrics, preset: dict, code_version: str, machine: str, timing: dict, seed=0):
    """Write rates.csv, summary.csv and summary.json into out_dir, atomically and together."""
    out_dir = Path(out_dir)
    rates, slopes, ratios = analyze(rows, metrics, seed=seed)
    doc = {
        "preset": preset,
        "code_version": code_version,
        "machine": machine,
        "timing": timing,
        "n_trials": len(rows),
        "slopes": slopes,
        "rates": rates,
        "cdl_over_ece": ratios,
    }
    _atomic_write({
        out_dir / "rates.csv": _csv_text(rates, RATES_COLUMNS),
        out_dir / "summary.csv": _csv_text(slopes, SUMMARY_COLUMNS),
        out_dir / "summary.json": json.dumps(doc, indent=1, allow_nan=True),
    })
    return rates, slopes, ratios
