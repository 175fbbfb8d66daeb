"""Worst-case search: the adversary, from parametric families, that maximises a forecaster's
mean CDL at a horizon T (docs/worst-case.md).

For one forecaster and T, every family of :data:`FAMILIES` is
searched in the forecaster's own units (its grid j/m, declared in its registry entry):

1. coverage: a 1-D family is swept densely (8 points per grid cell over the whole range);
   a multi-parameter family gets a scrambled Sobol design (scipy.stats.qmc), thinned by
   successive halving over seeds (every point on 1 seed, the best quarter on 2, the best
   16 on all the search seeds); a family without parameters is run once;
2. refinement: around the best points of a 1-D sweep, scipy's bounded scalar minimiser
   inside one sweep step; for a multi-parameter family, scipy's differential evolution,
   seeded, its first population the 16 survivors of the halving, then Nelder-Mead from its
   two best points;
3. choice: the best candidates overall and the best of every family are scored again on
   16 search seeds (the final rung of the halving), the best 4 of them on 64 (the deepest
   rung), and the best there is the winner;
4. report: the winner is run on *fresh seeds* (another master seed, never used for
   choosing), so its reported mean is not inflated by the selection.

Every candidate is scored on the same seeds (common random numbers), so comparisons are
paired and the objective is a deterministic function of the parameters.

A full search also scores the best few candidates of every family at the horizon below,
carried in grid units. Above the horizons with a full search, :func:`transfer` carries the
best few candidates of every family to the next horizon in grid units (fastcdl.experiments.families.carry), searches
locally around each, and chooses and reports as above.

Every trial goes through the rate experiments' store (:class:`fastcdl.experiments.TrialStore`), keyed by its
forecaster, adversary, parameters, T, seed and algorithm version: a search stopped at any
point and run again recomputes only the trials in flight and repeats the same choices.

>>> sorted(FAMILIES)[:3]
['bernoulli', 'cdlahead', 'contrarian']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from dataclasses import dataclass, field, fields

import numpy as np

from fastcdl.experiments.families import FAMILIES, PER_CELL, Dim, Family, carry, family_for, grid_coordinates
from fastcdl.experiments.runner import Trial, run_trial, trial_seed
from fastcdl.experiments.store import params_json
from fastcdl.io import writing_to
from fastcdl.online.versions import algorithm_version

__all__ = ["FAMILIES", "Candidate", "Dim", "Family", "SearchResult", "search", "transfer"]

SEARCH_MASTER = 20261124  # seeds used to choose the adversary
FRESH_MASTER = 77120611  # seeds used to report it (never seen by the search)


@dataclass
class Candidate:
    """One adversary scored by a search.

    Attributes
    ----------
    family : str
        Its family.
    params : dict
        The adversary's parameters.
    stage : str
        How it was proposed: sweep, refine, design, evolve, polish, fixed, carried, local.
    search_mean : float
        Its mean CDL over the search seeds.
    final_mean : float or None
        Over the final rung's seeds, if it reached them.
    deep_mean : float or None
        Over the deepest rung's seeds, if it reached them.

    Examples
    --------
    >>> c = Candidate("bernoulli", {"p": 0.3}, "sweep", 0.1)
    >>> c.key
    ('bernoulli', '{"p": 0.3}')
    """

    family: str
    params: dict
    stage: str
    search_mean: float
    final_mean: float | None = None
    deep_mean: float | None = None

    @property
    def key(self):
        """(family, canonical JSON of the parameters): what identifies it."""
        return (self.family, params_json(self.params))


@dataclass
class SearchResult:
    """The outcome of a search at one horizon (:func:`search`, :func:`transfer`).

    Attributes
    ----------
    forecaster : str
        The forecaster searched against.
    T : int
        The horizon.
    adversary : str
        The winner's family.
    params : dict
        The winner's parameters.
    search_mean : float
        Its score on the deepest rung's seeds.
    fresh : list of dict
        Its rows on fresh seeds (never used for choosing).
    candidates : list of Candidate
        Every candidate scored.
    m : int or None
        The grid m it was searched on.

    Examples
    --------
    See :func:`search`.
    """

    forecaster: str
    T: int
    adversary: str
    params: dict
    search_mean: float
    fresh: list
    candidates: list
    m: int | None = None

    def best_of_families(self) -> dict:
        """family -> its best candidate (by final-rung mean; every family reaches that rung).

        Returns
        -------
        dict of str to Candidate
        """
        out = {}
        for c in self.candidates:
            if c.final_mean is not None and (c.family not in out or _final_key(c) > _final_key(out[c.family])):
                out[c.family] = c
        w = self.winner()
        if w is not None:  # chosen on the deepest rung: its family's representative
            out[w.family] = w
        return out

    def winner(self):
        """The winner's Candidate (None for a result without candidates).

        Returns
        -------
        Candidate or None
        """
        return next((c for c in self.candidates if c.family == self.adversary and c.params == self.params
                     and c.deep_mean is not None), None)


def _final_key(c):
    """How finalists are ranked: final-rung mean, then search mean, then the shorter parameters."""
    return (c.final_mean, c.search_mean, -len(params_json(c.params)))


class _Pool:
    """One process pool for a whole plan (spawned once: starting workers costs seconds), or a
    Dask client; small horizons run in this process."""

    MIN_T = 2**15

    def __init__(self, workers, client=None):
        self.workers = workers or os.cpu_count() or 1
        self.client = client
        self._pool = None

    def run(self, todo, T, keep):
        from concurrent.futures import FIRST_COMPLETED, wait

        if self.client is not None and todo:
            from fastcdl.experiments.runner import _dask

            _dask(todo, self.client, keep)
            return
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
    """Mean CDL of (adversary, params) over the first k seed indices, each trial from the
    store or run. ``means`` is the whole interface a search needs (tests plant their own)."""

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

    def means(self, cands, seeds, master=SEARCH_MASTER, metric="cdl") -> list[float]:
        return [float(np.mean([r[metric] for r in rs])) for rs in self.rows(cands, seeds, master)]


@dataclass(frozen=True)
class Budget:
    """How much a search spends: seeds that score candidates, seeds of the final rung,
    fresh seeds that report the winner, the Sobol design (2^k points), differential
    evolution's generations, the Nelder-Mead polish (starts, evaluations each) and the
    axis sweeps (points per axis at most, passes at most) of a multi-parameter family, how many of a 1-D sweep's best points are refined, how many
    candidates of every family a transfer carries, how many best candidates overall reach
    the final rung (with the best of every family), and how many of the finalists reach the
    deepest rung, on how many seeds, where the winner is chosen."""

    search_seeds: int = 4
    final_seeds: int = 16
    fresh_seeds: int = 16
    design: int = 256
    generations: int = 12
    refine: int = 3
    top: int = 3
    finalists: int = 8
    polish: int = 2
    polish_fev: int = 30
    axis_points: int = 65
    axis_passes: int = 2
    deep: int = 4
    deep_seeds: int = 64


class _Scorer:
    """Scores candidates through an evaluator and keeps every one (deduplicated)."""

    def __init__(self, ev, T, budget):
        self.ev, self.T, self.budget = ev, T, budget
        self.cands: dict = {}

    def score(self, fam: Family, params_list, stage, seeds=None) -> list[float]:
        seeds = seeds or self.budget.search_seeds
        out = self.ev.means([(fam.adversary, p) for p in params_list], seeds)
        if seeds == self.budget.search_seeds:
            for p, s in zip(params_list, out):
                c = Candidate(fam.adversary, p, stage, s)
                self.cands.setdefault(c.key, c)
        return out


def _sweep(sc: _Scorer, fam: Family, m):
    """A 1-D family: the dense sweep, then a bounded scalar refinement (scipy) inside one
    sweep step around each of its best points."""
    from scipy.optimize import minimize_scalar

    (d,) = fam.dims
    xs = fam.sweep_points(m)
    scores = sc.score(fam, [fam.params_of_values([x], sc.T) for x in xs], "sweep")
    step = xs[1] - xs[0] if len(xs) > 1 else (d.hi - d.lo)
    for i in sorted(range(len(xs)), key=lambda i: -scores[i])[: sc.budget.refine]:
        lo, hi = max(d.lo, xs[i] - step), min(d.hi, xs[i] + step)
        minimize_scalar(lambda x: -sc.score(fam, [fam.params_of_values([x], sc.T)], "refine")[0], bounds=(lo, hi),
                        method="bounded", options={"xatol": step / 64, "maxiter": 8})


def _halving(sc: _Scorer, fam: Family, units, stage):
    """Successive halving over seeds: every point on 1 seed, the best quarter on 2, the best
    16 on the search seeds (common random numbers: the same first seeds for all). Returns
    the survivors' unit points, best first."""
    pts = list(units)
    seeds, keep = 1, len(pts)
    while seeds < sc.budget.search_seeds and keep > 16:
        scores = sc.ev.means([(fam.adversary, fam.params(u, sc.T)) for u in pts], seeds)
        keep = max(16, len(pts) // 4)
        pts = [pts[i] for i in sorted(range(len(pts)), key=lambda i: -scores[i])[:keep]]
        seeds *= 2
    scores = sc.score(fam, [fam.params(u, sc.T) for u in pts], stage)
    return [pts[i] for i in sorted(range(len(pts)), key=lambda i: -scores[i])]


def _evolve(sc: _Scorer, fam: Family, init, seed):
    """scipy's differential evolution from the population ``init`` (unit points), on the
    search seeds, each generation scored as one batch."""
    from scipy.optimize import differential_evolution

    def batch(func, xs):
        xs = [np.clip(np.asarray(x, dtype=float), 0.0, 1.0) for x in xs]
        return [-s for s in sc.score(fam, [fam.params(x, sc.T) for x in xs], "evolve")]

    differential_evolution(lambda x: 0.0, [(0.0, 1.0)] * len(fam.dims), init=np.asarray(init, dtype=float),
                           maxiter=sc.budget.generations, seed=seed, polish=False, updating="deferred",
                           workers=batch, tol=0.0)


def _design(d, n, seed):
    from scipy.stats import qmc

    return [tuple(u) for u in qmc.Sobol(d, scramble=True, seed=seed).random_base2(max(0, (n - 1).bit_length()))]


def _families(names, forecaster, T, ranges=None):
    """The families searched: those named (a pair the engine refuses is an error naming both), or
    every family, but for a forecaster that needs the round's true mean (spr) only those whose
    adversary states one."""
    from fastcdl.online import plugins, registry

    ranges = ranges or {}
    fspec = registry.forecaster(forecaster)
    fams = []
    for n in names or FAMILIES:
        f = family_for(n, forecaster, T, ranges=ranges.get(n))
        if names:
            plugins.check_pairing(fspec, registry.adversary(f.adversary))
        elif not _plays(fspec, f.adversary):
            continue
        fams.append(f)
    return [f for f in fams if f.max_T is None or T <= f.max_T]


def _plays(fspec, adversary) -> bool:
    """False when the forecaster (its spec) needs the round's true mean and the adversary (by
    name) states none: the default families leave it out."""
    from fastcdl.online import registry

    return not fspec.needs_mean or registry.adversary(adversary).true_mean is not None


def search(forecaster, T, store, *, fparams=None, families=None, ranges=None, budget=None, pool=None,
           evaluator=None, previous=None, known=()) -> SearchResult:
    """The adversary among ``families`` (default: all of FAMILIES) that maximises the
    forecaster's mean CDL at horizon T, chosen on the search seeds, reported on fresh seeds.

    Cost, in trials of T rounds (default budget): a 1-D family (8 m + 1 + 3 x 8) x 4; a
    multi-parameter family 128 + 32 x 2 + 16 x 4 + 6 x 16 x 4; a family without parameters
    4; then 12 more seeds for each finalist (the best 8 and the best of each family) and 16
    fresh seeds for the winner.

    Parameters
    ----------
    forecaster : str
        A registered forecaster (or plug-in path).
    T : int
        The horizon.
    store : TrialStore or None
        Where trials are kept and found again (None with an ``evaluator``).
    fparams : dict, optional
        The forecaster's parameters.
    families : list of str, optional
        Names of :data:`FAMILIES` (default: all).
    ranges : dict, optional
        Per family, parameter -> (lo, hi) or {"lo", "hi", "units": "value" | "cells"}.
    budget : Budget, optional
        How much the search spends (default: ``Budget()``).
    pool : optional
        Worker processes for the trials (default: one).
    evaluator : optional
        An object with ``means(cands, seeds)`` in place of simulated trials (tests plant
        synthetic objectives).
    previous : SearchResult, optional
        The search at the horizon below: its best candidates compete too.
    known : sequence, optional
        (family, params) pairs scored as well.

    Returns
    -------
    SearchResult

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown family, forecaster or parameter.

    Examples
    --------
    >>> class Peak:  # a synthetic objective in place of simulated trials: a peak at p = 0.3
    ...     def means(self, cands, seeds, master=None, metric="cdl"):
    ...         return [1.0 - abs(p["p"] - 0.3) for _, p in cands]
    >>> small = Budget(search_seeds=2, final_seeds=3, fresh_seeds=3, refine=1, top=2, finalists=2, deep=2,
    ...                deep_seeds=4)
    >>> r = search("cdl", 2**14, None, families=["bernoulli"], budget=small, evaluator=Peak())
    >>> r.adversary, round(r.params["p"], 3), r.m
    ('bernoulli', 0.3, 14)
    """
    from fastcdl.online import registry

    budget = budget or Budget()
    m = registry.forecaster(forecaster).grid_m(fparams, T)
    ev = evaluator or _Evaluator(forecaster, fparams, T, store, pool or _Pool(1))
    sc = _Scorer(ev, T, budget)
    fams = _families(families, forecaster, T, ranges)
    for k, fam in enumerate(fams):
        if not fam.dims:
            sc.score(fam, [fam.params((), T)], "fixed")
        elif len(fam.dims) == 1:
            _sweep(sc, fam, m)
        else:
            survivors = _halving(sc, fam, _design(len(fam.dims), budget.design, seed=k), "design")
            _evolve(sc, fam, survivors[:16], seed=k)
            _axes(sc, fam, T, m)
            _polish(sc, fam, T)
    if previous is not None:  # the best of the horizon below, carried in grid units, compete too
        for fam in fams:
            if fam.dims:
                sc.score(fam, _carried(fam, previous, T, m, budget.top), "carried")
    _score_known(sc, fams, known)
    return _choose(ev, sc, forecaster, T, fams, m)


def _score_known(sc, fams, known):
    """Adversaries the plan names for this forecaster and horizon (stage "known")."""
    by = {f.adversary: f for f in fams}
    for adversary, params in known:
        if adversary in by:
            sc.score(by[adversary], [dict(params)], "known")


def _carried(fam, previous, T, m, top) -> list[dict]:
    """The candidates of ``fam`` that reached the deepest rung of a search at a smaller
    horizon (best first), then its ``top`` best distinct candidates on the search seeds,
    carried to T (families.carry). The deepest rung's are there because 4 search seeds rank
    a heavy-tailed candidate by luck; the rungs above ranked them on more."""
    mine = [c for c in previous.candidates if c.family == fam.adversary]
    deep = sorted((c for c in mine if c.deep_mean is not None), key=lambda c: -c.deep_mean)
    by_search = sorted(mine, key=lambda c: (-c.search_mean, len(params_json(c.params))))
    carried, n_search = [], 0
    for c in deep + by_search:
        if c.deep_mean is None and n_search == top:
            break
        p = carry(fam, c.params, previous.T, previous.m, T, m)
        if params_json(p) not in [params_json(x) for x in carried]:
            carried.append(p)
            n_search += c.deep_mean is None
    return carried


def _polish(sc: _Scorer, fam: Family, T):
    """Nelder-Mead (scipy) from each of the family's ``polish`` best distinct candidates so
    far, on the search seeds: a simplex of steps 1/20 of each range, at most ``polish_fev``
    evaluations each."""
    from scipy.optimize import minimize

    b = sc.budget
    mine = sorted((c for c in sc.cands.values() if c.family == fam.adversary),
                  key=lambda c: (-c.search_mean, len(params_json(c.params))))[: b.polish]
    for c in mine:
        u0 = np.clip(np.asarray(fam.unit_of_params(c.params, T), dtype=float), 0.0, 1.0)
        simplex = [u0] + [u0 + np.where(np.arange(len(u0)) == i, 0.05 if u0[i] <= 0.5 else -0.05, 0.0)
                          for i in range(len(u0))]

        def objective(u):
            return -sc.score(fam, [fam.params(np.clip(u, 0.0, 1.0), T)], "polish")[0]

        minimize(objective, u0, method="Nelder-Mead",
                 options={"maxfev": b.polish_fev, "initial_simplex": np.array(simplex), "xatol": 1e-4, "fatol": 0.0})


def axis_points(dim: Dim, m, most: int) -> list[float]:
    """The points (unit coordinates, ends included) of an axis sweep of ``dim``: PER_CELL
    points per cell of the grid j/m for a level or an offset, evenly thinned to at most
    ``most``; ``most`` evenly spaced points for any other kind, or without a grid."""
    if dim.kind in ("level", "offset") and m is not None and dim.hi > dim.lo:
        n = max(1, round((dim.hi - dim.lo) * m * PER_CELL))
        n = min(n, most - 1)
    else:
        n = most - 1
    return [k / n for k in range(n + 1)]


def _axes(sc: _Scorer, fam: Family, T, m):
    """Axis sweeps (coordinate ascent) from the family's best candidate so far and from its
    best candidate at least 1/4 of the box away from it in some coordinate (another basin): each parameter in turn swept over its whole range (:func:`axis_points`) with the
    others held, on 1 seed, the best 4 of each axis on the search seeds, moving to the best
    point found; a second pass only if the first moved. Catches optima on the box's faces (a
    half cycle over the horizon, no amplitude) that a design's interior points and the
    evolution's population rarely reach. Cost (default budget): at most 65 trials on 1
    seed and 4 on the search seeds per parameter, pass and start."""
    b = sc.budget

    def unit(c):
        return np.clip(np.asarray(fam.unit_of_params(c.params, T), dtype=float), 0.0, 1.0)

    ranked = sorted((c for c in sc.cands.values() if c.family == fam.adversary),
                    key=lambda c: (-c.search_mean, len(params_json(c.params))))
    starts = ranked[:1] + [c for c in ranked if np.max(np.abs(unit(c) - unit(ranked[0]))) >= 0.25][:1]
    for c in starts:
        score, u = c.search_mean, unit(c)
        for _ in range(b.axis_passes):
            moved = False
            for i, d in enumerate(fam.dims):
                pts = []
                for x in axis_points(d, m, b.axis_points):
                    v = u.copy()
                    v[i] = x
                    pts.append(v)
                screen = sc.ev.means([(fam.adversary, fam.params(v, T)) for v in pts], 1)
                top = [pts[j] for j in sorted(range(len(pts)), key=lambda j: -screen[j])[:4]]
                for v, s in zip(top, sc.score(fam, [fam.params(v, T) for v in top], "axis")):
                    if s > score:
                        score, u, moved = s, v, True
            if not moved:
                break


def _choose(ev, sc, forecaster, T, fams, m) -> SearchResult:
    """The last rungs: the best candidates overall and the best of every family on the final
    seeds, the best few of those on the deepest rung's; its best is the winner, reported on
    fresh seeds."""
    b = sc.budget
    cands = list(sc.cands.values())
    ranked = sorted(cands, key=lambda c: (-c.search_mean, len(params_json(c.params))))
    finalists = {c.key: c for c in ranked[: b.finalists]}
    for fam in fams:
        mine = [c for c in ranked if c.family == fam.adversary]
        if mine:
            finalists.setdefault(mine[0].key, mine[0])
    for c in cands:  # a plan's known candidates always reach the final rung
        if c.stage == "known":
            finalists.setdefault(c.key, c)
    fins = list(finalists.values())
    for c, s in zip(fins, ev.means([(c.family, c.params) for c in fins], b.final_seeds)):
        c.final_mean = s
    # the deepest rung: the best few on deep_seeds search seeds, so that a candidate whose
    # 16 seeds were lucky (a heavy-tailed one) is not chosen for its luck
    deep = sorted(fins, key=_final_key, reverse=True)[: b.deep]
    for c, s in zip(deep, ev.means([(c.family, c.params) for c in deep], b.deep_seeds)):
        c.deep_mean = s
    best = max(deep, key=lambda c: (c.deep_mean, _final_key(c)))
    fresh = ev.rows([(best.family, best.params)], b.fresh_seeds, FRESH_MASTER)[0] if hasattr(ev, "rows") else []
    return SearchResult(forecaster, int(T), best.family, best.params, best.deep_mean, fresh, cands, m)


def transfer(forecaster, T, store, previous: SearchResult, *, fparams=None, families=None, ranges=None, budget=None,
             pool=None, evaluator=None, known=()) -> SearchResult:
    """The search at a larger horizon T from a search at a smaller one: the ``top`` best
    candidates of every family are carried in grid units (families.carry) and searched
    locally there (a 1-D family at 8 points per cell within half a cell either side; a
    multi-parameter family at the carried point and 8 Sobol points in a box of one cell,
    or 1/16 of the range, around it), then chosen and reported as :func:`search` does.

    Parameters
    ----------
    forecaster, T, store
        As in :func:`search`.
    previous : SearchResult
        The search at a smaller horizon.
    fparams, families, ranges, budget, pool, evaluator, known
        As in :func:`search`.

    Returns
    -------
    SearchResult

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown family, forecaster or parameter.

    Examples
    --------
    >>> class Peak:  # a synthetic objective in place of simulated trials: a peak at p = 0.3
    ...     def means(self, cands, seeds, master=None, metric="cdl"):
    ...         return [1.0 - abs(p["p"] - 0.3) for _, p in cands]
    >>> small = Budget(search_seeds=2, final_seeds=3, fresh_seeds=3, refine=1, top=2, finalists=2, deep=2,
    ...                deep_seeds=4)
    >>> r = search("cdl", 2**14, None, families=["bernoulli"], budget=small, evaluator=Peak())
    >>> t = transfer("cdl", 2**16, None, r, families=["bernoulli"], budget=small, evaluator=Peak())
    >>> t.T, t.m, t.adversary
    (65536, 24, 'bernoulli')
    """
    from fastcdl.online import registry

    budget = budget or Budget()
    spec = registry.forecaster(forecaster)
    m = spec.grid_m(fparams, T)
    ev = evaluator or _Evaluator(forecaster, fparams, T, store, pool or _Pool(1))
    sc = _Scorer(ev, T, budget)
    fams = _families(families, forecaster, T, ranges)
    for k, fam in enumerate(fams):
        if not fam.dims:
            sc.score(fam, [fam.params((), T)], "fixed")
            continue
        carried = _carried(fam, previous, T, m, budget.top)
        sc.score(fam, carried, "carried")
        for j, p in enumerate(carried):
            u0 = np.asarray(fam.unit_of_params(p, T))
            half = np.array([fam.cell_width(d, m) / 2 if d.kind in ("level", "offset", "cell") else 1 / 32
                             for d in fam.dims])
            if len(fam.dims) == 1:
                local = [u0 + half * (i / PER_CELL * 2) for i in range(-PER_CELL // 2, PER_CELL // 2 + 1) if i]
            else:
                local = [u0 + half * (2 * np.asarray(v) - 1) for v in _design(len(fam.dims), 8, seed=97 * k + j)]
            local = [tuple(np.clip(u, 0.0, 1.0)) for u in local]
            sc.score(fam, [fam.params(u, T) for u in local], "local")
    _score_known(sc, fams, known)
    return _choose(ev, sc, forecaster, T, fams, m)


def interval(values, *cell) -> tuple[float, float, float]:
    """Mean and 95% interval of the mean over seeds: the rate experiments' studentized
    bootstrap (:func:`fastcdl.experiments.analysis.mean_interval`), its stream seeded by the
    cell's labels, so a cell's interval does not depend on what else was run."""
    from fastcdl.experiments.analysis import _cell_rng, mean_interval

    return mean_interval(values, rng=_cell_rng(FRESH_MASTER, "worst", *cell))


WORST_COLUMNS = ("forecaster", "adversary", "adversary_params", "T", "metric", "mean", "lo", "hi", "n_seeds")
CANDIDATE_COLUMNS = ("forecaster", "T", "m", "stage", "adversary", "adversary_params", "grid", "search_mean_cdl",
                     "search_seeds", "final_mean_cdl", "final_seeds", "deep_mean_cdl", "deep_seeds")
FAMILY_COLUMNS = ("forecaster", "T", "m", "family", "adversary_params", "grid", "final_mean_cdl", "final_seeds",
                  "winner_final_mean_cdl", "ratio_to_winner", "deep_mean_cdl", "is_winner")


def worst_rows(result: SearchResult, metrics=("cdl", "ece", "vcdl", "k2", "ucal")) -> list[dict]:
    """worst.csv rows of a search: each metric's mean over the fresh seeds with its interval."""
    out = []
    for m in metrics:
        mean, lo, hi = interval([r[m] for r in result.fresh], result.forecaster, m, result.T)
        out.append(dict(forecaster=result.forecaster, adversary=result.adversary,
                        adversary_params=json.dumps(result.params, sort_keys=True), T=result.T, metric=m,
                        mean=mean, lo=lo, hi=hi, n_seeds=len(result.fresh)))
    return out


def family_rows(result: SearchResult, final_seeds: int) -> list[dict]:
    """families.csv rows of a search: the best candidate of every family next to the winner."""
    out = []
    w = result.winner()
    top = w.final_mean if w is not None else result.search_mean
    for fam, c in sorted(result.best_of_families().items(), key=lambda kv: -kv[1].final_mean):
        out.append(dict(forecaster=result.forecaster, T=result.T, m=result.m if result.m is not None else "",
                        family=fam, adversary_params=params_json(c.params),
                        grid=grid_coordinates(FAMILIES[fam], c.params, result.T, result.m) if fam in FAMILIES else "",
                        final_mean_cdl=c.final_mean, final_seeds=final_seeds, winner_final_mean_cdl=top,
                        ratio_to_winner=c.final_mean / top if top > 0 else float("nan"),
                        deep_mean_cdl="" if c.deep_mean is None else c.deep_mean,
                        is_winner=int(fam == result.adversary and c.params == result.params)))
    return out


# -- a grid of searches: the worst-case folder ---------------------------------------------
_BUDGET_KEYS = tuple(f.name for f in fields(Budget))  # the keys a plan file may set


@dataclass(frozen=True)
class WorstPlan:
    """Which searches to run: forecasters, horizons with a full search, horizons reached by
    transfer from the next smaller one (per forecaster), the families searched (default:
    all) and their ranges, and the search's budget (:class:`Budget`)."""

    forecasters: tuple
    search_horizons: tuple
    transfer_horizons: dict = field(default_factory=dict)  # forecaster -> horizons
    families: tuple = ()
    ranges: dict = field(default_factory=dict)  # family -> {parameter: (lo, hi) or {lo, hi, units}}
    budget: Budget = field(default_factory=Budget)
    cross_horizons: tuple = ()  # every forecaster against every forecaster's winner, on fresh seeds
    known: tuple = ()  # (forecaster, T, adversary, params): candidates that compete at that search

    def known_for(self, forecaster, T) -> list:
        return [(a, json.loads(p)) for f, t, a, p in self.known if f == forecaster and t == T]

    @property
    def search_seeds(self):
        return self.budget.search_seeds

    @property
    def fresh_seeds(self):
        return self.budget.fresh_seeds

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
        known = {"name", "description", "forecasters", "search_horizons", "transfer_horizons", "cross_horizons",
                 "families", "ranges", "known", *_BUDGET_KEYS}
        extra = sorted(set(raw) - known)
        if extra:
            raise PresetError(f"worst-case plan: unknown key {extra[0]!r} (keys: {', '.join(sorted(known))})")
        return cls.make(forecasters=raw.get("forecasters", ["cdl"]),
                        search_horizons=[parse_horizon(t, "search_horizons") for t in raw.get("search_horizons", [])],
                        transfer_horizons={k: [parse_horizon(t, "transfer_horizons") for t in v]
                                           for k, v in raw.get("transfer_horizons", {}).items()},
                        cross_horizons=[parse_horizon(t, "cross_horizons") for t in raw.get("cross_horizons", [])],
                        families=raw.get("families", ()), ranges=raw.get("ranges", {}),
                        known=[(k.get("forecaster"), parse_horizon(k.get("T", "?"), "known.T"), k.get("adversary"),
                                k.get("params", {})) for k in raw.get("known", [])],
                        **{k: raw[k] for k in _BUDGET_KEYS if k in raw})

    @classmethod
    def make(cls, *, forecasters, search_horizons, transfer_horizons=None, cross_horizons=(), families=(),
             ranges=None, budget=None, known=(), **budget_fields) -> "WorstPlan":
        """A checked plan (ValueError naming the problem)."""
        from dataclasses import asdict

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
        fields = asdict(budget) if isinstance(budget, Budget) else {}
        fields.update(budget_fields)
        for k, v in fields.items():
            if k not in _BUDGET_KEYS:
                raise ValidationError(k, f"is not a budget key ({', '.join(_BUDGET_KEYS)})")
            check_int(v, k, low=1 if k not in ("search_seeds", "fresh_seeds", "final_seeds", "deep_seeds") else 2)
        b = Budget(**fields)
        if b.deep_seeds < b.final_seeds:
            raise ValidationError("deep_seeds", f"must be at least final_seeds = {b.final_seeds}", value=b.deep_seeds)
        if b.final_seeds < b.search_seeds:
            raise ValidationError("final_seeds", f"must be at least search_seeds = {b.search_seeds}", value=b.final_seeds)
        ranges = dict(ranges or {})
        families = tuple(families or ())
        for fam in ranges:
            if families and fam not in families:
                raise ValidationError("ranges", f"names family {fam!r}, which the plan does not search")
        planned = set(search_horizons) | {T for Ts in transfer_horizons.values() for T in Ts}
        for f in forecasters:  # every family and range checked against every forecaster
            for name in families or FAMILIES:
                family_for(name, f, min(planned), ranges=ranges.get(name))
        for T in cross_horizons:
            if T not in planned:
                raise ValidationError("cross_horizons", f"{T} is not a horizon of the plan")
        checked_known = []
        for f, T, adversary, params in known:
            if f not in forecasters:
                raise ValidationError("known", f"names forecaster {f!r}, which the plan does not search")
            if T not in planned:
                raise ValidationError("known", f"names T = {T}, which is not a horizon of the plan")
            if adversary not in (families or FAMILIES):
                raise ValidationError("known", f"names adversary {adversary!r}, which is not a family of the plan")
            try:
                registry.adversary(adversary).resolve_params(params, T)
            except ValueError as e:
                raise ValidationError("known", f"{adversary} for {f} at T = {T}: {e}") from None
            checked_known.append((f, T, adversary, params_json(params)))
        return cls(tuple(forecasters), tuple(sorted(search_horizons)),
                   {f: tuple(sorted(v)) for f, v in transfer_horizons.items()}, families, ranges, b,
                   cross_horizons=tuple(sorted(cross_horizons)), known=tuple(checked_known))


def run_plan(plan: WorstPlan, out_dir, *, workers=None, scheduler=None, progress=True) -> list[SearchResult]:
    """Run (or resume) every search of the plan into out_dir: trials.sqlite (every trial),
    then worst.csv, families.csv, candidates.csv and the slopes, written atomically once the
    whole plan is done. ``scheduler``: a Dask scheduler address (default: a local pool)."""
    from contextlib import nullcontext
    from pathlib import Path

    from fastcdl.experiments.runner import _connect
    from fastcdl.experiments.packed import unpack
    from fastcdl.experiments.store import TrialStore, run_lock

    out = Path(out_dir)
    results = []
    with _connect(scheduler) if scheduler else nullcontext() as client:
        out.mkdir(parents=True, exist_ok=True)
        with run_lock(out):  # one run per folder at a time (StoreError naming the holder)
            unpack(out)  # a committed folder keeps its store as trials.sqlite.xz
            pool = _Pool(workers, client)
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
    kw = dict(families=plan.families or None, ranges=plan.ranges, budget=plan.budget, pool=pool)
    for f in plan.forecasters:
        last = None
        for T in plan.search_horizons:
            last = search(f, T, store, previous=last, known=plan.known_for(f, T), **kw)
            results.append(last)
            if progress:
                print(_line(last), flush=True)
        for T in plan.transfer_horizons.get(f, ()):
            last = transfer(f, T, store, last, known=plan.known_for(f, T), **kw)
            results.append(last)
            if progress:
                print(_line(last), flush=True)


CROSS_COLUMNS = ("T", "worst_for", "adversary", "adversary_params", "forecaster", "metric", "mean", "lo", "hi",
                 "diff_to_worst_for", "diff_lo", "diff_hi", "n_seeds")


def _write(plan, out, results, cross):
    from fastcdl.experiments.analysis import _atomic_write, _csv_text

    rows = [w for r in results for w in worst_rows(r)]
    b = plan.budget
    cand_rows = [dict(forecaster=r.forecaster, T=r.T, m=r.m if r.m is not None else "", stage=c.stage,
                      adversary=c.family, adversary_params=params_json(c.params),
                      grid=grid_coordinates(FAMILIES[c.family], c.params, r.T, r.m) if c.family in FAMILIES else "",
                      search_mean_cdl=c.search_mean, search_seeds=b.search_seeds,
                      final_mean_cdl="" if c.final_mean is None else c.final_mean,
                      final_seeds="" if c.final_mean is None else b.final_seeds,
                      deep_mean_cdl="" if c.deep_mean is None else c.deep_mean,
                      deep_seeds="" if c.deep_mean is None else b.deep_seeds)
                 for r in results for c in r.candidates]
    fam_rows = [x for r in results for x in family_rows(r, b.final_seeds)]
    files = {out / "worst.csv": _csv_text(rows, WORST_COLUMNS),
             out / "families.csv": _csv_text(fam_rows, FAMILY_COLUMNS),
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
    from fastcdl.experiments.forms import ALL_FORMS, form_fits

    rows = [dict(forecaster_label=r.forecaster, adversary_label="worst", forecaster=r.forecaster,
                 forecaster_params="{}", T=r.T, seed_index=x["seed_index"], **{m: x[m] for m in metrics})
            for r in results for x in r.fresh]
    return analyze(rows, list(metrics), seed=FRESH_MASTER)[1], form_fits(rows, list(metrics), forms=ALL_FORMS)


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
        if metric == "cdl" and any(r["forecaster"] == "cdl" for r in rows):
            from fastcdl.online.forecasters.cdl import expected_cdl_bound

            Ts = sorted({r["T"] for r in rows if r["forecaster"] == "cdl"})
            ax.plot(Ts, [expected_cdl_bound(T) for T in Ts], "k--", lw=1,
                    label="cdl: proven bound on E[CDL] (docs/algorithm1.md)")
            ax.axhline(1.0, color="0.6", lw=0.8, ls=":", label="CDL <= 1 (every forecaster)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (rounds)")
        ax.set_ylabel(f"worst-case mean {metric.upper()}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("The worst adversary found for each forecaster and T: a lower bound on its true worst case "
                 "(mean over fresh seeds, 95% intervals)")
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
    fams = read("families.csv")
    by = {(w["forecaster"], int(w["T"]), w["metric"]): w for w in worst}
    forecasters = list(dict.fromkeys(w["forecaster"] for w in worst))
    lines = ["| forecaster | T | worst adversary found | parameters | CDL (fresh seeds) | ECE (fresh seeds) "
             "| CDL (deepest rung's search seeds) |", "|---|---|---|---|---|---|---|"]
    for f in forecasters:
        for T in sorted({int(w["T"]) for w in worst if w["forecaster"] == f}):
            c, e = by[(f, T, "cdl")], by[(f, T, "ece")]
            score = next(float(x["deep_mean_cdl"]) for x in fams if x["forecaster"] == f and int(x["T"]) == T
                         and x["is_winner"] == "1")
            params = ", ".join(f"{k}={_fmt(v)}" for k, v in json.loads(c["adversary_params"]).items())
            lines.append(f"| {f} | 2^{T.bit_length() - 1} | {c['adversary']} | {params or '-'} | "
                         f"{_fmt(float(c['mean']))} [{_fmt(float(c['lo']))}, {_fmt(float(c['hi']))}] | "
                         f"{_fmt(float(e['mean']))} [{_fmt(float(e['lo']))}, {_fmt(float(e['hi']))}] | {_fmt(score)} |")
    out = ["### Worst adversary found, per forecaster and horizon", "", *lines]
    if fams:
        names = [n for n in FAMILIES if any(x["family"] == n for x in fams)]
        names += sorted({x["family"] for x in fams} - set(names))
        out += ["", "### The best of every family on the final rung (mean CDL over 16 search seeds; "
                "bold: the winner; families.csv)", "",
                "| forecaster | T | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
        for f in forecasters:
            for T in sorted({int(x["T"]) for x in fams if x["forecaster"] == f}):
                cells = {x["family"]: x for x in fams if x["forecaster"] == f and int(x["T"]) == T}
                row = []
                for n in names:
                    x = cells.get(n)
                    v = "-" if x is None else _fmt(float(x["final_mean_cdl"]))
                    row.append(f"**{v}**" if x is not None and x["is_winner"] == "1" else v)
                out.append(f"| {f} | 2^{T.bit_length() - 1} | " + " | ".join(row) + " |")
    if (folder / "validation.csv").is_file():
        val = read("validation.csv")
        out += ["", "### Recall of the search against an exhaustive sweep on the same seeds (validation.csv)", "",
                "| forecaster | T | lowest recall (family) | families at recall >= 0.97 | exhaustive points |",
                "|---|---|---|---|---|"]
        for f in forecasters:
            for T in sorted({int(v["T"]) for v in val if v["forecaster"] == f}):
                vs = [v for v in val if v["forecaster"] == f and int(v["T"]) == T]
                low = min(vs, key=lambda v: float(v["recall"]))
                ok = sum(float(v["recall"]) >= 0.97 for v in vs)
                out.append(f"| {f} | 2^{T.bit_length() - 1} | {float(low['recall']):.4f} ({low['family']}) | "
                           f"{ok} of {len(vs)} | {sum(int(v['points']) for v in vs):,} |")
    probes = [a for a in ("contrarian", "greedy", "lookahead", "cdlahead") if any(x["adversary"] == a for x in cands)]
    search_T = sorted({int(x["T"]) for x in cands if x["stage"] == "sweep"})
    for a in probes:
        out += ["", f"### {a} against every forecaster (mean CDL over the search seeds, from candidates.csv)", "",
                "| forecaster | " + " | ".join(f"2^{T.bit_length() - 1}" for T in search_T) + " |",
                "|---|" + "---|" * len(search_T)]
        for f in forecasters:
            cells = []
            for T in search_T:
                v = [float(x["search_mean_cdl"]) for x in cands if x["forecaster"] == f and int(x["T"]) == T
                     and x["adversary"] == a and x["stage"] == "fixed"]
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


def registry_m(forecaster, T, fparams=None):
    """m of the forecaster's declared grid at horizon T (None: no grid)."""
    from fastcdl.online import registry

    return registry.forecaster(forecaster).grid_m(fparams, T)


def pack_folder(folder) -> Path:
    """trials.sqlite.xz of a worst-case folder (fastcdl.experiments.packed): the bucket tables
    of the fresh-seed runs kept, the search's dropped (their metrics stay)."""
    from pathlib import Path

    from fastcdl.experiments.packed import pack

    fresh = ", ".join(str(trial_seed(FRESH_MASTER, i)) for i in range(64))
    return pack(Path(folder) / "trials.sqlite", f"seed IN ({fresh})")
