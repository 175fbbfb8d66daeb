"""fastcdl next to what users would pick instead, on the same data, in one process.

    .venv/bin/python scripts/compare_peers.py [--quick] [--repeat 5]

Writes results/benchmarks/peers.md: median times, speed ratios and the largest absolute
difference of the values. Peers are optional (`pip install -e ".[peers]"`); a peer that
is not installed is skipped and the table says so.

- binned ECE (15 equal-width bins): scikit-learn's calibration_curve plus the ECE a user
  derives from it, relplot's binnedECE, netcal's ECE, torchmetrics' binary calibration
  error (CPU), for T = 10^4 .. 10^7;
- exact CDL: fastcdl.cdl against the linear program of the specification (section 2.4)
  over proper scoring rules, solved with scipy's HiGHS, for m = 10 .. 200 buckets;
- Algorithm 1: the sparse MsMwC oracle against the dense reference, rounds per second.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import fastcdl as fc

OUT = Path(__file__).resolve().parents[1] / "results" / "benchmarks" / "peers.md"
BINS = 15


def median_time(f, repeat):
    value = f()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), value


def version(mod):
    try:
        return importlib.import_module(mod).__version__
    except Exception:
        return None


# -- binned ECE peers -------------------------------------------------------------------


def ece_sklearn(y, p):
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, p, n_bins=BINS, strategy="uniform")
    edges = np.linspace(0.0, 1.0, BINS + 1)
    counts = np.bincount(np.searchsorted(edges[1:-1], p), minlength=BINS)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(prob_true - prob_pred)) / p.shape[0])


def ece_relplot(y, p):
    from relplot.metrics import binnedECE

    return float(binnedECE(p, y.astype(np.float64), nbins=BINS))


def ece_netcal(y, p):
    from netcal.metrics import ECE

    return float(ECE(bins=BINS).measure(p, y.astype(np.int64)))


def ece_torchmetrics(y, p):
    import torch
    from torchmetrics.functional.classification import binary_calibration_error

    return float(binary_calibration_error(torch.from_numpy(p), torch.from_numpy(y.astype(np.int64)), n_bins=BINS, norm="l1"))


ECE_PEERS = [
    ("scikit-learn calibration_curve", "sklearn", ece_sklearn,
     "right-closed bins like fastcdl; empty bins dropped"),
    ("relplot binnedECE", "relplot", ece_relplot,
     "left-closed bins [k/m, (k+1)/m), p = 1 in a bin of its own: differs only for points on edges"),
    ("netcal ECE", "netcal", ece_netcal, "clips p to [eps, 1-eps]; equal-width bins"),
    ("torchmetrics binary_calibration_error", "torchmetrics", ece_torchmetrics,
     "bucketize(right=True): p on an interior edge goes up, p = 1 to a hidden extra bin"),
]


# -- the CDL linear program ---------------------------------------------------------------


def cdl_lp(st: fc.BucketStats) -> float:
    """SPEC 2.4 for k = 2: maximise the recalibration gain over proper scores in [0, 1]."""
    from scipy.optimize import linprog

    q, n, s = st.table()
    qhat = s / n
    pts = np.unique(np.concatenate([q, qhat, [0.0, 1.0]]))
    K = pts.shape[0]
    where = {v: i for i, v in enumerate(pts)}
    c = np.zeros(2 * K)  # variables S(x, 0), S(x, 1) for each point x
    for qi, ni, si, hi in zip(q, n, s, qhat):
        a, b = where[hi], where[qi]
        c[2 * a] += ni - si
        c[2 * a + 1] += si
        c[2 * b] -= ni - si
        c[2 * b + 1] -= si
    c /= n.sum()
    i, j = np.nonzero(~np.eye(K, dtype=bool))
    A = np.zeros((i.shape[0], 2 * K))
    r = np.arange(i.shape[0])
    # properness: truthful report x beats report x' under belief x
    A[r, 2 * i] -= 1 - pts[i]
    A[r, 2 * i + 1] -= pts[i]
    A[r, 2 * j] += 1 - pts[i]
    A[r, 2 * j + 1] += pts[i]
    res = linprog(-c, A_ub=A, b_ub=np.zeros(i.shape[0]), bounds=(0, 1), method="highs")
    return -res.fun


def random_table(m, rng):
    q = np.sort(rng.choice(np.arange(1, 1000) / 1000, m, replace=False))
    n = rng.integers(1, 40, m)
    return fc.BucketStats(q, n, rng.binomial(n, q), q * n)


def machine():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        cpu = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    return cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    lines = [
        "# fastcdl next to the alternatives",
        "",
        f"Machine: {machine()}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {version('numba')}, scipy {version('scipy')}.",
        "Peers: " + ", ".join(f"{m} {version(m) or 'not installed'}" for m in ("sklearn", "relplot", "netcal", "torchmetrics")) + ".",
        "",
        f"Command: `.venv/bin/python scripts/compare_peers.py{' --quick' if args.quick else ''}` "
        f"(medians of {args.repeat} runs after a warm-up call, all in one process on the same arrays).",
        "",
        f"## Binned ECE, {BINS} equal-width bins, uniform p (no point on an interior edge)",
        "",
        "| T | implementation | median (ms) | fastcdl speed-up | max abs difference | convention |",
        "|---|---|---|---|---|---|",
    ]
    sizes = [10**4, 10**5] if args.quick else [10**4, 10**5, 10**6, 10**7]
    for T in sizes:
        p = rng.random(T)
        y = (rng.random(T) < p).astype(np.int64)
        t_fc, v_fc = median_time(lambda: fc.ece(y, p, bins=BINS), args.repeat)
        lines.append(f"| {T:.0e} | fastcdl.ece | {1e3 * t_fc:.3f} | 1 | 0 | right-closed bins, mean prediction per bin |")
        for name, mod, f, conv in ECE_PEERS:
            try:
                importlib.import_module(mod)
            except Exception:
                lines.append(f"| {T:.0e} | {name} | not installed | | | |")
                continue
            t, v = median_time(lambda: f(y, p), max(1, args.repeat if T < 10**7 else 3))
            lines.append(f"| {T:.0e} | {name} | {1e3 * t:.3f} | {t / t_fc:.1f}x | {abs(v - v_fc):.1e} | {conv} |")
        print(f"ECE T={T:.0e} done", file=sys.stderr)

    lines += [
        "",
        "## Exact CDL: fastcdl.cdl against the HiGHS linear program (SPEC 2.4)",
        "",
        "| buckets m | LP variables | HiGHS LP (ms) | fastcdl.cdl (ms) | speed-up | abs difference |",
        "|---|---|---|---|---|---|",
    ]
    for m in [10, 50, 100] if args.quick else [10, 50, 100, 200]:
        st = random_table(m, rng)
        t_fc, v_fc = median_time(lambda: fc.cdl(st), max(args.repeat, 50))
        t_lp, v_lp = median_time(lambda: cdl_lp(st), 1 if m >= 200 else args.repeat)
        n_pts = np.unique(np.concatenate([st.values, st.frequencies, [0.0, 1.0]])).shape[0]
        lines.append(f"| {m} | {2 * n_pts} | {1e3 * t_lp:.1f} | {1e3 * t_fc:.4f} | {t_lp / t_fc:.0f}x | {abs(v_lp - v_fc):.1e} |")
        print(f"LP m={m} done", file=sys.stderr)

    try:
        from fastcdl.online import simulate
    except ImportError:
        simulate = None
    lines += ["", "## Algorithm 1: sparse MsMwC oracle against the dense reference (cdl vs greedy)", ""]
    if simulate is None:
        lines.append("fastcdl.online is not available in this build.")
    else:
        lines += ["| T | m | dense rounds/s | sparse rounds/s | speed-up | same predictions |", "|---|---|---|---|---|---|"]
        for T in [10**5, 10**6] if args.quick else [10**5, 10**6, 10**7]:
            simulate("cdl", "greedy", horizon=1000, seed=0, forecaster_params={"oracle": "dense"})
            simulate("cdl", "greedy", horizon=1000, seed=0)
            sp = simulate("cdl", "greedy", horizon=T, seed=1)
            dn = simulate("cdl", "greedy", horizon=T, seed=1, forecaster_params={"oracle": "dense"})
            same = sp.stats == dn.stats
            m = int(np.ceil(np.sqrt(T) / np.log(T)))
            lines.append(f"| {T:.0e} | {m} | {dn.rounds_per_second:.3g} | {sp.rounds_per_second:.3g} | "
                         f"{sp.rounds_per_second / dn.rounds_per_second:.1f}x | {same} |")
            print(f"online T={T:.0e} done", file=sys.stderr)
    lines.append("")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text("\n".join(lines))
    tmp.replace(OUT)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
