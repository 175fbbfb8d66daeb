"""Write examples/forecasts.csv: a year of rain forecasts, stated in steps of 5%.

The forecaster is overconfident (true chance pulled toward 1/2), the typical failure
of an uncalibrated model. Reproducible: `python scripts/make_example.py` (seed 20261122).
"""

import csv
from pathlib import Path

import numpy as np

rng = np.random.default_rng(20261122)
days = 3 * 365
truth = rng.beta(0.9, 1.6, size=days)  # the real chance of rain each day
stated = np.clip(np.round((0.5 + 1.35 * (truth - 0.5)) * 20) / 20, 0.0, 1.0)
rain = (rng.random(days) < truth).astype(int)

out = Path(__file__).resolve().parents[1] / "examples" / "forecasts.csv"
with out.open("w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["day", "y", "p"])
    for d, (y, p) in enumerate(zip(rain, stated)):
        w.writerow([d, y, f"{p:.2f}"])
print(f"wrote {out} ({days} rows)")
