"""Coverage of the rate experiments' 95% intervals on synthetic power laws (docs/experiments.md).

    python scripts/slope_coverage.py [replications]     # writes results/coverage/slope_coverage.{csv,md}

For 4, 8 and 16 seeds and the two noise models of tests/test_analysis_coverage.py: the
fraction of replications whose interval covers the true slope (jackknife-t of
fastcdl.experiments.analysis, and the percentile bootstrap it replaced) and the true mean
at each T (bootstrap-t, the percentile bootstrap, Student t). The table is written to
results/coverage/slope_coverage.md and, with the counts of covering intervals behind every
fraction, the command and the source it ran on, to slope_coverage.csv and slope_coverage.json;
the seeds are fixed, so a rerun gives the same files.
"""

import csv
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_analysis_coverage import B_TRUE, HORIZONS, _cells, percentile_bootstrap_slope, synthetic_rows  # noqa: E402

import benchrecord  # noqa: E402

from fastcdl.experiments.analysis import analyze, fit_window  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "results" / "coverage"
COLUMNS = (
    "slope: jackknife-t",
    "slope: percentile bootstrap",
    "mean: bootstrap-t",
    "mean: percentile bootstrap",
    "mean: Student t",
)


def main(replications=4000):
    truth = {T: 0.3 * T**B_TRUE for T in HORIZONS}
    table = ["| noise | seeds | " + " | ".join(COLUMNS) + " |", "|---|---|" + "---|" * len(COLUMNS)]
    print("\n".join(table))
    out = []
    for het in (False, True):
        for n in (4, 8, 16):
            rng = np.random.default_rng(1000 + 10 * n + het)
            rows = synthetic_rows(n, replications, rng=rng, heteroscedastic=het)
            rates, slopes, _ = analyze(rows, ["cdl"], seed=3, n_boot=1000)
            jack = [s["slope_lo"] <= B_TRUE <= s["slope_hi"] for s in slopes]
            boot_t = [r["lo"] <= truth[r["T"]] <= r["hi"] for r in rates]
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
            row = {"noise": noise, "seeds": n, "replications": replications}
            for col, hits in zip(COLUMNS, (jack, pct, boot_t, pct_mean, student)):
                row[col] = round(float(np.mean(hits)), 3)
                row[col + " (covered)"] = int(np.sum(hits))
                row[col + " (intervals)"] = len(hits)
            out.append(row)
            table.append(f"| {noise} | {n} | " + " | ".join(f"{row[c]:.3f}" for c in COLUMNS) + " |")
            print(table[-1], flush=True)
    write(out, table, replications)


def write(rows, table, replications):
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "slope_coverage.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    rec = benchrecord.Recorder(
        "slope_coverage", ["scripts/slope_coverage.py", str(replications)], replications=replications
    )
    rec.value("rows", rows)
    rec.save(OUT / "slope_coverage.json")
    (OUT / "slope_coverage.md").write_text(
        "\n".join(
            [
                "# Coverage of the 95% intervals on synthetic power laws",
                "",
                f"Command: `.venv/bin/python scripts/slope_coverage.py {replications}` ({replications} replications per "
                "row; fixed seeds, so a rerun gives these files). The model and the columns are described in "
                "docs/experiments.md (Coverage). Each fraction is covered / intervals of `slope_coverage.csv` (a slope "
                "interval per replication; a mean interval per replication and T); the source it ran on is in "
                "`slope_coverage.json`.",
                "",
                *table,
                "",
            ]
        )
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000)
