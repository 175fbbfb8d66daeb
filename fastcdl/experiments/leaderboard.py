"""The leaderboard: every forecaster of a run folder against every environment, on every trial measure.

A leaderboard folder (results/leaderboard) is a rate experiment's run folder (the
``leaderboard`` preset: every registered forecaster against each searched forecaster's worst
adversary, the non-stationary environments, contrarian, lookahead and a fair coin). From its
trial store :func:`build` writes, for every trial measure of :mod:`fastcdl.trial_measures`:

- ``table.csv``: each forecaster in each environment at the largest horizon T*: the mean over
  seeds with its bootstrap-t 95% interval, and the decay slope with its jackknife-t interval
  (:func:`fastcdl.experiments.analyze`);
- ``ranks.csv``: each forecaster's score, its worst environment's mean at T* (the largest mean of
  a lower-is-better measure), that environment's slope, and its rank among the forecasters
  that played every ranked environment;
- ``theory.csv``: for the forecasters a paper gives a rate for (:data:`PAPER_RATES`), the
  measured slope on that paper's measure in the forecaster's slowest-decaying environment next
  to the slope of the paper's rate over the same horizons;
- ``rates_<measure>.png``: a grid of panels, one per environment, of every forecaster's mean
  against T; and ``README.md``, the page, rewritten around its hand-written notes;
- ``submissions.json``: a record per forecaster, claimed rates against measured slopes
  (:mod:`fastcdl.experiments.submissions`).

A mean may be ``inf`` (KL-calibration of a forecaster that stated 0 or 1 and saw the other
outcome: the convention of docs/pseudo.md); its slope has no value and its CSV cells are
empty, as is every cell without a value: the files never hold the text "nan".

:func:`add` plays a user's plug-in forecaster on the folder's grid (the adversaries, horizons and
seeds of its stored trials), reusing every stored trial, and :func:`ranks` says where it
ranks. Measures and forecasters are read from their registries and the store: a new measure or
forecaster needs no change here.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from fastcdl._validate import ValidationError
from fastcdl.experiments.paper_rates import PAPER_RATES, PaperRate

__all__ = ["PAPER_RATES", "PaperRate", "add", "build", "grid_of", "load_rows", "ranks", "record_submission"]


TABLE_COLUMNS = (
    "measure",
    "forecaster",
    "environment",
    "T",
    "mean",
    "lo",
    "hi",
    "n_seeds",
    "slope",
    "slope_lo",
    "slope_hi",
    "t_min_fit",
    "t_max_fit",
)
RANK_COLUMNS = (
    "measure",
    "forecaster",
    "rank",
    "n_ranked",
    "worst_environment",
    "T",
    "mean",
    "lo",
    "hi",
    "slope",
    "slope_lo",
    "slope_hi",
    "environments_played",
    "environments_ranked",
    "ranked_environments",
)
THEORY_COLUMNS = (
    "forecaster",
    "measure",
    "recorded",
    "paper_rate",
    "paper_slope",
    "slope",
    "slope_lo",
    "slope_hi",
    "environment",
    "t_min_fit",
    "t_max_fit",
    "verdict",
)
NOTES_START, NOTES_END = "<!-- notes: kept when the page is rebuilt -->", "<!-- /notes -->"


def _store(folder: Path) -> Path:
    from fastcdl.experiments.packed import unpack

    folder = Path(folder)
    store = unpack(folder)  # a committed folder keeps its store as trials.sqlite.xz
    if not store.exists():
        raise ValidationError(
            "folder",
            "holds no trial store",
            value=str(folder),
            message=f"{folder}: no trials.sqlite (or trials.sqlite.xz); run the grid first: "
            f"fastcdl leaderboard --run --dir {folder}",
        )
    return store


def load_rows(folder) -> list[dict]:
    """Every stored trial of a leaderboard folder (unpacking trials.sqlite.xz if needed).

    Parameters
    ----------
    folder : str or Path
        The run folder.

    Returns
    -------
    list of dict
        The store's rows (:meth:`fastcdl.experiments.TrialStore.rows`) of the environments in
        the folder's environments.csv, one row per environment a trial stands for (a worst
        adversary found that is one of the preset's stands for two), labelled as it says.
        Trials of environments it no longer names (the worst adversaries of an earlier
        worst.csv, replaced when the grid was run again) stay in the store, where a later
        grid may reuse them, and are left out here.

    Raises
    ------
    ValidationError
        (a ValueError) when the folder holds no store.

    Examples
    --------
    >>> load_rows("/nonexistent")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ValidationError: /nonexistent: no trials.sqlite (or trials.sqlite.xz); run the grid first: ...
    """
    from fastcdl.experiments.store import TrialStore

    with TrialStore(_store(folder), readonly=True) as store:
        rows = store.rows()
    envs = Path(folder) / "environments.csv"
    if not envs.exists():
        return rows
    # one stored trial may stand for several environments (a worst adversary found that is one of
    # the preset's): a row per environment, labelled as environments.csv says
    labels = defaultdict(list)
    with open(envs, newline="") as fh:
        for e in csv.DictReader(fh):
            labels[(e["adversary"], e["adversary_params"], int(e["T"]))].append(e["label"])
    out = []
    for r in rows:
        for label in labels.get((r["adversary"], r["adversary_params"], int(r["T"])), ()):
            out.append({**r, "adversary_label": label})
    return out


def _measures(rows) -> list:
    """The trial measures the rows record, in the registry's order."""
    from fastcdl.trial_measures import METRICS

    return [k for k in METRICS if any(r.get(k) is not None for r in rows)]


def _refused(forecaster, adversary) -> bool:
    """Whether the engine refuses (forecaster, its params JSON) against (adversary, its params JSON)."""
    from fastcdl.experiments.presets import Component
    from fastcdl.experiments.runner import refusal

    (f, fp), (a, ap) = forecaster, adversary
    return (
        refusal(
            Component(f, tuple(sorted(json.loads(fp).items()))), Component(a, tuple(sorted(json.loads(ap).items())))
        )
        is not None
    )


def _from_tables(rows, measures) -> list:
    """The measures of :data:`PAPER_RATES` that the trials do not record but a stored bucket table
    gives (smCE, a function of the table): computed into the rows of their forecaster, in place.
    Returns their keys. Cost: one evaluation per stored table of those forecasters."""
    from fastcdl.experiments.store import unpack_table
    from fastcdl.measures import MEASURES

    wanted = defaultdict(set)
    for f, paper in PAPER_RATES.items():
        if paper.measure not in measures and paper.measure in MEASURES:
            wanted[f].add(paper.measure)
    done = []
    for r in rows:
        keys = wanted.get(r["forecaster_label"])
        if not keys or r.get("bucket_table") is None:
            continue
        st = unpack_table(r["bucket_table"])
        for k in keys:
            if MEASURES[k].applies(st):
                r[k] = MEASURES[k](st)
                done.append(k)
    return sorted(set(done))


def _finished(rows) -> list[dict]:
    """The rows of the finished cells: (forecaster, environment, T) with every seed of the grid (a
    run in progress has cells with fewer, which would enter the means and slopes unevenly)."""
    count = defaultdict(int)
    for r in rows:
        count[(r["forecaster_label"], r["adversary_label"], r["T"])] += 1
    full = max(count.values())
    return [r for r in rows if count[(r["forecaster_label"], r["adversary_label"], r["T"])] == full]


def _lower_is_better(key) -> bool:
    from fastcdl.measures import MEASURES

    return MEASURES[key].lower_is_better if key in MEASURES else True


def _environment_order(envs):
    """The preset's environments first (as they sort), then the worst adversaries found."""
    return sorted(envs, key=lambda e: (e.startswith("worst("), e))


def _tables(rows, *, seed):
    """(measures, T*, table rows, rank rows, theory rows, rates, slopes) of the stored trials."""
    from fastcdl.experiments.analysis import analyze

    measures = _measures(rows)
    rows = _finished(rows)
    derived = _from_tables(rows, measures)
    rates, slopes, _ = analyze(rows, measures + derived, seed=seed)
    full = max(r["n_seeds"] for r in rates)  # the seeds of a finished cell
    forecasters = list(dict.fromkeys(r["forecaster_label"] for r in rows))
    played = defaultdict(set)  # forecaster -> environments it has any trial in
    for r in rows:
        played[r["forecaster_label"]].add(r["adversary_label"])
    envs = _environment_order({e for p in played.values() for e in p})
    seeds_at = {(r["metric"], r["forecaster"], r["adversary"], r["T"]): r["n_seeds"] for r in rates}

    adversary_at = {(r["adversary_label"], r["T"]): (r["adversary"], r["adversary_params"]) for r in rows}
    forecaster_of = {r["forecaster_label"]: (r["forecaster"], r["forecaster_params"]) for r in rows}

    def finished(m, T):
        """The environments played at T that every forecaster has finished at T on every seed,
        or is refused (a worst adversary found may be stochastic at one T and not at another)."""
        return [
            e
            for e in envs
            if (e, T) in adversary_at
            and all(
                seeds_at.get((m, f, e, T)) == full or _refused(forecaster_of[f], adversary_at[(e, T)])
                for f in forecasters
            )
        ]

    # T*: the largest horizon at which some environment is finished (a run in progress has one)
    T_star = max((T for T in {r["T"] for r in rows} if finished(measures[0], T)), default=max(r["T"] for r in rows))
    at = {(r["metric"], r["forecaster"], r["adversary"]): r for r in rates if r["T"] == T_star}
    slope = {(s["metric"], s["forecaster"], s["adversary"]): s for s in slopes}
    table, ranked_rows, theory = [], [], []
    nan = float("nan")
    for m in measures:
        ranked_envs = finished(m, T_star)
        for f in forecasters:
            for e in envs:
                if e not in played[f]:
                    continue
                r, s = at.get((m, f, e), {}), slope.get((m, f, e), {})
                table.append(
                    dict(
                        measure=m,
                        forecaster=f,
                        environment=e,
                        T=T_star if r else "",
                        mean=r.get("mean", nan),
                        lo=r.get("lo", nan),
                        hi=r.get("hi", nan),
                        n_seeds=r.get("n_seeds", 0),
                        slope=s.get("slope", nan),
                        slope_lo=s.get("slope_lo", nan),
                        slope_hi=s.get("slope_hi", nan),
                        t_min_fit=s.get("t_min_fit", ""),
                        t_max_fit=s.get("t_max_fit", ""),
                    )
                )
        sign = 1.0 if _lower_is_better(m) else -1.0
        scores = {}
        for f in forecasters:
            # +inf (KL-calibration after a stated 0 or 1 met a contrary outcome) is a score, the worst one
            mine = [e for e in ranked_envs if (m, f, e) in at and not np.isnan(at[(m, f, e)]["mean"])]
            if not mine:
                continue
            worst = max(mine, key=lambda e: sign * at[(m, f, e)]["mean"])
            scores[f] = (worst, len(mine), len(mine) == len(ranked_envs))
        complete = [f for f, (_, _, c) in scores.items() if c]
        for f, (worst, n_played, c) in scores.items():
            v = sign * at[(m, f, worst)]["mean"]
            rank = 1 + sum(sign * at[(m, g, scores[g][0])]["mean"] < v for g in complete) if c else ""
            r, s = at[(m, f, worst)], slope.get((m, f, worst), {})
            ranked_rows.append(
                dict(
                    measure=m,
                    forecaster=f,
                    rank=rank,
                    n_ranked=len(complete),
                    worst_environment=worst,
                    T=T_star,
                    mean=r["mean"],
                    lo=r["lo"],
                    hi=r["hi"],
                    slope=s.get("slope", nan),
                    slope_lo=s.get("slope_lo", nan),
                    slope_hi=s.get("slope_hi", nan),
                    environments_played=n_played,
                    environments_ranked=len(ranked_envs),
                    ranked_environments=";".join(ranked_envs),
                )
            )
    for f in forecasters:
        paper = PAPER_RATES.get(f)
        if paper is None or paper.measure not in measures + derived:
            continue
        # over the environments whose window ends at T* (a slope over smaller horizons is another estimand)
        mine = [
            slope[(paper.measure, f, e)]
            for e in envs
            if (paper.measure, f, e) in slope
            and np.isfinite(slope[(paper.measure, f, e)]["slope"])
            and slope[(paper.measure, f, e)]["t_max_fit"] == T_star
        ]
        if not mine:
            continue
        s = max(mine, key=lambda s: s["slope"])  # the slowest decay: a worst-case rate bounds it
        Ts = [
            T
            for T in sorted({r["T"] for r in rows})
            if s["t_min_fit"] <= T <= s["t_max_fit"]
            and any(x["forecaster_label"] == f and x["adversary_label"] == s["adversary"] and x["T"] == T for x in rows)
        ]
        ps = paper.slope_over(Ts)
        theory.append(
            dict(
                forecaster=f,
                measure=paper.measure,
                recorded="trial" if paper.measure in measures else "bucket table",
                paper_rate=paper.text,
                paper_slope=ps,
                slope=s["slope"],
                slope_lo=s["slope_lo"],
                slope_hi=s["slope_hi"],
                environment=s["adversary"],
                t_min_fit=s["t_min_fit"],
                t_max_fit=s["t_max_fit"],
                verdict=_verdict(s, ps),
            )
        )
    return measures, T_star, table, ranked_rows, theory, rates, slopes


def _verdict(s, paper_slope) -> str:
    """How the slowest measured decay stands to the paper's rate (an upper bound on the worst case)."""
    if not (np.isfinite(s["slope_lo"]) and np.isfinite(s["slope_hi"])):
        return "no interval"
    if s["slope_lo"] > paper_slope:
        return "slower than the rate"
    if s["slope_hi"] < paper_slope:
        return "faster than the rate"
    return "consistent with the rate"


def _csv(rows, columns) -> str:
    """CSV text of the rows; a float NaN (no value: the slope of a measure that is infinite at
    some horizon, a cell not finished) is an empty cell, never the text "nan"."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v != v else repr(v)) if isinstance(v, float) else v for k, v in r.items()})
    return buf.getvalue()


def _label(key) -> str:
    from fastcdl.measures import MEASURES

    return MEASURES[key].label if key in MEASURES else key


def _g(v) -> str:
    """A value with 3 significant digits (scientific below 1e-3)."""
    v = float(v)
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "0" if v == 0 else (f"{v:.3g}" if abs(v) >= 1e-3 else f"{v:.2e}")


def _sci(v) -> str:
    """3.0e8."""
    mantissa, exp = f"{float(v):.1e}".split("e")
    return f"{mantissa}e{int(exp)}"


def _s(v) -> str:
    v = float(v)
    return f"{v:.3f}" if math.isfinite(v) else "—"


def _pow2(T) -> str:
    k = int(T).bit_length() - 1
    return f"2^{k}" if 2**k == int(T) else str(T)


def _figure(m, rates, envs, forecasters):
    """One panel per environment: every forecaster's mean of measure m against T (log-log), with
    its interval as a band."""
    from matplotlib.figure import Figure

    cols = min(4, len(envs))
    rows_n = math.ceil(len(envs) / cols)
    fig = Figure(figsize=(3.2 * cols, 2.6 * rows_n + 0.6), layout="constrained")
    axes = fig.subplots(rows_n, cols, squeeze=False, sharex=True)
    by = defaultdict(list)
    for r in rates:
        if r["metric"] == m:
            by[(r["forecaster"], r["adversary"])].append(r)
    colours = {f: f"C{i % 10}" for i, f in enumerate(forecasters)}
    styles = {f: "-" if i < 10 else "--" for i, f in enumerate(forecasters)}
    for ax, e in zip(axes.flat, envs):
        for f in forecasters:
            pts = sorted((r for r in by.get((f, e), []) if r["mean"] > 0), key=lambda r: r["T"])
            if not pts:
                continue
            T = [r["T"] for r in pts]
            ax.plot(T, [r["mean"] for r in pts], styles[f], color=colours[f], marker=".", ms=3, lw=1, label=f)
            lo = [max(r["lo"], r["mean"] * 1e-3) if np.isfinite(r["lo"]) else r["mean"] for r in pts]
            hi = [r["hi"] if np.isfinite(r["hi"]) else r["mean"] for r in pts]
            ax.fill_between(T, lo, hi, color=colours[f], alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(e, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(envs) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for ax in axes.flat:
        h, lab = ax.get_legend_handles_labels()
        seen.update(zip(lab, h))
    fig.legend(
        [seen[f] for f in forecasters if f in seen],
        [f for f in forecasters if f in seen],
        loc="outside lower center",
        ncol=min(len(seen), 10),
        fontsize=8,
    )
    fig.suptitle(f"{_label(m)} per round against T (mean over seeds, 95% band)", fontsize=10)
    return fig


def _master_seed(folder: Path) -> int:
    import tomllib

    try:
        return int(tomllib.loads((folder / "preset.toml").read_text()).get("master_seed", 0))
    except (OSError, ValueError):
        return 0


def build(folder, *, figures=True, notes=None) -> dict:
    """Write the leaderboard's files and page into a run folder, from its trial store.

    Parameters
    ----------
    folder : str or Path
        The run folder (``trials.sqlite``, or ``trials.sqlite.xz`` which is unpacked).
    figures : bool, default True
        Also draw ``rates_<measure>.png`` (needs matplotlib).
    notes : str, optional
        The page's hand-written notes; default: those of the folder's README.md, kept between
        its notes markers.

    Returns
    -------
    dict
        measures, T (the largest horizon), n_trials, and the files written.

    Raises
    ------
    ValidationError
        (a ValueError) when the folder holds no store, or no trial.

    Examples
    --------
    >>> build("/nonexistent")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ValidationError: /nonexistent: no trials.sqlite (or trials.sqlite.xz); run the grid first: ...
    """
    from fastcdl._writing import atomic_write
    from fastcdl.experiments.analysis import RATES_COLUMNS, SUMMARY_COLUMNS

    folder = Path(folder)
    rows = load_rows(folder)
    if not rows:
        raise ValidationError(
            "folder", "holds no trial", value=str(folder), message=f"{folder}: the trial store holds no trial yet"
        )
    measures, T_star, table, ranked, theory, rates, slopes = _tables(rows, seed=_master_seed(folder))
    forecasters = list(dict.fromkeys(r["forecaster_label"] for r in rows))
    envs = _environment_order({r["adversary_label"] for r in rows})
    readme = folder / "README.md"
    if notes is None:
        old = readme.read_text() if readme.exists() else ""
        i, j = old.find(NOTES_START), old.find(NOTES_END)
        notes = old[i + len(NOTES_START) : j].strip("\n") if 0 <= i < j else ""
    texts = {
        folder / "table.csv": _csv(table, TABLE_COLUMNS),
        folder / "ranks.csv": _csv(ranked, RANK_COLUMNS),
        folder / "theory.csv": _csv(theory, THEORY_COLUMNS),
        folder / "rates.csv": _csv(rates, RATES_COLUMNS),
        folder / "summary.csv": _csv(slopes, SUMMARY_COLUMNS),
        readme: _page(rows, measures, T_star, ranked, theory, forecasters, envs, notes),
    }
    atomic_write(texts)
    written = list(texts)
    from fastcdl.experiments import submissions

    written.append(submissions.write(folder, rows, (measures, T_star, table, ranked, theory, rates, slopes)))
    if figures:
        from fastcdl._display.figures import save_all

        written += save_all([(f"rates_{m}.png", _figure(m, rates, envs, forecasters)) for m in measures], folder)
    return {"measures": measures, "T": T_star, "n_trials": len({r["key"] for r in rows}), "files": written}


def _page(rows, measures, T_star, ranked, theory, forecasters, envs, notes) -> str:
    stored = list({r["key"]: r for r in rows}.values())  # a trial of several environments once
    n_rounds = sum(r["T"] for r in stored)
    seconds = sum(r["seconds"] or 0.0 for r in stored)
    horizons = sorted({r["T"] for r in rows})
    seeds = max(len({r["seed_index"] for r in rows if r["T"] == T}) for T in horizons)
    by = {(r["measure"], r["forecaster"]): r for r in ranked}
    head = ["forecaster"] + [_label(m) for m in measures]
    lines = [
        "# Leaderboard: every forecaster, every environment, every measure",
        "",
        f"{len(forecasters)} forecasters against {len(envs)} environments at T = {_pow2(horizons[0])} ... "
        f"{_pow2(horizons[-1])}, {seeds} seeds; {len(stored):,} trials ({_sci(n_rounds)} rounds, {seconds:,.0f} "
        "trial-seconds) in `trials.sqlite.xz`. The environments: each searched forecaster's worst adversary "
        "found (`worst(<forecaster>)`, results/worstcase, at the horizons its search covered), the "
        "non-stationary `segments` and `budget`, `contrarian`, `lookahead` and a fair `coin` "
        "(docs/leaderboard.md).",
        "",
        f"**Score** of a forecaster on a measure: its mean at T = {_pow2(T_star)} in its worst environment "
        "(the largest mean), over the environments every forecaster playing them has finished at that T. "
        "**Rank** among the forecasters that played every one of them (1 = best; a forecaster the engine "
        "refuses some environment, such as `truthful` against an adversary that states no probability, "
        "has no rank). Cells: rank · score [95% interval] · the worst environment · decay slope there over "
        "the upper half of the horizons [95% interval]. Only finished cells (every seed) enter. A score of "
        "`inf` with a dash for its slope: KL-calibration is infinite once a forecaster states 0 or 1 and "
        "sees the other outcome (docs/pseudo.md), and an infinite measure has no decay slope (the CSVs "
        "leave such cells empty); ties rank alike.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for f in forecasters:
        cells = [f"`{f}`"]
        for m in measures:
            r = by.get((m, f))
            if r is None:
                cells.append("—")
                continue
            rank = f"**{r['rank']}**" if r["rank"] != "" else "–"
            cells.append(
                f"{rank} · {_g(r['mean'])} [{_g(r['lo'])}, {_g(r['hi'])}] · {r['worst_environment']} · "
                f"{_s(r['slope'])} [{_s(r['slope_lo'])}, {_s(r['slope_hi'])}]"
            )
        lines.append("| " + " | ".join(cells) + " |")
    lines += [""]
    if ranked:
        in_scores = ranked[0]["ranked_environments"].split(";")
        left_out = [e for e in envs if e not in in_scores]
        lines.append(
            f"Scores over {len(in_scores)} of the {len(envs)} environments"
            + (f"; not finished at {_pow2(T_star)}, so not in the scores: {', '.join(left_out)}." if left_out else ".")
        )
    lines += [
        "",
        "## The rates the papers prove, against the measured decay",
        "",
        "Per round, on the measure each paper bounds; the measured slope is the slowest decay over the "
        f"environments finished at {_pow2(T_star)} (a worst-case rate bounds every one of them); the paper's "
        "slope is that of its rate, log factors included, over the same horizons. `theory.csv` has them "
        "(a measure the trials do not record is computed from each trial's stored bucket table).",
        "",
        "| forecaster | measure | paper | paper's slope | measured slope [95%] | environment | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in theory:
        lines.append(
            f"| `{t['forecaster']}` | {_label(t['measure'])} | {t['paper_rate']} | {_s(t['paper_slope'])} | "
            f"{_s(t['slope'])} [{_s(t['slope_lo'])}, {_s(t['slope_hi'])}] | {t['environment']} | "
            f"{t['verdict']} |"
        )
    unrated = [f for f in forecasters if f not in PAPER_RATES]
    if unrated:
        lines += [
            "",
            "No paper rate for: " + ", ".join(f"`{f}`" for f in unrated) + " (baselines, ablations and plug-ins).",
        ]
    missing = [f for f, p in PAPER_RATES.items() if f in forecasters and f not in {t["forecaster"] for t in theory}]
    if missing:
        lines += [
            "",
            "Not checked here (the trials do not record the paper's measure): "
            + ", ".join(f"`{f}` ({PAPER_RATES[f].measure})" for f in missing)
            + ".",
        ]
    lines += ["", NOTES_START, notes, NOTES_END, "", "## Figures", ""]
    for m in measures:
        lines.append(f"![{_label(m)}](rates_{m}.png)")
        lines.append("")
    lines += [
        "Files: `ranks.csv` (the scores and ranks above), `table.csv` (every forecaster in every environment at "
        f"T = {_pow2(T_star)}: mean, interval, slope), `theory.csv`, `rates.csv` and `summary.csv` (every mean "
        "and slope, as docs/experiments.md describes them), `rates_<measure>.png`, `trials.sqlite.xz` (every "
        "trial with its bucket table). Means: studentized bootstrap over seeds; slopes: jackknife-t over seeds "
        "(docs/experiments.md).",
        "",
        "Rebuild this page from the store: `fastcdl leaderboard`; resume the grid: `fastcdl leaderboard --run` "
        "(from the repository's root: the worst adversaries are read from results/worstcase/worst.csv); "
        "rank your own forecaster: `fastcdl leaderboard --add my_module:MY_FORECASTER`.",
        "",
    ]
    return "\n".join(lines)


def grid_of(rows) -> list[tuple]:
    """The grid a folder's trials cover: sorted (adversary, adversary_label, adversary_params, T,
    seed_index, seed) of its stored trials, whichever forecaster played them, each trial once
    (under the first label it has).

    Parameters
    ----------
    rows : list of dict
        Stored trials (:func:`load_rows`).

    Returns
    -------
    list of tuple

    Examples
    --------
    >>> grid_of([dict(adversary="bernoulli", adversary_label="coin", adversary_params='{"p": 0.5}', T=16,
    ...               seed_index=0, seed=7, forecaster_label="cdl")])
    [('bernoulli', 'coin', '{"p": 0.5}', 16, 0, 7)]
    """
    first = {}
    for r in rows:
        first.setdefault(
            (r["adversary"], r["adversary_params"], int(r["T"]), int(r["seed_index"]), int(r["seed"])),
            r["adversary_label"],
        )
    return sorted((a, label, p, T, i, seed) for (a, p, T, i, seed), label in first.items())


def add(folder, forecaster, *, workers=None, progress=False) -> dict:
    """Play a forecaster (a plug-in "module:ATTRIBUTE", or a built-in name) on a leaderboard
    folder's grid, storing its trials beside the others' (every stored trial is reused).

    Parameters
    ----------
    folder : str or Path
        The leaderboard folder (its store holds the grid).
    forecaster : str
        What to play, with its default parameters: a plug-in "package.module:ATTRIBUTE"
        (imported by the worker processes too) or a built-in name.
    workers : int, optional
        Local worker processes (default: every CPU).
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    dict
        label (the forecaster's name in the store), n_trials, n_ran, n_reused, refused
        ({environment: the engine's reason}).

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown forecaster, a plug-in whose name is that of another
        forecaster in the store, or a folder without trials.

    Examples
    --------
    >>> add("/nonexistent", "cdl")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ValidationError: /nonexistent: no trials.sqlite (or trials.sqlite.xz); run the grid first: ...
    """
    from fastcdl.experiments.presets import Component
    from fastcdl.experiments.runner import Trial, refusal, run_trials
    from fastcdl.experiments.store import params_json
    from fastcdl.online import registry
    from fastcdl.online.versions import algorithm_version

    folder = Path(folder)
    rows = load_rows(folder)
    if not rows:
        raise ValidationError(
            "folder",
            "holds no trial",
            value=str(folder),
            message=f"{folder}: the trial store holds no trial; run the grid first: "
            f"fastcdl leaderboard --run --dir {folder}",
        )
    if not isinstance(forecaster, str):
        raise ValidationError("forecaster", "must be a name or 'package.module:ATTRIBUTE'", value=repr(forecaster))
    spec = registry.forecaster(forecaster)
    name, label = forecaster, spec.name
    taken = {r["forecaster_label"]: r["forecaster"] for r in rows}
    if label in taken and taken[label] != name:
        raise ValidationError(
            "forecaster",
            "has the name of another forecaster in the store",
            value=label,
            message=f"forecaster: {name!r} is named {label!r}, the name of the stored forecaster "
            f"{taken[label]!r}; give the plug-in another name",
        )
    f = Component(name, label=label)
    refused, trials = {}, []
    for a, a_label, a_params, T, i, seed in grid_of(rows):
        comp = Component(a, tuple(sorted(json.loads(a_params).items())), a_label)
        why = refused.get(a_label) or refusal(f, comp)
        if why is not None:
            refused[a_label] = why
            continue
        trials.append(Trial(name, label, params_json({}), a, a_label, a_params, T, i, seed, algorithm_version(name, a)))
    ran, reused = run_trials(trials, folder, workers=workers, progress=progress)
    return {"label": label, "n_trials": len(trials), "n_ran": ran, "n_reused": reused, "refused": refused}


def record_submission(folder, label, *, paper=None, claims=(), command=None) -> dict:
    """Write (or update) one forecaster's record in the folder's ``submissions.json`` (claimed
    rates against measured slopes, :mod:`fastcdl.experiments.submissions`) and return it; the
    other records are kept. Cost: the tables of the whole store, as :func:`build`.

    Examples
    --------
    >>> record_submission("/nonexistent", "cdl")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ValidationError: /nonexistent: no trials.sqlite (or trials.sqlite.xz); run the grid first: ...
    """
    from fastcdl.experiments import submissions

    folder = Path(folder)
    rows = load_rows(folder)
    tables = _tables(rows, seed=_master_seed(folder))
    return submissions.write_one(folder, rows, tables, label, paper=paper, claims=claims, command=command)


def ranks(folder, forecaster_label) -> list[dict]:
    """Where a forecaster of a leaderboard folder ranks on each measure (the rows of ranks.csv).

    Parameters
    ----------
    folder : str or Path
        The leaderboard folder.
    forecaster_label : str
        Its name in the store.

    Returns
    -------
    list of dict
        One per measure: rank ("" if it did not play every ranked environment), n_ranked,
        worst_environment, T, mean, lo, hi, slope, slope_lo, slope_hi, and the leader of the
        measure (rank 1: ``leader``, its ``leader_mean`` and ``leader_worst_environment``).

    Raises
    ------
    ValidationError
        (a ValueError) when the folder holds no store.

    Examples
    --------
    >>> ranks("/nonexistent", "cdl")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ValidationError: /nonexistent: no trials.sqlite (or trials.sqlite.xz); run the grid first: ...
    """
    folder = Path(folder)
    rows = load_rows(folder)
    _, _, _, ranked, _, _, _ = _tables(rows, seed=_master_seed(folder))
    leaders = {r["measure"]: r for r in ranked if r["rank"] == 1}
    out = []
    for r in ranked:
        if r["forecaster"] == forecaster_label:
            lead = leaders.get(r["measure"], {})
            out.append(
                {
                    **r,
                    "leader": lead.get("forecaster", ""),
                    "leader_mean": lead.get("mean", ""),
                    "leader_worst_environment": lead.get("worst_environment", ""),
                }
            )
    return out


def rank_lines(rows) -> list[str]:
    """The rows of :func:`ranks` in words, one line per measure."""
    out = []
    for r in rows:
        where = (
            f"rank {r['rank']} of {r['n_ranked']}"
            if r["rank"] != ""
            else f"no rank (played {r['environments_played']} of the {r['environments_ranked']} ranked environments)"
        )
        lead = ""
        if r.get("leader") and r["leader"] != r["forecaster"]:
            lead = f"; leader {r['leader']}: {_g(r['leader_mean'])} ({r['leader_worst_environment']})"
        out.append(
            f"  {_label(r['measure']):<8} {where}: worst environment {r['worst_environment']}, "
            f"{_g(r['mean'])} [{_g(r['lo'])}, {_g(r['hi'])}] at T = {_pow2(r['T'])}, "
            f"slope {_s(r['slope'])} [{_s(r['slope_lo'])}, {_s(r['slope_hi'])}]{lead}"
        )
    return out
