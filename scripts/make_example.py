"""Write the example data in examples/, so every command of the README runs without downloads.

- examples/forecasts.csv: a year of rain forecasts (three years of days), stated in steps
  of 5%. The forecaster is overconfident (true chance pulled toward 1/2), the typical
  failure of an uncalibrated model.
- examples/forecasts.parquet and examples/forecasts.npz: the same rows (columns day, y,
  p), read back from the CSV so that all three files hold identical numbers.
- examples/multiclass.csv: 1000 rounds of a 3-class forecaster (columns y, p0, p1, p2)
  stating one of 8 distributions; like the rain forecaster, it is overconfident.

Reproducible: `python scripts/make_example.py` (seeds 20261122 and 20261123); the Parquet
file needs pyarrow (pyarrow is a dependency of fastcdl; pip install pyarrow).
"""

import csv
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "examples"


def write_forecasts_csv(path):
    rng = np.random.default_rng(20261122)
    days = 3 * 365
    truth = rng.beta(0.9, 1.6, size=days)  # the real chance of rain each day
    stated = np.clip(np.round((0.5 + 1.35 * (truth - 0.5)) * 20) / 20, 0.0, 1.0)
    rain = (rng.random(days) < truth).astype(int)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["day", "y", "p"])
        for d, (y, p) in enumerate(zip(rain, stated)):
            w.writerow([d, y, f"{p:.2f}"])


def write_binary_copies(csv_path, parquet_path, npz_path):
    with csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    # the float of each CSV cell, so the three files give the same bucket table
    cols = {
        "day": np.array([int(r["day"]) for r in rows], dtype=np.int64),
        "y": np.array([int(r["y"]) for r in rows], dtype=np.int8),
        "p": np.array([float(r["p"]) for r in rows], dtype=np.float64),
    }
    np.savez_compressed(npz_path, **cols)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(cols), parquet_path)


def write_multiclass_csv(path, rounds=1000):
    rng = np.random.default_rng(20261123)
    stated = np.array(
        [
            [0.80, 0.10, 0.10],
            [0.60, 0.30, 0.10],
            [0.50, 0.25, 0.25],
            [0.40, 0.40, 0.20],
            [0.20, 0.60, 0.20],
            [0.10, 0.80, 0.10],
            [0.20, 0.20, 0.60],
            [0.10, 0.10, 0.80],
        ]
    )
    which = rng.integers(0, len(stated), size=rounds)
    truth = 0.6 * stated[which] + 0.4 / 3  # overconfident: the truth is closer to uniform
    y = (rng.random(rounds)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["y", "p0", "p1", "p2"])
        for yt, row in zip(y, stated[which]):
            w.writerow([yt, *(f"{v:.2f}" for v in row)])


def main():
    OUT.mkdir(exist_ok=True)
    csv_path = OUT / "forecasts.csv"
    write_forecasts_csv(csv_path)
    write_binary_copies(csv_path, OUT / "forecasts.parquet", OUT / "forecasts.npz")
    write_multiclass_csv(OUT / "multiclass.csv")
    for name in ("forecasts.csv", "forecasts.parquet", "forecasts.npz", "multiclass.csv"):
        print(f"wrote {OUT / name} ({(OUT / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
