"""The asv history as curves: results/benchmarks/asv-history.{csv,png} from asv_bench/results/<machine>/.

    .venv/bin/python scripts/asv_history.py [--machine xeon2]

Reads every result file of the machine (one per commit asv ran), keeps the benchmarks and
parameters of :data:`CURVES`, orders the commits as main's first-parent history does, and
writes one row per (commit, curve) to asv-history.csv (the commit, its position on main, its
date, its subject, the seconds, or nothing where the commit's code lacked the benchmark or
skipped it) and a figure of the curves against the commit's position to asv-history.png (and
docs/_static/asv-history.png, which docs/asv-history.md shows).
docs/asv-history.md explains the steps. Each asv result is one timing per benchmark (the
history ran with ``--quick``): steps of less than about 1.5x on a shared machine are noise.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "benchmarks"

# (label, benchmark, parameter values in the order of its params)
CURVES = (
    ("exact CDL, m = 10^6 buckets", "metrics.CDLSuite.time_cdl", ("1000000",)),
    ("UCal, m = 10^6 buckets", "metrics.CDLSuite.time_ucal", ("1000000",)),
    ("bucket table, T = 10^7, 1000 bins", "metrics.BucketStatsSuite.time_bucket_stats", ("10000000", "1000")),
    ("exact bucket table, T = 10^7", "metrics.BucketStatsSuite.time_bucket_stats", ("10000000", "None")),
    ("Algorithm 1 (cdl), T = 10^6 vs greedy", "online.SimulateSuite.time_simulate", ("1000000", "'cdl'")),
    ("kt, T = 10^6 vs greedy", "online.SimulateSuite.time_simulate", ("1000000", "'kt'")),
)


def git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def value(result: dict, name: str, params: tuple):
    """The seconds of one benchmark at one parameter combination, or None (absent, skipped, failed)."""
    entry = result["results"].get(name)
    if entry is None:
        return None
    cols = result["result_columns"]
    values, grid = entry[cols.index("result")], entry[cols.index("params")]
    if values is None:
        return None
    # asv lays the combinations out as the product of the parameter lists, the last varying fastest
    index, stride = 0, 1
    for pos in reversed(range(len(grid))):
        if params[pos] not in grid[pos]:
            return None
        index += grid[pos].index(params[pos]) * stride
        stride *= len(grid[pos])
    v = values[index] if index < len(values) else None
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def rows(machine: str) -> list[dict]:
    order = git("log", "--first-parent", "--reverse", "--format=%H %ad %s", "--date=short", "main").splitlines()
    position = {line.split()[0]: (i, line.split()[1], line.split(" ", 2)[2]) for i, line in enumerate(order)}
    out = []
    for path in sorted((ROOT / "asv_bench" / "results" / machine).glob("*-virtualenv-*.json")):
        result = json.loads(path.read_text())
        commit = result["commit_hash"]
        if commit not in position:
            continue
        i, date, subject = position[commit]
        for label, name, params in CURVES:
            out.append(
                {
                    "commit": commit[:10],
                    "position": i,
                    "date": date,
                    "curve": label,
                    "seconds": value(result, name, params),
                    "subject": subject[:100],
                }
            )
    return sorted(out, key=lambda r: (r["curve"], r["position"]))


def write(rows_: list[dict]) -> None:
    with open(OUT / "asv-history.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, ["curve", "position", "commit", "date", "seconds", "subject"])
        w.writeheader()
        for r in rows_:
            w.writerow({**r, "seconds": "" if r["seconds"] is None else repr(r["seconds"])})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for label, _, _ in CURVES:
        pts = [(r["position"], r["seconds"]) for r in rows_ if r["curve"] == label and r["seconds"] is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", ms=3, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("commit on main (first-parent position)")
    ax.set_ylabel("seconds (one asv --quick timing)")
    ax.set_title("fastcdl's asv history on one machine")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "asv-history.png", dpi=110)
    fig.savefig(ROOT / "docs" / "_static" / "asv-history.png", dpi=110)  # the figure of docs/asv-history.md


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--machine", default="xeon2")
    a = ap.parse_args()
    write(rows(a.machine))
