"""Coverage of the rate experiments' 95% intervals on synthetic power laws (docs/experiments.md).

    python scripts/slope_coverage.py [replications]

For 4, 8 and 16 seeds and the two noise models of tests/test_analysis_coverage.py: the
fraction of replications whose interval covers the true slope (jackknife-t of
fastcdl.experiments.analysis, and the percentile bootstrap it replaced) and the true mean
at each T (bootstrap-t, the percentile bootstrap, Student t).
"""

import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_analysis_coverage import B_TRUE, HORIZONS, _cells, percentile_bootstrap_slope, synthetic_rows  # noqa: E402

from fastcdl.experiments.analysis import analyze, fit_window  # noqa: E402


def main(replications=4000):
    truth = {T: 0.3 * T**B_TRUE for T in HORIZONS}
    print("| noise | seeds | slope: jackknife-t | slope: percentile bootstrap | mean: bootstrap-t | mean: percentile bootstrap | mean: Student t |")
    print("|---|---|---|---|---|---|---|")
    for het in (False, True):
        for n in (4, 8, 16):
            rng = np.random.default_rng(1000 + 10 * n + het)
            rows = synthetic_rows(n, replications, rng=rng, heteroscedastic=het)
            rates, slopes, _ = analyze(rows, ["cdl"], seed=3, n_boot=1000)
            jack = np.mean([s["slope_lo"] <= B_TRUE <= s["slope_hi"] for s in slopes])
            boot_t = np.mean([r["lo"] <= truth[r["T"]] <= r["hi"] for r in rates])
            pct, pct_mean, student = [], [], []
            t = stats.t.ppf(0.975, n - 1)
            for by_T in _cells(rows).values():
                fit_T = fit_window(by_T)
                V = np.array([[by_T[T][s] for s in range(n)] for T in fit_T])
                lo, hi = percentile_bootstrap_slope(fit_T, V, rng)
                pct.append(lo <= B_TRUE <= hi)
                for T, v in by_T.items():
                    v = np.array(list(v.values()))
                    lo, hi = np.percentile(v[rng.integers(0, n, (1000, n))].mean(axis=1), [2.5, 97.5])
                    pct_mean.append(lo <= truth[T] <= hi)
                    h = t * v.std(ddof=1) / np.sqrt(n)
                    student.append(v.mean() - h <= truth[T] <= v.mean() + h)
            noise = "CV 0.2-0.6 across T" if het else "CV 0.4"
            print(f"| {noise} | {n} | {jack:.3f} | {np.mean(pct):.3f} | {boot_t:.3f} | {np.mean(pct_mean):.3f} | {np.mean(student):.3f} |",
                  flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000)
