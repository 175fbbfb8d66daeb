"""The worst-case search of one forecaster at one horizon: search, transfer, their budget and results.

The algorithm (coverage, refinement, choice on common seeds, report on fresh seeds) is described
in fastcdl.experiments.worst, the public module, and docs/worst-case.md. Every trial goes
through the rate experiments' store, so a search run again recomputes nothing it stored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl.experiments.families import FAMILIES, PER_CELL, Dim, Family, carry, family_for
from fastcdl.experiments.runner import Trial, run_trial, trial_seed
from fastcdl.experiments.workers import TrialPool
from fastcdl.experiments.store import params_json
from fastcdl.online.versions import algorithm_version

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
        return next(
            (
                c
                for c in self.candidates
                if c.family == self.adversary and c.params == self.params and c.deep_mean is not None
            ),
            None,
        )


def _final_key(c):
    """How finalists are ranked: final-rung mean, then search mean, then the shorter parameters."""
    return (c.final_mean, c.search_mean, -len(params_json(c.params)))


def trial_pool(workers, client=None) -> TrialPool:
    """The pool a search runs its trials on (:class:`fastcdl.experiments.workers.TrialPool`
    running :func:`fastcdl.experiments.runner.run_trial`)."""
    return TrialPool(workers, run_trial, client)


class Evaluator:
    """Mean CDL of (adversary, params) over the first k seed indices, each trial from the
    store or run. ``means`` is the whole interface a search needs (tests plant their own)."""

    def __init__(self, forecaster, fparams, T, store, pool):
        self.forecaster, self.fparams, self.T = forecaster, dict(fparams or {}), int(T)
        self.store, self.pool = store, pool
        self.done = {r["key"]: r for r in store.rows()}

    def trial(self, adversary, params, i, master) -> Trial:
        return Trial(
            self.forecaster,
            self.forecaster,
            params_json(self.fparams),
            adversary,
            adversary,
            params_json(params),
            self.T,
            i,
            trial_seed(master, i),
            algorithm_version(self.forecaster, adversary),
        )

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
        minimize_scalar(
            lambda x: -sc.score(fam, [fam.params_of_values([x], sc.T)], "refine")[0],
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": step / 64, "maxiter": 8},
        )


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

    differential_evolution(
        lambda x: 0.0,
        [(0.0, 1.0)] * len(fam.dims),
        init=np.asarray(init, dtype=float),
        maxiter=sc.budget.generations,
        seed=seed,
        polish=False,
        updating="deferred",
        workers=batch,
        tol=0.0,
    )


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
    """False when the forecaster (its spec) needs the round's true mean or an external forecast
    and the adversary (by name) states none: the default families leave it out."""
    from fastcdl.online import registry

    aspec = registry.adversary(adversary)
    if fspec.needs_mean and aspec.true_mean is None:
        return False
    return not fspec.needs_external or aspec.external is not None


def search(
    forecaster,
    T,
    store,
    *,
    fparams=None,
    families=None,
    ranges=None,
    budget=None,
    pool=None,
    evaluator=None,
    previous=None,
    known=(),
) -> SearchResult:
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
    ev = evaluator or Evaluator(forecaster, fparams, T, store, pool or trial_pool(1))
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
    mine = sorted(
        (c for c in sc.cands.values() if c.family == fam.adversary),
        key=lambda c: (-c.search_mean, len(params_json(c.params))),
    )[: b.polish]
    for c in mine:
        u0 = np.clip(np.asarray(fam.unit_of_params(c.params, T), dtype=float), 0.0, 1.0)
        simplex = [u0] + [
            u0 + np.where(np.arange(len(u0)) == i, 0.05 if u0[i] <= 0.5 else -0.05, 0.0) for i in range(len(u0))
        ]

        def objective(u):
            return -sc.score(fam, [fam.params(np.clip(u, 0.0, 1.0), T)], "polish")[0]

        minimize(
            objective,
            u0,
            method="Nelder-Mead",
            options={"maxfev": b.polish_fev, "initial_simplex": np.array(simplex), "xatol": 1e-4, "fatol": 0.0},
        )


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

    ranked = sorted(
        (c for c in sc.cands.values() if c.family == fam.adversary),
        key=lambda c: (-c.search_mean, len(params_json(c.params))),
    )
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


def transfer(
    forecaster,
    T,
    store,
    previous: SearchResult,
    *,
    fparams=None,
    families=None,
    ranges=None,
    budget=None,
    pool=None,
    evaluator=None,
    known=(),
) -> SearchResult:
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
    ev = evaluator or Evaluator(forecaster, fparams, T, store, pool or trial_pool(1))
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
            half = np.array(
                [fam.cell_width(d, m) / 2 if d.kind in ("level", "offset", "cell") else 1 / 32 for d in fam.dims]
            )
            if len(fam.dims) == 1:
                local = [u0 + half * (i / PER_CELL * 2) for i in range(-PER_CELL // 2, PER_CELL // 2 + 1) if i]
            else:
                local = [u0 + half * (2 * np.asarray(v) - 1) for v in _design(len(fam.dims), 8, seed=97 * k + j)]
            local = [tuple(np.clip(u, 0.0, 1.0)) for u in local]
            sc.score(fam, [fam.params(u, T) for u in local], "local")
    _score_known(sc, fams, known)
    return _choose(ev, sc, forecaster, T, fams, m)


def registry_m(forecaster, T, fparams=None):
    """m of the forecaster's declared grid at horizon T (None: no grid)."""
    from fastcdl.online import registry

    return registry.forecaster(forecaster).grid_m(fparams, T)
