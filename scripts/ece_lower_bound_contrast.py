"""The seed paper's contrast, measured against spbisect: every forecaster's ECE slope beside cdl's CDL slope.

    .venv/bin/python scripts/ece_lower_bound_contrast.py            # contrast.csv and contrast.png
    .venv/bin/python scripts/ece_lower_bound_contrast.py --dir DIR  # another run folder of the same preset

Reads the run folder's summary.csv (`fastcdl rates --preset results/ece-lower-bound/spbisect/preset.toml`)
and writes, beside it:

- contrast.csv: per environment (spbisect oblivious, spbisect steered) and forecaster, the ECE
  slope over the fitted horizons with its 95% interval (jackknife over seeds, docs/experiments.md),
  cdl's CDL slope over the same horizons in the same environment with its interval, the two
  exponents the lower bounds prove for per-round ECE (Qiao and Valiant 2021: T^(0.528 - 1);
  Dagan et al. 2024: T^(0.54389 - 1)), and whether the ECE interval lies wholly above (slower
  decay), wholly below (faster) or across the stronger bound's exponent;
- contrast.png: those intervals, one row per forecaster and one panel per environment, with
  cdl's CDL interval as a band and the two exponents as lines.

Nothing is run here: a folder's summary.csv is enough (cost: reading one CSV).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "results" / "ece-lower-bound" / "spbisect"

#: per-round ECE exponents the lower bounds prove (ECE_T = Omega(T^a), so ECE_T / T >= c T^(a - 1))
BOUNDS = {"qiao_valiant_2021": 0.528 - 1.0, "dagan_et_al_2024": 0.54389 - 1.0}

FIELDS = (
    "adversary",
    "forecaster",
    "ece_slope",
    "ece_lo",
    "ece_hi",
    "cdl_cdl_slope",
    "cdl_cdl_lo",
    "cdl_cdl_hi",
    "t_min_fit",
    "t_max_fit",
    "n_seeds",
    "bound_qiao_valiant_2021",
    "bound_dagan_et_al_2024",
    "ece_against_dagan",
)


def contrast_rows(summary_rows):
    """One row per (adversary, forecaster) with an ECE slope, beside cdl's CDL slope on the same
    adversary and horizons. ``ece_against_dagan`` is 'slower' when the whole ECE interval lies
    above Dagan et al.'s exponent (the decay the bound allows at most), 'faster' when wholly below
    it (the bound's exponent excluded: the measured decay is faster than any forecaster can keep
    against the papers' adversary), 'contains' otherwise."""
    by = {(r["adversary"], r["forecaster"], r["metric"]): r for r in summary_rows}
    out = []
    for (adv, fc, metric), r in sorted(by.items()):
        if metric != "ece":
            continue
        ref = by.get((adv, "cdl", "cdl"))
        if ref is None or (ref["t_min_fit"], ref["t_max_fit"]) != (r["t_min_fit"], r["t_max_fit"]):
            raise ValueError(f"{adv}: cdl's CDL slope is missing or fitted over other horizons than {fc}'s ECE")
        lo, hi = float(r["slope_lo"]), float(r["slope_hi"])
        bound = BOUNDS["dagan_et_al_2024"]
        verdict = "slower" if lo > bound else "faster" if hi < bound else "contains"
        out.append(
            {
                "adversary": adv,
                "forecaster": fc,
                "ece_slope": float(r["slope"]),
                "ece_lo": lo,
                "ece_hi": hi,
                "cdl_cdl_slope": float(ref["slope"]),
                "cdl_cdl_lo": float(ref["slope_lo"]),
                "cdl_cdl_hi": float(ref["slope_hi"]),
                "t_min_fit": int(r["t_min_fit"]),
                "t_max_fit": int(r["t_max_fit"]),
                "n_seeds": int(r["n_seeds"]),
                "bound_qiao_valiant_2021": BOUNDS["qiao_valiant_2021"],
                "bound_dagan_et_al_2024": bound,
                "ece_against_dagan": verdict,
            }
        )
    return out


def figure(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    advs = sorted({r["adversary"] for r in rows})
    fig, axes = plt.subplots(1, len(advs), figsize=(5.2 * len(advs), 5.6), squeeze=False)
    for ax, adv in zip(axes[0], advs):
        sub = [r for r in rows if r["adversary"] == adv]
        sub.sort(key=lambda r: r["ece_slope"])
        ys = range(len(sub))
        ref = sub[0]
        ax.axvspan(ref["cdl_cdl_lo"], ref["cdl_cdl_hi"], color="tab:green", alpha=0.18, label="cdl's CDL slope, 95%")
        ax.axvline(ref["cdl_cdl_slope"], color="tab:green", lw=1)
        ax.axvline(BOUNDS["qiao_valiant_2021"], color="tab:red", ls="--", lw=1, label="-0.472 (Qiao & Valiant)")
        ax.axvline(BOUNDS["dagan_et_al_2024"], color="tab:red", ls=":", lw=1.2, label="-0.456 (Dagan et al.)")
        ax.axvline(-0.5, color="0.5", lw=0.8, label="-1/2")
        for y, r in zip(ys, sub):
            ax.errorbar(
                r["ece_slope"],
                y,
                xerr=[[r["ece_slope"] - r["ece_lo"]], [r["ece_hi"] - r["ece_slope"]]],
                fmt="o",
                color="tab:blue",
                ms=4,
                capsize=2,
            )
        ax.set_yticks(list(ys), [r["forecaster"] for r in sub])
        ax.set_title(f"{adv}: ECE slope, T = {ref['t_min_fit']}..{ref['t_max_fit']}")
        ax.set_xlabel("decay slope of the mean per-round measure (95% interval)")
        ax.grid(axis="x", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=DEFAULT)
    args = ap.parse_args()
    with open(args.dir / "summary.csv", newline="") as f:
        rows = contrast_rows(list(csv.DictReader(f)))
    with open(args.dir / "contrast.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    figure(rows, args.dir / "contrast.png")
    print(f"{args.dir / 'contrast.csv'}: {len(rows)} rows; {args.dir / 'contrast.png'}")


if __name__ == "__main__":
    main()
