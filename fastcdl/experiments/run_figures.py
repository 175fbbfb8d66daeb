"""Figures of a run folder: rates against T per forecaster and adversary, and the tables of
replayed trials (plot_rates, plot_run; public in fastcdl.plot).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections import defaultdict
from pathlib import Path

import numpy as np

from fastcdl._display.decision_loss import DecisionLossDisplay
from fastcdl._display.figures import save_all
from fastcdl._display.reliability import ReliabilityDisplay
from fastcdl.io import InputError
from fastcdl.measures import MEASURES
from fastcdl.exact import cdl, sample_size_check_off


def _metric_names() -> dict:
    """{metric: label} of the trial metrics registry (fastcdl.trial_measures), in its order."""
    from fastcdl.trial_measures import METRICS

    return {k: m.label for k, m in METRICS.items()}


# largest replay horizon: a trial of 2^20 rounds re-simulates in about a second
_REPLAY_T_MAX = 2**20


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "x"


def _wrap(label: str, width: int = 56) -> str:
    """A legend label or short title in lines of at most ``width`` characters: a long
    forecaster or adversary label must not push the axes aside."""
    import textwrap

    return "\n".join(textwrap.wrap(label, width)) or label


def _horizon_text(T: int) -> str:
    k = int(T).bit_length() - 1
    return f"$2^{{{k}}}$" if T == 1 << k else str(T)


def _decimal_log_ticks(axis) -> None:
    """Label a log axis in decimals (0.02, 0.05, 0.1) rather than 2 x 10^-2: easier to read off
    a metric's value. Minor ticks at 2 and 5 get labels only where the axis spans at most three
    decades, so labels never crowd."""
    from matplotlib.ticker import FuncFormatter

    def text(v):
        if v >= 1e-3:
            return f"{v:g}"
        mant, expo = f"{v:.0e}".split("e")
        power = f"10^{{{int(expo)}}}"
        return f"${power}$" if mant == "1" else f"${mant} \\times {power}$"

    lo, hi = axis.get_view_interval()
    few = math.log10(hi / lo) <= 3
    axis.set_major_formatter(FuncFormatter(lambda v, _: text(v) if v > 0 else ""))

    def minor(v, _):
        mant = v / 10 ** math.floor(math.log10(v) + 1e-9)
        return text(v) if few and round(mant) in (2, 5) and abs(mant - round(mant)) < 1e-6 else ""

    axis.set_minor_formatter(FuncFormatter(minor))


def _read_run(run_dir: Path):
    """(rows of the latest code version, master seed) of a run folder; InputError when it is not one."""
    from fastcdl.experiments.store import TrialStore

    db = run_dir / "trials.sqlite"
    if not db.is_file():
        raise InputError(f"{run_dir}: not a run folder (no trials.sqlite in it)")
    with TrialStore(db, readonly=True) as store:  # a read-only folder, or one a run is writing
        rows = store.rows()
    if not rows:
        raise InputError(f"{db}: holds no finished trials")

    # A run resumed after an algorithm's version was bumped holds its trials once per
    # version; per forecaster x adversary, use the version finished last (rows stored before
    # versions were declared, and never verified, count under their code version).
    def version(r):
        return r["algorithm_version"] or f"code {r['code_version']}"

    finished = defaultdict(str)
    for r in rows:
        k = (r["forecaster_label"], r["adversary_label"], version(r))
        finished[k] = max(finished[k], r["finished_at"] or "")
    latest = {}
    for (f, a, v), when in finished.items():
        if (f, a) not in latest or when > finished[(f, a, latest[(f, a)])]:
            latest[(f, a)] = v
    rows = [r for r in rows if version(r) == latest[(r["forecaster_label"], r["adversary_label"])]]
    seed = 0
    preset = run_dir / "preset.toml"
    if preset.is_file():
        # the runner analyses with the preset's master seed: the same seed gives the same
        # bootstrap intervals as the run's summary.csv
        seed = int(tomllib.loads(preset.read_text()).get("master_seed", 0))
    return rows, seed


def _params_text(params_json: str) -> str:
    params = json.loads(params_json)
    return ", ".join(f"{k} = {v}" for k, v in sorted(params.items()))


def _rate_figures(rows, seed, shown=("cdl", "ece")):
    """[(file name, Figure)]: one log-log rate plot per adversary and the CDL/ECE ratio plot."""
    from matplotlib.figure import Figure

    from fastcdl.experiments.analysis import analyze

    metrics = tuple(m for m in _metric_names() if any(r.get(m) is not None for r in rows))
    rates, slopes, ratios = analyze(rows, metrics, seed=seed)
    shown = [m for m in shown if m in metrics]
    forecasters = sorted({r["forecaster_label"] for r in rows})
    adversaries = sorted({r["adversary_label"] for r in rows})
    colour = {f: f"C{i % 10}" for i, f in enumerate(forecasters)}
    adv_params = {r["adversary_label"]: _params_text(r["adversary_params"]) for r in rows}
    n_seeds = max(r["seed_index"] for r in rows) + 1
    series = defaultdict(list)
    for r in rates:
        series[(r["forecaster"], r["adversary"], r["metric"])].append(r)
    slope_of = {(s["forecaster"], s["adversary"], s["metric"]): s for s in slopes}

    out = []
    for a in adversaries:
        fig = Figure(figsize=(10.5, 5.6), layout="constrained")
        ax = fig.add_subplot()
        first_means = []
        t_lo, t_hi = math.inf, 0
        for f in forecasters:
            for m in shown:
                pts = series.get((f, a, m))
                if not pts:
                    continue
                T = np.array([p["T"] for p in pts], dtype=float)
                mean = np.array([p["mean"] for p in pts])
                lo = np.array([p["lo"] for p in pts])
                hi = np.array([p["hi"] for p in pts])
                s = slope_of.get((f, a, m))
                fit = "" if s is None else f": slope {s['slope']:.2f} [{s['slope_lo']:.2f}, {s['slope_hi']:.2f}]"
                ax.plot(
                    T,
                    mean,
                    color=colour[f],
                    linestyle=MEASURES[m].line_style,  # each measure's entry says how it is drawn
                    marker=MEASURES[m].marker,
                    markersize=4,
                    linewidth=1.4,
                    label=_wrap(f"{f}, {_metric_names()[m]}{fit}"),
                )
                ax.fill_between(T, lo, hi, color=colour[f], alpha=0.15, linewidth=0)
                if mean[0] > 0:
                    first_means.append(mean[0])
                t_lo, t_hi = min(t_lo, T[0]), max(t_hi, T[-1])
        if t_hi == 0:
            continue
        _reference_slopes(ax, first_means, t_lo, t_hi)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlim(t_lo / 1.3, t_hi * 1.6)
        _decimal_log_ticks(ax.yaxis)
        ax.set_xlabel("horizon T (rounds)")
        ax.set_ylabel("metric value (mean over seeds)")
        params = adv_params.get(a, "")
        ax.set_title(
            f"Calibration error vs horizon against the adversary '{a}'"
            + (f" ({params})" if params else "")
            + f"\nmean over {n_seeds} seeds, band: bootstrap-t 95% interval; slope: least squares on the upper half of T [jackknife-t 95%]",
            fontsize="medium",
            wrap=True,  # long labels wrap within the figure, never clipped
        )
        ax.grid(True, which="major", color="0.9")
        ax.grid(True, which="minor", axis="y", color="0.96")
        # outside the axes: rate lines cross the whole plot, any corner would hide data
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
            frameon=False,
            title="forecaster, metric: fitted slope [95% interval]",
            title_fontsize="small",
            alignment="left",
        )
        out.append((f"rates_{_slug(a)}.png", fig))

    if ratios:
        out.append(("cdl_over_ece.png", _ratio_figure(ratios, forecasters, adversaries, colour)))
    return out


def _reference_slopes(ax, first_means, t_lo, t_hi):
    """Lines T^-1/2 and T^-1/3 from the geometric mean of the series' first points."""
    T_ref = np.array([t_lo, t_hi])
    if not first_means:
        return
    # reference slopes through the geometric mean of the (positive) series at the smallest T
    refs = ((-0.5, r"$\propto T^{-1/2}$", (0, (6, 3))), (-1 / 3, r"$\propto T^{-1/3}$", (0, (2, 2))))
    for expo, text, ls in refs:
        y = np.exp(np.mean(np.log(first_means))) * (T_ref / t_lo) ** expo
        ax.plot(T_ref, y, color="0.55", linestyle=ls, linewidth=1.1, label=f"reference {text}")
        ax.annotate(
            text,
            (T_ref[-1], y[-1]),
            xytext=(4, 0),
            textcoords="offset points",
            color="0.4",
            fontsize="small",
            va="center",
        )


def _ratio_figure(ratios, forecasters, adversaries, colour):
    """The CDL / ECE ratio against T, one panel per adversary, with the bound CDL <= 2 ECE."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.6 * len(adversaries) + 2.4, 4.2), layout="constrained")
    axes = fig.subplots(1, len(adversaries), sharey=True, squeeze=False)[0]
    by = defaultdict(list)
    for r in ratios:
        by[(r["forecaster"], r["adversary"])].append(r)
    for ax, a in zip(axes, adversaries):
        for f in forecasters:
            pts = by.get((f, a))
            if pts:
                ax.plot(
                    [p["T"] for p in pts],
                    [p["cdl_over_ece"] for p in pts],
                    color=colour[f],
                    marker="o",
                    markersize=4,
                    linewidth=1.4,
                    label=_wrap(f),
                )
        ax.axhline(2.0, color="0.55", linestyle="--", linewidth=1.0, label="bound CDL ≤ 2 ECE")
        ax.set_xscale("log", base=2)
        ax.set_title(_wrap(f"adversary '{a}'", 36), fontsize="medium")
        ax.set_xlabel("horizon T (rounds)")
        ax.grid(True, color="0.9")
    axes[0].set_ylabel("CDL / ECE (ratio of means over seeds)")
    axes[0].set_ylim(bottom=0)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(
        handles,
        labels,
        loc="outside right upper",
        fontsize="small",
        title="forecaster",
        title_fontsize="small",
        frameon=False,
    )
    fig.suptitle("CDL / ECE vs horizon", fontsize="medium")
    return fig


def _table_figures(rows):
    """[(file name, Figure)]: reliability diagram and decision-loss curve of one trial of each
    "cdl" forecaster (Algorithm 1) and each plug-in forecaster (a user's own, named
    "module:ATTRIBUTE") per adversary (seed index 0, the largest T <= 2^20 whose bucket table
    is stored), drawn from the table stored with the trial (nothing is simulated again);
    raises ValueError if the table's CDL differs from the CDL stored beside it. The other
    built-in forecasters are baselines, shown in the rate plots."""
    from fastcdl.experiments.store import unpack_table

    pick = {}
    for r in rows:
        if (
            (r["forecaster"] == "cdl" or ":" in r["forecaster"])
            and r["seed_index"] == 0
            and r["T"] <= _REPLAY_T_MAX
            and r.get("bucket_table") is not None
        ):
            k = (r["forecaster_label"], r["adversary_label"])
            if k not in pick or r["T"] > pick[k]["T"]:
                pick[k] = r
    out = []
    for (f, a), row in sorted(pick.items()):
        st = unpack_table(row["bucket_table"])
        with sample_size_check_off():  # an online sequence's own CDL, whatever its bucket sizes
            out.extend(_table_pair(st, row, f, a))
    return out


def _table_pair(st, row, f, a):
    """The two figures of one stored trial's table (see _table_figures)."""
    got = cdl(st)
    if got != row["cdl"]:
        raise ValueError(
            f"trial {f} vs {a}, T = {row['T']}, seed {row['seed']}: the stored table's CDL {float(got)!r} "
            f"differs from the stored CDL {float(row['cdl'])!r}: the run folder is damaged"
        )
    name = f"forecaster '{f}' vs adversary '{a}', T = {_horizon_text(row['T'])}, seed index 0"
    stem = f"{_slug(f)}_{_slug(a)}_T{row['T']}"
    return [
        (f"reliability_{stem}.png", ReliabilityDisplay.from_stats(st, name=name).figure_),
        (f"decision_loss_{stem}.png", DecisionLossDisplay.from_stats(st, name=name).figure_),
    ]


def figure_folder(out_dir, default: Path) -> Path:
    out = Path(out_dir) if out_dir is not None else default
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    return out


def plot_rates(run_dir, out_dir=None) -> list[Path]:
    """Rate plots of a run folder (docs/experiments.md): for each adversary, the mean CDL and ECE over
    seeds (or the first two metrics of a preset that analyses other ones) against T on log-log axes with bootstrap-t 95% bands, each series' fitted slope in
    the legend and reference lines T^-1/2 and T^-1/3 (``rates_<adversary>.png``); and the
    CDL/ECE ratio against T (``cdl_over_ece.png``). Analysis as in the run's summary.csv.

    Parameters
    ----------
    run_dir : str or Path
        A run folder of ``fastcdl rates`` (trials.sqlite, summary.json).
    out_dir : str or Path, optional
        Where the files go (default: run_dir), all or none.

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        For a folder that is not a run folder, or a store that cannot be read.

    Examples
    --------
    >>> plot_rates("results/quick")  # doctest: +SKIP
    [PosixPath('results/quick/rates_bernoulli.png'), ..., PosixPath('results/quick/cdl_over_ece.png')]
    """
    run_dir = Path(run_dir)
    rows, seed = _read_run(run_dir)
    out = figure_folder(out_dir, run_dir)
    return save_all(_rate_figures(rows, seed, _shown(run_dir)), out)


def _shown(run_dir) -> tuple:
    """The two metrics a rate plot shows: CDL and ECE, unless the run's preset analyses other
    metrics and not both of those (then its first two, such as pseudo_klcal and klcal)."""
    import tomllib

    path = Path(run_dir) / "preset.toml"
    metrics = tomllib.loads(path.read_text()).get("metrics", []) if path.exists() else []
    if not metrics or {"cdl", "ece"} <= set(metrics):
        return ("cdl", "ece")
    return tuple(metrics[:2])


def plot_run(run_dir, out_dir=None) -> list[Path]:
    """Every figure of a run folder: :func:`plot_rates`, and for each "cdl" or plug-in forecaster
    and adversary a reliability diagram and a decision-loss curve of the trial with seed index
    0 and the largest T <= 2^20, re-simulated exactly from its stored row (a ValueError if
    its CDL differs from the stored value). All files or none are written.

    Parameters
    ----------
    run_dir : str or Path
        A run folder of ``fastcdl rates``.
    out_dir : str or Path, optional
        Where the files go (default: run_dir).

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        For a folder that is not a run folder, or a re-simulated trial whose CDL differs
        from its stored value.

    Examples
    --------
    >>> plot_run("results/quick", "figures")  # doctest: +SKIP
    [PosixPath('figures/rates_bernoulli.png'), ...]
    """
    run_dir = Path(run_dir)
    rows, seed = _read_run(run_dir)
    out = figure_folder(out_dir, run_dir)
    figures = _rate_figures(rows, seed, _shown(run_dir)) + _table_figures(rows)
    return save_all(figures, out)
