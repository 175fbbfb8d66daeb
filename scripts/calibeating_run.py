"""results/calibeating: the calibeating game measured (docs/calibeating.md).

    .venv/bin/python scripts/calibeating_run.py [--seeds 8] [--t-max 20]

Every calibeater of the registry (the forecasters that declare needs_external: calibeat, and ops
in its three variants) and two forecasters blind to b (foster, kt) play the ``informed``
environment (its defaults: an overconfident, upward-biased model of each round's chance) at T =
2^12, 2^16, 2^t-max, seeds 0..seeds-1. Per run: the forecaster's Brier score and log loss, its
ECE, CDL and smCE, and the external forecast's Brier score, refinement and calibration part
(RunResult.external). Writes results/calibeating/runs.csv (one row per run, appended as each
finishes; a run already in the file is not run again) and summary.csv (means over seeds with a
normal 95% interval), then README.md's table from summary.csv.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "results" / "calibeating"
PLAYERS = (
    ("calibeat", {}),
    ("ops", {"variant": "ops"}),
    ("ops", {"variant": "tops"}),
    ("ops", {"variant": "hops"}),
    ("foster", {}),
    ("kt", {}),
)
COLUMNS = (
    "forecaster",
    "T",
    "seed",
    "brier",
    "log_loss",
    "ece",
    "cdl",
    "smce",
    "b_brier",
    "b_refinement",
    "b_calibration",
)
MEASURES = COLUMNS[3:]


def label(name, params):
    return params.get("variant", name)


def run(seeds: int, t_max: int) -> None:
    from fastcdl.online import simulate

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "runs.csv"
    done = set()
    if path.exists():
        with open(path, newline="") as fh:
            done = {(r["forecaster"], int(r["T"]), int(r["seed"])) for r in csv.DictReader(fh)}
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        if new:
            w.writeheader()
        for T in (2**12, 2**16, 2**t_max):
            for name, params in PLAYERS:
                for seed in range(seeds):
                    if (label(name, params), T, seed) in done:
                        continue
                    res = simulate(name, "informed", horizon=T, seed=seed, forecaster_params=params)
                    ext = res.external
                    w.writerow(
                        {
                            "forecaster": label(name, params),
                            "T": T,
                            "seed": seed,
                            "brier": repr(res.brier),
                            "log_loss": repr(res.log_loss),
                            "ece": repr(res.ece),
                            "cdl": repr(res.cdl),
                            "smce": repr(res.smce),
                            "b_brier": repr(ext.brier) if ext else "",
                            "b_refinement": repr(ext.refinement) if ext else "",
                            "b_calibration": repr(ext.calibration) if ext else "",
                        }
                    )
                    fh.flush()


def summarize() -> list[dict]:
    with open(OUT / "runs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    groups = {}
    for r in rows:
        groups.setdefault((r["forecaster"], int(r["T"])), []).append(r)
    out = []
    for (f, T), rs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        row = {"forecaster": f, "T": T, "seeds": len(rs)}
        for m in MEASURES:
            vals = [float(r[m]) for r in rs if r[m] != ""]
            if not vals:
                row[m] = row[m + "_half"] = ""
                continue
            if not all(math.isfinite(v) for v in vals):  # a log loss of inf (a certain and wrong round)
                row[m], row[m + "_half"] = math.inf, ""
                continue
            mean = statistics.fmean(vals)
            half = 1.96 * statistics.stdev(vals) / math.sqrt(len(vals)) if len(vals) > 1 else ""
            row[m], row[m + "_half"] = mean, half
        out.append(row)
    cols = ["forecaster", "T", "seeds"] + [c for m in MEASURES for c in (m, m + "_half")]
    with open(OUT / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, cols)
        w.writeheader()
        for r in out:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    return out


def table(rows, T) -> list[str]:
    def cell(r, m, fmt="{:.5f}"):
        v = r[m]
        if v == "":
            return "—"
        if math.isinf(v):
            return "inf"
        return fmt.format(v) + (f" ± {r[m + '_half']:.5f}" if r[m + "_half"] != "" else "")

    lines = [
        f"At T = 2^{int(math.log2(T))} ({rows[0]['seeds']} seeds; mean ± 1.96 standard errors):",
        "",
        "| forecaster | Brier | log loss | ECE | CDL | Brier(b) | REF(b) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['forecaster']}` | {cell(r, 'brier')} | {cell(r, 'log_loss')} | {cell(r, 'ece')} | "
            f"{cell(r, 'cdl')} | {cell(r, 'b_brier')} | {cell(r, 'b_refinement')} |"
        )
    return lines


def readme(rows) -> None:
    Ts = sorted({r["T"] for r in rows})
    head = (OUT / "README.md").read_text().split("<!-- table -->")[0] if (OUT / "README.md").exists() else ""
    body = []
    for T in Ts:
        body += table([r for r in rows if r["T"] == T], T) + [""]
    (OUT / "README.md").write_text(head + "<!-- table -->\n" + "\n".join(body))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--t-max", type=int, default=20)
    a = ap.parse_args()
    run(a.seeds, a.t_max)
    readme(summarize())
