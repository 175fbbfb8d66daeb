"""Worst-case search: the adversary, from parametric families, that maximises a forecaster's
mean CDL at a horizon T (docs/worst-case.md).

For one forecaster and T:

1. screen: every family of :data:`FAMILIES` at points of a scrambled Sobol sequence over
   its parameter box (a family without parameters once), each scored by its mean CDL over
   the *search seeds*;
2. refine: Nelder-Mead (scipy) from the best point of each of the best families, on the
   same search seeds (common random numbers make the objective a deterministic function
   of the parameters);
3. report: the best candidate found is run again on *fresh seeds* (another master seed,
   never used for choosing), so its reported mean is not inflated by the selection.

Above a chosen horizon a full search costs too much; :func:`transfer` re-scores the best
candidates of a search at a smaller horizon (the best few overall and the best of each
family) on the search seeds at the larger one and reports the best of them on fresh seeds (parameters that depend on T, such as a number of
cycles over the horizon, are given relative to T, so they carry over).

Every trial goes through the rate experiments' store (:class:`TrialStore`), keyed by its
forecaster, adversary, parameters, T, seed and algorithm version: a search stopped at any
point and run again recomputes only the trials in flight and repeats the same choices.

>>> sorted(FAMILIES)[:3]
['bernoulli', 'contrarian', 'drift']
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from fastcdl.experiments.runner import Trial, run_trial, trial_seed
from fastcdl.experiments.store import params_json
from fastcdl.io import writing_to
from fastcdl.online.versions import algorithm_version

__all__ = ["FAMILIES", "Dim", "Family", "SearchResult", "search", "transfer"]

SEARCH_MASTER = 20261124  # seeds used to choose the adversary
FRESH_MASTER = 77120611  # seeds used to report it (never seen by the search)


@dataclass(frozen=True)
class Dim:
    """One searched parameter: its range, on a log scale when ``log``."""

    name: str
    lo: float
    hi: float
    log: bool = False

    def value(self, u: float) -> float:
        """The parameter at u in [0, 1], rounded to 6 significant digits (readable, stable keys)."""
        u = min(max(float(u), 0.0), 1.0)
        v = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo))) if self.log \
            else self.lo + u * (self.hi - self.lo)
        return float(f"{v:.6g}")


@dataclass(frozen=True)
class Family:
    """An adversary and the box its parameters are searched in; ``fixed`` are passed as they
    are. A parameter named ``cycles`` is a count over the horizon: the adversary receives
    period = T / cycles."""

    adversary: str
    dims: tuple = ()
    fixed: dict = field(default_factory=dict)

    def params(self, u, T) -> dict:
        out = dict(self.fixed)
        for d, ui in zip(self.dims, u):
            v = d.value(ui)
            if d.name == "cycles":
                out["period"] = float(f"{T / v:.6g}")
            else:
                out[d.name] = v
        return out


FAMILIES = {
    "bernoulli": Family("bernoulli", (Dim("p", 0.0, 1.0),)),
    "drift": Family("drift", (Dim("amplitude", 0.0, 0.5), Dim("cycles", 0.5, 256.0, log=True))),
    "markov": Family("markov", (Dim("p01", 1e-3, 1.0, log=True), Dim("p10", 1e-3, 1.0, log=True))),
    "contrarian": Family("contrarian"),
    "greedy": Family("greedy"),
    "rawpoint": Family("rawpoint", (Dim("shift", -0.1, 0.1), Dim("mix", 0.0, 1.0))),
    "gridedge": Family("gridedge", (Dim("position", 0.0, 1.0),)),
    "sweep": Family("sweep", (Dim("low", 0.0, 0.5), Dim("high", 0.5, 1.0), Dim("amp", 0.0, 0.3),
                              Dim("cycles", 0.5, 256.0, log=True))),
    "lookahead": Family("lookahead", fixed={"kinks": 32}),
    "signpreserve": Family("signpreserve"),
}


@dataclass
class SearchResult:
    """The outcome of a search at one horizon: the winner, its score on the search seeds,
    its rows on fresh seeds, and every candidate scored (family, params, search mean)."""

    forecaster: str
    T: int
    adversary: str
    params: dict
    search_mean: float
    fresh: list
    candidates: list


class _Pool:
    """One process pool for a whole plan (spawned once: starting workers costs seconds),
    used for horizons where a trial outlasts the hand-off; small ones run in this process."""

    MIN_T = 2**15

    def __init__(self, workers):
        self.workers = workers or os.cpu_count() or 1
        self._pool = None

    def run(self, todo, T, keep):
        from concurrent.futures import FIRST_COMPLETED, wait

        if T < self.MIN_T or self.workers == 1 or len(todo) == 1:
            for t in todo:
                keep(run_trial(t))
            return
        if self._pool is None:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            from fastcdl.experiments.runner import _watch_parent

            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"),
                                             initializer=_watch_parent, initargs=(os.getpid(),))
        pending = {self._pool.submit(run_trial, t) for t in todo}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    keep(fut.result())
        except BaseException:
            self.close(kill=True)
            raise

    def close(self, kill=False):
        if self._pool is not None:
            if kill:
                from fastcdl.experiments.runner import _kill_workers

                _kill_workers(self._pool)
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class _Evaluator:
    """Mean CDL of (adversary, params) over seed indices, each trial from the store or run."""

    def __init__(self, forecaster, fparams, T, store, pool):
        self.forecaster, self.fparams, self.T = forecaster, dict(fparams or {}), int(T)
        self.store, self.pool = store, pool
        self.done = {r["key"]: r for r in store.rows()}

    def trial(self, adversary, params, i, master) -> Trial:
        return Trial(self.forecaster, self.forecaster, params_json(self.fparams), adversary, adversary,
                     params_json(params), self.T, i, trial_seed(master, i),
                     algorithm_version(self.forecaster, adversary))

    def rows(self, cands, seeds, master) -> list[list[dict]]:
        """The stored rows of every (adversary, params) in cands over seed indices 0..seeds-1."""
        trials = [[self.trial(a, p, i, master) for i in range(seeds)] for a, p in cands]
        todo = [t for ts in trials for t in ts if t.key not in self.done]
        todo = list({t.key: t for t in todo}.values())

        def keep(row):
            self.store.add(row)
            self.done[row["key"]] = row

        self.pool.run(todo, self.T, keep)
        return [[self.done[t.key] for t in ts] for ts in trials]

    def means(self, cands, seeds, master, metric="cdl") -> list[float]:
        return [float(np.mean([r[metric] for r in rs])) for rs in self.rows(cands, seeds, master)]


def _sobol(d, n, seed):
    from scipy.stats import qmc

    if d == 0:
        return [()]
    return [tuple(u) for u in qmc.Sobol(d, scramble=True, seed=seed).random_base2(max(0, (n - 1).bit_length()))]


def search(forecaster, T, store, *, fparams=None, families=None, search_seeds=4, fresh_seeds=16, n_init=8,
           n_refine=2, maxfev=12, pool=None) -> SearchResult:
    """The adversary among ``families`` (default: all of :data:`FAMILIES`) that maximises the
    forecaster's mean CDL at horizon T on the search seeds, reported on fresh seeds.

    Cost: about (sum over families of n_init (rounded up to a power of two; 1 if no
    parameters) + n_refine maxfev) x search_seeds + fresh_seeds trials of T rounds.
    """
    from scipy.optimize import minimize

    fams = [FAMILIES[f] for f in (families or FAMILIES)]
    ev = _Evaluator(forecaster, fparams, T, store, pool or _Pool(1))
    screen = []
    for k, fam in enumerate(fams):
        for u in _sobol(len(fam.dims), n_init if fam.dims else 1, seed=k):
            screen.append((fam, u))
    scores = ev.means([(f.adversary, f.params(u, T)) for f, u in screen], search_seeds, SEARCH_MASTER)
    cands = [(f.adversary, f.params(u, T), s, "screen") for (f, u), s in zip(screen, scores)]

    best_per_family = {}
    for (fam, u), s in zip(screen, scores):
        if fam.dims and (fam.adversary not in best_per_family or s > best_per_family[fam.adversary][1]):
            best_per_family[fam.adversary] = (u, s)
    ranked = sorted(best_per_family.items(), key=lambda kv: -kv[1][1])[:n_refine]
    for name, (u0, _) in ranked:
        fam = next(f for f in fams if f.adversary == name)
        seen = {}

        def objective(u, fam=fam, seen=seen):
            p = fam.params(u, T)
            key = params_json(p)
            if key not in seen:
                seen[key] = ev.means([(fam.adversary, p)], search_seeds, SEARCH_MASTER)[0]
                cands.append((fam.adversary, p, seen[key], "refine"))
            return -seen[key]

        minimize(objective, np.asarray(u0, dtype=float), method="Nelder-Mead", bounds=[(0.0, 1.0)] * len(fam.dims),
                 options={"maxfev": maxfev, "xatol": 1e-3, "fatol": 1e-6, "initial_simplex": _simplex(u0)})
    return _report(ev, forecaster, T, cands, search_seeds, fresh_seeds)


def _simplex(u0):
    """A starting simplex of steps 0.15 in each coordinate (away from the nearer bound)."""
    u0 = np.asarray(u0, dtype=float)
    pts = [u0]
    for i in range(u0.shape[0]):
        p = u0.copy()
        p[i] = p[i] + 0.15 if p[i] <= 0.5 else p[i] - 0.15
        pts.append(p)
    return np.array(pts)


def _report(ev, forecaster, T, cands, search_seeds, fresh_seeds) -> SearchResult:
    best = max(cands, key=lambda c: (c[2], -len(params_json(c[1]))))
    fresh = ev.rows([(best[0], best[1])], fresh_seeds, FRESH_MASTER)[0]
    return SearchResult(forecaster, int(T), best[0], best[1], best[2], fresh, cands)


def transfer(forecaster, T, store, from_candidates, *, fparams=None, top=5, search_seeds=4, fresh_seeds=16,
             pool=None) -> SearchResult:
    """The best of the candidates of a search at a smaller horizon, scored again on the
    search seeds at T and reported on fresh seeds: the ``top`` best overall and the best of
    every family (a family that was second at the smaller horizon may be first at T).
    ``from_candidates``: [(adversary, params, score, stage, T0), ...], T0 the horizon each was
    scored at; periods scale with T."""
    ev = _Evaluator(forecaster, fparams, T, store, pool or _Pool(1))
    ranked, seen, families = [], set(), set()
    for a, p, s, stage, T0 in sorted(from_candidates, key=lambda c: -c[2]):
        p = dict(p)
        if "period" in p:
            p["period"] = float(f"{p['period'] * T / T0:.6g}")
        key = (a, params_json(p))
        if key not in seen and (len(ranked) < top or a not in families):
            seen.add(key)
            families.add(a)
            ranked.append((a, p))
    scores = ev.means(ranked, search_seeds, SEARCH_MASTER)
    cands = [(a, p, s, "transfer") for (a, p), s in zip(ranked, scores)]
    return _report(ev, forecaster, T, cands, search_seeds, fresh_seeds)


def interval(values, *cell) -> tuple[float, float, float]:
    """Mean and 95% interval of the mean over seeds: the rate experiments' studentized
    bootstrap (:func:`fastcdl.experiments.analysis.mean_interval`), its stream seeded by the
    cell's labels, so a cell's interval does not depend on what else was run."""
    from fastcdl.experiments.analysis import _cell_rng, mean_interval

    return mean_interval(values, rng=_cell_rng(FRESH_MASTER, "worst", *cell))


WORST_COLUMNS = ("forecaster", "adversary", "adversary_params", "T", "metric", "mean", "lo", "hi", "n_seeds")
CANDIDATE_COLUMNS = ("forecaster", "T", "stage", "adversary", "adversary_params", "search_mean_cdl", "search_seeds")


def worst_rows(result: SearchResult, metrics=("cdl", "ece", "vcdl", "k2", "ucal")) -> list[dict]:
    """worst.csv rows of a search: each metric's mean over the fresh seeds with its interval."""
    out = []
    for m in metrics:
        mean, lo, hi = interval([r[m] for r in result.fresh], result.forecaster, m, result.T)
        out.append(dict(forecaster=result.forecaster, adversary=result.adversary,
                        adversary_params=json.dumps(result.params, sort_keys=True), T=result.T, metric=m,
                        mean=mean, lo=lo, hi=hi, n_seeds=len(result.fresh)))
    return out


# -- a grid of searches: the worst-case folder ---------------------------------------------
@dataclass(frozen=True)
class WorstPlan:
    """Which searches to run: forecasters, horizons with a full search, horizons reached by
    transfer from the largest searched one (per forecaster), and the search's budget."""

    forecasters: tuple
    search_horizons: tuple
    transfer_horizons: dict = field(default_factory=dict)  # forecaster -> horizons
    search_seeds: int = 4
    fresh_seeds: int = 16
    n_init: int = 8
    n_refine: int = 2
    maxfev: int = 10
    top: int = 5
    cross_horizons: tuple = ()  # every forecaster against every forecaster's winner, on fresh seeds

    @classmethod
    def load(cls, name_or_path) -> "WorstPlan":
        """A plan from a TOML file, or the built-in ``worstcase`` plan by name."""
        import tomllib
        from importlib import resources
        from pathlib import Path

        from fastcdl.experiments.presets import PresetError, parse_horizon

        path = Path(name_or_path)
        if path.suffix == ".toml":
            if not path.is_file():
                raise PresetError(f"worst-case plan file {str(path)!r} does not exist")
            text = path.read_text()
        else:
            f = resources.files("fastcdl.experiments").joinpath("presets", "worst", f"{name_or_path}.toml")
            if not f.is_file():
                raise PresetError(f"unknown worst-case plan {name_or_path!r} (built-in: worstcase)")
            text = f.read_text()
        raw = tomllib.loads(text)
        known = {"name", "description", "forecasters", "search_horizons", "transfer_horizons", "search_seeds",
                 "fresh_seeds", "n_init", "n_refine", "maxfev", "top", "cross_horizons"}
        extra = sorted(set(raw) - known)
        if extra:
            raise PresetError(f"worst-case plan: unknown key {extra[0]!r}")
        return cls.make(forecasters=raw.get("forecasters", ["cdl"]),
                        search_horizons=[parse_horizon(t, "search_horizons") for t in raw.get("search_horizons", [])],
                        transfer_horizons={k: [parse_horizon(t, "transfer_horizons") for t in v]
                                           for k, v in raw.get("transfer_horizons", {}).items()},
                        cross_horizons=[parse_horizon(t, "cross_horizons") for t in raw.get("cross_horizons", [])],
                        **{k: raw[k] for k in ("search_seeds", "fresh_seeds", "n_init", "n_refine", "maxfev", "top")
                           if k in raw})

    @classmethod
    def make(cls, *, forecasters, search_horizons, transfer_horizons=None, cross_horizons=(), **budget) -> "WorstPlan":
        """A checked plan (ValueError naming the problem)."""
        from fastcdl._validate import ValidationError, check_horizon, check_int
        from fastcdl.online import registry

        for f in forecasters:
            registry.forecaster(f)
        if not search_horizons:
            raise ValidationError("search_horizons", "must name at least one horizon")
        for T in search_horizons:
            check_horizon(T, "T", low=2)
        transfer_horizons = dict(transfer_horizons or {})
        for f, Ts in transfer_horizons.items():
            if f not in forecasters:
                raise ValidationError("transfer_horizons", f"names {f!r}, which is not a planned forecaster")
            for T in Ts:
                if check_horizon(T, "T", low=2) <= max(search_horizons):
                    raise ValidationError("transfer_horizons", f"{T} must exceed the largest searched horizon "
                                          f"{max(search_horizons)}")
        for k, v in budget.items():
            check_int(v, k, low=1 if k not in ("search_seeds", "fresh_seeds") else 2)
        planned = set(search_horizons) | {T for Ts in transfer_horizons.values() for T in Ts}
        for T in cross_horizons:
            if T not in planned:
                raise ValidationError("cross_horizons", f"{T} is not a horizon of the plan")
        return cls(tuple(forecasters), tuple(sorted(search_horizons)),
                   {f: tuple(sorted(v)) for f, v in transfer_horizons.items()},
                   cross_horizons=tuple(sorted(cross_horizons)), **budget)


def run_plan(plan: WorstPlan, out_dir, *, workers=None, progress=True) -> list[SearchResult]:
    """Run (or resume) every search of the plan into out_dir: trials.sqlite (every trial),
    then candidates.csv and worst.csv, written atomically once the whole plan is done."""
    from pathlib import Path

    from fastcdl.experiments.store import TrialStore

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    pool = _Pool(workers)
    with TrialStore(out / "trials.sqlite") as store:
        try:
            _run_searches(plan, store, pool, results, progress)
            cross = _cross(plan, store, pool, results)
        finally:
            pool.close()
            store.checkpoint()
    _write(plan, out, results, cross)
    return results


def _cross(plan, store, pool, results) -> list[dict]:
    """At each cross horizon, every forecaster of the plan against every forecaster's worst
    adversary, on the fresh seeds: does the adversary that is worst for one forecaster
    separate it from the others? Rows: each metric's mean and t-interval, plus the paired
    difference (same seed index) to the forecaster the adversary was found for."""
    out = []
    for T in plan.cross_horizons:
        winners = [r for r in results if r.T == T]
        for w in winners:
            ev = {f: _Evaluator(f, None, T, store, pool) for f in plan.forecasters}
            rows = {f: ev[f].rows([(w.adversary, w.params)], plan.fresh_seeds, FRESH_MASTER)[0] for f in ev}
            for f, rs in rows.items():
                for m in ("cdl", "ece"):
                    mean, lo, hi = interval([r[m] for r in rs], "cross", w.forecaster, f, m, T)
                    dmean, dlo, dhi = interval([a[m] - b[m] for a, b in zip(rs, rows[w.forecaster])], "diff",
                                               w.forecaster, f, m, T)
                    out.append(dict(T=T, worst_for=w.forecaster, adversary=w.adversary,
                                    adversary_params=params_json(w.params), forecaster=f, metric=m, mean=mean,
                                    lo=lo, hi=hi, diff_to_worst_for=dmean, diff_lo=dlo, diff_hi=dhi,
                                    n_seeds=len(rs)))
    return out


def _run_searches(plan, store, pool, results, progress):
    for f in plan.forecasters:
        last = None
        budget = dict(search_seeds=plan.search_seeds, fresh_seeds=plan.fresh_seeds, pool=pool)
        for T in plan.search_horizons:
            r = search(f, T, store, n_init=plan.n_init, n_refine=plan.n_refine, maxfev=plan.maxfev, **budget)
            results.append(r)
            last = r
            if progress:
                print(_line(r), flush=True)
        for T in plan.transfer_horizons.get(f, ()):
            cands = [(a, p, s, stage, last.T) for a, p, s, stage in last.candidates]
            r = transfer(f, T, store, cands, top=plan.top, **budget)
            results.append(r)
            last = r
            if progress:
                print(_line(r), flush=True)


CROSS_COLUMNS = ("T", "worst_for", "adversary", "adversary_params", "forecaster", "metric", "mean", "lo", "hi",
                 "diff_to_worst_for", "diff_lo", "diff_hi", "n_seeds")


def _write(plan, out, results, cross):
    from fastcdl.experiments.analysis import _atomic_write, _csv_text

    rows = [w for r in results for w in worst_rows(r)]
    cand_rows = [dict(forecaster=r.forecaster, T=r.T, stage=stage, adversary=a, adversary_params=params_json(p),
                      search_mean_cdl=s, search_seeds=plan.search_seeds)
                 for r in results for a, p, s, stage in r.candidates]
    files = {out / "worst.csv": _csv_text(rows, WORST_COLUMNS),
             out / "candidates.csv": _csv_text(cand_rows, CANDIDATE_COLUMNS)}
    if cross:
        files[out / "cross.csv"] = _csv_text(cross, CROSS_COLUMNS)
    slopes, forms = worst_slopes(results)
    if slopes:
        from fastcdl.experiments.analysis import SUMMARY_COLUMNS
        from fastcdl.experiments.forms import FORMS_COLUMNS

        files[out / "worst_slopes.csv"] = _csv_text(slopes, SUMMARY_COLUMNS)
        files[out / "forms.csv"] = _csv_text(forms, FORMS_COLUMNS)
    _atomic_write(files)
    if len({r.T for r in results}) > 1:
        worst_figure(rows, out / "worst.png")


def worst_slopes(results, metrics=("cdl", "ece")) -> tuple[list[dict], list[dict]]:
    """Slopes of the worst-case means against T per forecaster (fastcdl.experiments.analysis,
    adversary "worst"), and the constants of the forms the theory predicts
    (fastcdl.experiments.forms): the fresh seeds share their indices across horizons, as a
    rate experiment's seeds do, though the adversary may differ from one horizon to the next."""
    from fastcdl.experiments.analysis import analyze
    from fastcdl.experiments.forms import form_fits

    rows = [dict(forecaster_label=r.forecaster, adversary_label="worst", forecaster=r.forecaster,
                 forecaster_params="{}", T=r.T, seed_index=x["seed_index"], **{m: x[m] for m in metrics})
            for r in results for x in r.fresh]
    return analyze(rows, list(metrics), seed=FRESH_MASTER)[1], form_fits(rows, list(metrics))


def worst_figure(rows, path) -> None:
    """worst.png: each forecaster's worst-case mean CDL and ECE against T (log-log), with
    the fresh seeds' t-intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, metric in zip(axes, ("cdl", "ece")):
        for f in dict.fromkeys(r["forecaster"] for r in rows):
            pts = sorted((r["T"], r["mean"], r["lo"], r["hi"]) for r in rows if r["forecaster"] == f and r["metric"] == metric)
            T, mean, lo, hi = (np.array(v, dtype=float) for v in zip(*pts))
            ax.errorbar(T, mean, yerr=[mean - np.minimum(lo, mean), np.maximum(hi, mean) - mean], marker="o", ms=3,
                        capsize=2, label=f)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (rounds)")
        ax.set_ylabel(f"worst-case mean {metric.upper()}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("The worst adversary found for each forecaster and T (mean over fresh seeds, 95% t-intervals)")
    with writing_to(path):
        fig.savefig(path, dpi=120)
    plt.close(fig)


def _line(r: SearchResult) -> str:
    mean, lo, hi = interval([x["cdl"] for x in r.fresh], r.forecaster, "cdl", r.T)
    return (f"{r.forecaster:<8} T = {r.T:<8} worst: {r.adversary} {params_json(r.params)}  "
            f"CDL {mean:.4g} [{lo:.4g}, {hi:.4g}] on {len(r.fresh)} fresh seeds (search {r.search_mean:.4g})")


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
    by = {(w["forecaster"], int(w["T"]), w["metric"]): w for w in worst}
    forecasters = list(dict.fromkeys(w["forecaster"] for w in worst))
    lines = ["| forecaster | T | worst adversary found | parameters | CDL (fresh seeds) | ECE (fresh seeds) "
             "| CDL (search seeds) |", "|---|---|---|---|---|---|---|"]
    for f in forecasters:
        for T in sorted({int(w["T"]) for w in worst if w["forecaster"] == f}):
            c, e = by[(f, T, "cdl")], by[(f, T, "ece")]
            score = max(float(x["search_mean_cdl"]) for x in cands if x["forecaster"] == f and int(x["T"]) == T)
            params = ", ".join(f"{k}={_fmt(v)}" for k, v in json.loads(c["adversary_params"]).items())
            lines.append(f"| {f} | 2^{T.bit_length() - 1} | {c['adversary']} | {params or '-'} | "
                         f"{_fmt(float(c['mean']))} [{_fmt(float(c['lo']))}, {_fmt(float(c['hi']))}] | "
                         f"{_fmt(float(e['mean']))} [{_fmt(float(e['lo']))}, {_fmt(float(e['hi']))}] | {_fmt(score)} |")
    out = ["### Worst adversary found, per forecaster and horizon", "", *lines]
    probes = [a for a in ("contrarian", "lookahead") if any(x["adversary"] == a for x in cands)]
    search_T = sorted({int(x["T"]) for x in cands if x["stage"] == "screen"})
    for a in probes:
        out += ["", f"### {a} against every forecaster (mean CDL over the search seeds, from candidates.csv)", "",
                "| forecaster | " + " | ".join(f"2^{T.bit_length() - 1}" for T in search_T) + " |",
                "|---|" + "---|" * len(search_T)]
        for f in forecasters:
            cells = []
            for T in search_T:
                v = [float(x["search_mean_cdl"]) for x in cands if x["forecaster"] == f and int(x["T"]) == T
                     and x["adversary"] == a and x["stage"] == "screen"]
                cells.append(_fmt(v[0]) if v else "-")
            out.append(f"| {f} | " + " | ".join(cells) + " |")
    if (folder / "worst_slopes.csv").is_file():
        slopes = read("worst_slopes.csv")
        out += ["", "### Decay of the worst case found (slope of log mean against log T)", "",
                "| forecaster | metric | slope | 95% interval | T fitted |", "|---|---|---|---|---|"]
        for s in slopes:
            out.append(f"| {s['forecaster']} | {s['metric']} | {float(s['slope']):.3f} | "
                       f"[{float(s['slope_lo']):.3f}, {float(s['slope_hi']):.3f}] | "
                       f"2^{int(s['t_min_fit']).bit_length() - 1}..2^{int(s['t_max_fit']).bit_length() - 1} |")
    if (folder / "forms.csv").is_file():
        forms = read("forms.csv")
        out += ["", "### The forms the theory predicts, fitted to the worst case found (forms.csv)", "",
                "| forecaster | metric | form | c | 95% interval | residual slope | its interval |",
                "|---|---|---|---|---|---|---|"]
        for r in forms:
            out.append(f"| {r['forecaster']} | {r['metric']} | {r['form']} | {_fmt(float(r['c']))} | "
                       f"[{_fmt(float(r['c_lo']))}, {_fmt(float(r['c_hi']))}] | {float(r['residual_slope']):.3f} | "
                       f"[{float(r['residual_slope_lo']):.3f}, {float(r['residual_slope_hi']):.3f}] |")
    if (folder / "cross.csv").is_file():
        cross = read("cross.csv")
        for T in sorted({int(c["T"]) for c in cross}):
            for metric in ("cdl",):
                rows = [c for c in cross if int(c["T"]) == T and c["metric"] == metric]
                fs = list(dict.fromkeys(c["forecaster"] for c in rows))
                out += ["", f"### Every forecaster against every forecaster's worst adversary, T = 2^{T.bit_length() - 1}, "
                        f"mean {metric.upper()} over fresh seeds (diagonal: the adversary's own forecaster)", "",
                        "| adversary (worst for) | " + " | ".join(fs) + " |", "|---|" + "---|" * len(fs)]
                for w in dict.fromkeys(c["worst_for"] for c in rows):
                    cells = {c["forecaster"]: c for c in rows if c["worst_for"] == w}
                    adv = cells[fs[0]]["adversary"]
                    lines = [f"**{_fmt(float(cells[f]['mean']))}**" if f == w else _fmt(float(cells[f]["mean"]))
                             for f in fs]
                    out.append(f"| {adv} ({w}) | " + " | ".join(lines) + " |")
    return "\n".join(out) + "\n"
