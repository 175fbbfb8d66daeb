"""What a worst-case folder shows: worst.png and the markdown tables its README quotes.

Both are made from the folder's rows only (the figure from worst.csv's rows, the tables from
the CSV files), so tests can check that a committed README still quotes its files.
"""

from __future__ import annotations

import json

import numpy as np

from fastcdl._writing import writing_to
from fastcdl.experiments.families import FAMILIES


def worst_figure(rows, path) -> None:
    """worst.png: each forecaster's worst-case mean CDL and ECE against T (log-log), with
    the fresh seeds' t-intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, metric in zip(axes, ("cdl", "ece")):
        for f in dict.fromkeys(r["forecaster"] for r in rows):
            pts = sorted(
                (r["T"], r["mean"], r["lo"], r["hi"]) for r in rows if r["forecaster"] == f and r["metric"] == metric
            )
            T, mean, lo, hi = (np.array(v, dtype=float) for v in zip(*pts))
            ax.errorbar(
                T,
                mean,
                yerr=[mean - np.minimum(lo, mean), np.maximum(hi, mean) - mean],
                marker="o",
                ms=3,
                capsize=2,
                label=f,
            )
        if metric == "cdl" and any(r["forecaster"] == "cdl" for r in rows):
            from fastcdl.online.forecasters.cdl import expected_cdl_bound

            Ts = sorted({r["T"] for r in rows if r["forecaster"] == "cdl"})
            ax.plot(
                Ts,
                [expected_cdl_bound(T) for T in Ts],
                "k--",
                lw=1,
                label="cdl: proven bound on E[CDL] (docs/algorithm1.md)",
            )
            ax.axhline(1.0, color="0.6", lw=0.8, ls=":", label="CDL <= 1 (every forecaster)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (rounds)")
        ax.set_ylabel(f"worst-case mean {metric.upper()}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(
        "The worst adversary found for each forecaster and T: a lower bound on its true worst case "
        "(mean over fresh seeds, 95% intervals)"
    )
    with writing_to(path):
        fig.savefig(path, dpi=120)
    plt.close(fig)


# -- the tables of a worst-case folder's README ------------------------------------------------
def _fmt(v: float) -> str:
    return f"{v:.4g}"


def readme_tables(folder) -> str:
    """The markdown tables of a worst-case folder, made from its CSV files only (the folder's
    README quotes them verbatim; tests check that it still does)."""
    import csv
    from pathlib import Path

    folder = Path(folder)
    read = lambda name: list(csv.DictReader((folder / name).read_text().splitlines()))  # noqa: E731
    worst = read("worst.csv")
    cands = read("candidates.csv")
    fams = read("families.csv")
    by = {(w["forecaster"], int(w["T"]), w["metric"]): w for w in worst}
    forecasters = list(dict.fromkeys(w["forecaster"] for w in worst))
    lines = [
        "| forecaster | T | worst adversary found | parameters | CDL (fresh seeds) | ECE (fresh seeds) "
        "| CDL (deepest rung's search seeds) |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in forecasters:
        for T in sorted({int(w["T"]) for w in worst if w["forecaster"] == f}):
            c, e = by[(f, T, "cdl")], by[(f, T, "ece")]
            score = next(
                float(x["deep_mean_cdl"])
                for x in fams
                if x["forecaster"] == f and int(x["T"]) == T and x["is_winner"] == "1"
            )
            params = ", ".join(f"{k}={_fmt(v)}" for k, v in json.loads(c["adversary_params"]).items())
            lines.append(
                f"| {f} | 2^{T.bit_length() - 1} | {c['adversary']} | {params or '-'} | "
                f"{_fmt(float(c['mean']))} [{_fmt(float(c['lo']))}, {_fmt(float(c['hi']))}] | "
                f"{_fmt(float(e['mean']))} [{_fmt(float(e['lo']))}, {_fmt(float(e['hi']))}] | {_fmt(score)} |"
            )
    out = ["### Worst adversary found, per forecaster and horizon", "", *lines]
    if fams:
        out += _family_lines(fams, forecasters)
    if (folder / "validation.csv").is_file():
        out += _recall_lines(read("validation.csv"), forecasters)
    out += _probe_lines(cands, forecasters)
    if (folder / "worst_slopes.csv").is_file():
        out += _slope_lines(read("worst_slopes.csv"))
    if (folder / "forms.csv").is_file():
        out += _form_lines(read("forms.csv"))
    if (folder / "cross.csv").is_file():
        out += _cross_lines(read("cross.csv"))
    return "\n".join(out) + "\n"


def _family_lines(fams, forecasters) -> list:
    """The best of every family on the final rung, per forecaster and horizon."""
    names = [n for n in FAMILIES if any(x["family"] == n for x in fams)]
    names += sorted({x["family"] for x in fams} - set(names))
    out = [
        "",
        "### The best of every family on the final rung (mean CDL over 16 search seeds; "
        "bold: the winner; families.csv)",
        "",
        "| forecaster | T | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for f in forecasters:
        for T in sorted({int(x["T"]) for x in fams if x["forecaster"] == f}):
            cells = {x["family"]: x for x in fams if x["forecaster"] == f and int(x["T"]) == T}
            row = []
            for n in names:
                x = cells.get(n)
                v = "-" if x is None else _fmt(float(x["final_mean_cdl"]))
                row.append(f"**{v}**" if x is not None and x["is_winner"] == "1" else v)
            out.append(f"| {f} | 2^{T.bit_length() - 1} | " + " | ".join(row) + " |")
    return out


def _recall_lines(val, forecasters) -> list:
    """The search's recall against the exhaustive sweep (validation.csv)."""
    out = [
        "",
        "### Recall of the search against an exhaustive sweep on the same seeds (validation.csv)",
        "",
        "| forecaster | T | lowest recall (family) | families at recall >= 0.97 | exhaustive points |",
        "|---|---|---|---|---|",
    ]
    for f in forecasters:
        for T in sorted({int(v["T"]) for v in val if v["forecaster"] == f}):
            vs = [v for v in val if v["forecaster"] == f and int(v["T"]) == T]
            low = min(vs, key=lambda v: float(v["recall"]))
            ok = sum(float(v["recall"]) >= 0.97 for v in vs)
            out.append(
                f"| {f} | 2^{T.bit_length() - 1} | {float(low['recall']):.4f} ({low['family']}) | "
                f"{ok} of {len(vs)} | {sum(int(v['points']) for v in vs):,} |"
            )
    return out


def _probe_lines(cands, forecasters) -> list:
    """Each fixed probe adversary against every forecaster (candidates.csv)."""
    out = []
    probes = [a for a in ("contrarian", "greedy", "lookahead", "cdlahead") if any(x["adversary"] == a for x in cands)]
    search_T = sorted({int(x["T"]) for x in cands if x["stage"] == "sweep"})
    for a in probes:
        out += [
            "",
            f"### {a} against every forecaster (mean CDL over the search seeds, from candidates.csv)",
            "",
            "| forecaster | " + " | ".join(f"2^{T.bit_length() - 1}" for T in search_T) + " |",
            "|---|" + "---|" * len(search_T),
        ]
        for f in forecasters:
            cells = []
            for T in search_T:
                v = [
                    float(x["search_mean_cdl"])
                    for x in cands
                    if x["forecaster"] == f and int(x["T"]) == T and x["adversary"] == a and x["stage"] == "fixed"
                ]
                cells.append(_fmt(v[0]) if v else "-")
            out.append(f"| {f} | " + " | ".join(cells) + " |")
    return out


def _slope_lines(slopes) -> list:
    """The decay of the worst case found (worst_slopes.csv)."""
    out = [
        "",
        "### Decay of the worst case found (slope of log mean against log T)",
        "",
        "| forecaster | metric | slope | 95% interval | T fitted |",
        "|---|---|---|---|---|",
    ]
    for s in slopes:
        out.append(
            f"| {s['forecaster']} | {s['metric']} | {float(s['slope']):.3f} | "
            f"[{float(s['slope_lo']):.3f}, {float(s['slope_hi']):.3f}] | "
            f"2^{int(s['t_min_fit']).bit_length() - 1}..2^{int(s['t_max_fit']).bit_length() - 1} |"
        )
    return out


def _form_lines(forms) -> list:
    """The theory's forms fitted to the worst case found (forms.csv)."""
    out = [
        "",
        "### The forms the theory predicts, fitted to the worst case found (forms.csv)",
        "",
        "| forecaster | metric | form | c | 95% interval | residual slope | its interval |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in forms:
        out.append(
            f"| {r['forecaster']} | {r['metric']} | {r['form']} | {_fmt(float(r['c']))} | "
            f"[{_fmt(float(r['c_lo']))}, {_fmt(float(r['c_hi']))}] | {float(r['residual_slope']):.3f} | "
            f"[{float(r['residual_slope_lo']):.3f}, {float(r['residual_slope_hi']):.3f}] |"
        )
    return out


def _cross_lines(cross) -> list:
    """Every forecaster against every forecaster's worst adversary (cross.csv)."""
    out = []
    for T in sorted({int(c["T"]) for c in cross}):
        for metric in ("cdl",):
            rows = [c for c in cross if int(c["T"]) == T and c["metric"] == metric]
            fs = list(dict.fromkeys(c["forecaster"] for c in rows))
            out += [
                "",
                f"### Every forecaster against every forecaster's worst adversary, T = 2^{T.bit_length() - 1}, "
                f"mean {metric.upper()} over fresh seeds (diagonal: the adversary's own forecaster)",
                "",
                "| adversary (worst for) | " + " | ".join(fs) + " |",
                "|---|" + "---|" * len(fs),
            ]
            for w in dict.fromkeys(c["worst_for"] for c in rows):
                cells = {c["forecaster"]: c for c in rows if c["worst_for"] == w}
                adv = cells[fs[0]]["adversary"]
                lines = [
                    f"**{_fmt(float(cells[f]['mean']))}**" if f == w else _fmt(float(cells[f]["mean"])) for f in fs
                ]
                out.append(f"| {adv} ({w}) | " + " | ".join(lines) + " |")
    return out
