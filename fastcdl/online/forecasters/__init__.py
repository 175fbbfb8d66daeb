"""Forecasters of the online game, one round at a time (docs/algorithm1.md).

    f = make_forecaster("cdl", horizon=T, seed=0)   # or a plug-in (plugin_forecaster)
    d = f.forecast()   # Forecast(points, probs, predictions, buckets, grid): at most two raw points
    p = f.draw()       # the stated prediction, drawn from d with f's own generator
    f.observe(y)       # y in {0, 1}
    f.stats()          # BucketStats of (p_t, y_t) so far

A built-in forecaster's methods run its simulate loop one round at a time
(fastcdl.online.stepping: forecast() is a round paused after the forecast, observe(y) that
round replayed with y), on the same state that simulate() runs, so the two paths give
identical runs for the same seed and the per-round API compiles nothing the loop has not; the
methods of a plug-in (and of spr, whose state holds typed lists) call its forecast and observe
kernels. The built-in forecasters are the modules
of this package (one module each; see fastcdl.online.registry).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fastcdl._compiled.rng import seed_states
from fastcdl._validate import ValidationError, check_outcome, check_real, check_seed
from fastcdl.online import engine, registry
from fastcdl.online.external import new_record, note_external
from fastcdl.online.stepping import PAUSE, Snapshot, given_side, loop_args, stepper
from fastcdl.bucket_table import BucketStats

__all__ = ["Forecast", "Forecaster", "make_forecaster"]


@dataclass(frozen=True)
class Forecast:
    """One round's distribution, as :meth:`Forecaster.forecast` returns it; frozen.

    At most two entries (at most the forecaster's ``support``); entries of probability 0
    are left out.

    Attributes
    ----------
    points : tuple of float
        The raw points ptilde.
    probs : tuple of float
        Their probabilities.
    predictions : tuple of float
        The stated predictions (bucket values).
    buckets : tuple of int
        The bucket index of each point.
    grid : ndarray
        The forecaster's stated values, increasing (read-only); the adversary's public
        table is indexed like it.
    support : int, default 2
        The forecaster's K: the most entries a round of it can have (an adversary shown
        the forecast uses a K-point table when it is above 2).

    Examples
    --------
    >>> fc = make_forecaster("frequency", horizon=100, m=4).forecast()
    >>> fc.predictions, fc.probs, fc.mean_prediction
    ((0.5,), (1.0,), 0.5)
    """

    points: tuple
    probs: tuple
    predictions: tuple
    buckets: tuple
    grid: np.ndarray
    support: int = 2

    @property
    def mean_prediction(self) -> float:
        """The expected stated prediction."""
        return float(sum(p * q for p, q in zip(self.probs, self.predictions)))


class Forecaster:
    """A forecaster's state, generator and public table, driven one round at a time.

    Made by :func:`make_forecaster`. Each round: :meth:`forecast` (the distribution, which
    an adversary may see), :meth:`draw` (the stated prediction), :meth:`observe` (the
    outcome). The same compiled loop as :func:`fastcdl.online.simulate`, a round at a time,
    on the same state.

    Attributes
    ----------
    spec : ForecasterSpec
        What is run.
    name : str
        Its name.
    horizon : int
        T.
    seed : int
        The run's seed.
    params : dict
        The resolved parameters.
    state
        The forecaster's own state (a namedtuple of arrays for the built-ins).
    table : Table
        The public table of stated values, rounds and outcomes.
    external_record : ExternalRecord or None
        For a forecaster that declares ``needs_external``: the external forecasts it was shown,
        with their outcomes, by bins of b (:mod:`fastcdl.online.external`); None otherwise.

    Examples
    --------
    >>> f = make_forecaster("frequency", horizon=10, m=4)
    >>> for y in (1, 1, 0):
    ...     _ = f.forecast(); p = f.draw(); f.observe(y)
    >>> f.rounds, f.stats().counts.tolist()
    (3, [1, 2])
    """

    def __init__(self, spec, horizon: int, seed: int, params: dict, adversary=None, pseudo: bool = True):
        self.spec = spec
        self.name = spec.name
        self.horizon = horizon
        self.seed = seed
        self.params = params
        if adversary is not None:  # the adversary's par as the run's adversary will have it (same seed)
            aspec, aparams = adversary
            adversary = (aspec, aparams, aspec.run_vector(aparams, seed_states(seed)[1]))
        self.state, q = spec.init(horizon, params, adversary)
        # keeping the expected-count table, unless it is the public table (point masses)
        self.out = engine.new_draw(spec.slots(params), len(q) if pseudo and not spec.point_mass else 0)
        self.table = engine.new_table(q, self.out)
        self._grid = self.table.q.view()
        self._grid.setflags(write=False)
        self._rng = seed_states(seed)[0]
        self.hist = engine.History(0, 0, -1)
        self.slot = -1  # the slot drawn this round
        self._phase = 0  # 0: new round, 1: forecast made, 2: drawn
        self._p = math.nan
        self._reported = 0
        # the calibeating game: the external forecasts seen, with their outcomes (engine notes them)
        self.external_record = new_record() if spec.needs_external else None
        self._b = math.nan  # this round's external forecast
        self._side = math.nan  # this round's true mean or external forecast, for the loop
        # a built-in runs its loop a round at a time (fastcdl.online.stepping); a plug-in (whose
        # forecast may draw from numba's global generator) or a state a snapshot cannot hold (spr's
        # typed lists) calls the kernels
        self._stepped = spec.loop is not None and Snapshot.of(self.state, self.table, self.out) is not None
        self._before = None  # the state's arrays before this round's forecast
        self._rng_before = None  # the generator before this round's draw
        self._runs = {}  # the loop's machine code for a paused and a replayed round

    # -- the round protocol -------------------------------------------------------------
    def forecast(self, mean=None, external=None) -> Forecast:
        """This round's distribution (computed once per round).

        Parameters
        ----------
        mean : float, optional
            The round's true mean e_t = P(y_t = 1 | past), in [0, 1]: needed by (and only
            taken by) a forecaster whose spec declares ``needs_mean`` (spr), as the
            adversary states it (:meth:`fastcdl.online.Adversary.mean`). Read in the
            round's first call.
        external : float, optional
            The round's external forecast b_t, in [0, 1]: needed by (and only taken by) a
            forecaster that declares ``needs_external`` (the calibeating game,
            docs/calibeating.md), as the environment states it
            (:meth:`fastcdl.online.Adversary.external`). Read in the round's first call and
            noted with the outcome in ``external_record``.

        Returns
        -------
        Forecast

        Raises
        ------
        ValidationError
            (a ValueError) for a mean or external forecast missing where it is needed,
            given where it is not, or outside [0, 1].

        Examples
        --------
        >>> make_forecaster("cdl", horizon=1000, seed=1).forecast().points
        (0.0,)
        >>> make_forecaster("spr", horizon=1024).forecast(mean=0.3).predictions
        (0.25,)
        """
        if self._phase == 0:
            if external is not None and not self.spec.needs_external:
                raise ValidationError(
                    "external",
                    f"is not taken by forecaster {self.name!r} (it does not declare needs_external)",
                    value=external,
                )
            if self.spec.needs_external:
                if external is None:
                    raise ValidationError(
                        "external",
                        "is needed",
                        message=f"external: the {self.name} forecaster plays the calibeating game and needs the "
                        "round's external forecast: forecast(external=adversary.external()) before draw()",
                    )
                self._b = check_real(external, "external", 0.0, 1.0)
                self._forecast(self._b)
            elif self.spec.needs_mean:
                if mean is None:
                    raise ValidationError(
                        "mean",
                        "is needed",
                        message=f"mean: the {self.name} forecaster needs "
                        "the round's true mean: forecast(mean=adversary.mean()) before draw()",
                    )
                self._forecast(check_real(mean, "mean", 0.0, 1.0))
            elif mean is not None:
                raise ValidationError(
                    "mean", f"is not taken by forecaster {self.name!r} (it does not declare needs_mean)", value=mean
                )
            else:
                self._forecast(None)
            self._report(self.rounds + 1)
            self._phase = 1
        out, q = self.out, self.table.q
        keep = [j for j in range(out.probs.shape[0]) if out.probs[j] > 0.0]
        return Forecast(
            points=tuple(float(out.points[j]) for j in keep),
            probs=tuple(float(out.probs[j]) for j in keep),
            predictions=tuple(float(q[out.buckets[j]]) for j in keep),
            buckets=tuple(int(out.buckets[j]) for j in keep),
            grid=self._grid,
            support=int(self.out.probs.shape[0]),
        )

    def draw(self) -> float:
        """The stated prediction of this round, drawn with the forecaster's generator (once per round).

        Returns
        -------
        float
            p_t, one of the stated values.

        Examples
        --------
        >>> make_forecaster("frequency", horizon=10, m=4).draw()
        0.5
        """
        if self._phase == 0:
            self.forecast()
        if self._phase == 1:
            draw = engine.draw_slot_k if self.out.probs.shape[0] > 2 else engine.draw_slot
            if self._stepped:  # the replay draws again, from the generator as it is now
                self._rng_before = self._rng.copy()
            self.slot = int(draw(self.out, self._rng))
            self._p = float(self.table.q[self.out.buckets[self.slot]])
            self._phase = 2
        return self._p

    def observe(self, y) -> None:
        """Record this round's outcome y in {0, 1} and update the state.

        Parameters
        ----------
        y : int
            0 or 1.

        Raises
        ------
        ValidationError
            (a ValueError) for an outcome other than 0 or 1, or a call before :meth:`draw`.

        Examples
        --------
        >>> f = make_forecaster("frequency", horizon=10, m=4)
        >>> p = f.draw(); f.observe(1); f.rounds
        1
        """
        y = check_outcome(y)
        if self._phase != 2:
            raise ValidationError(
                "y",
                "was observed before draw()",
                message="observe(y) before draw(): call forecast() and draw() first in each round",
            )
        if self._stepped:
            self._before.restore()  # the state before the forecast, which the replay makes again
            self._rng[:] = self._rng_before  # and the generator before the draw, which it draws again
            hist = self._play("replay", y)
            if hist.t != self.hist.t + 1:
                raise AssertionError(f"the replayed round ended at {hist}, after {self.hist}")
            self.hist = hist
        else:
            self.spec.observe(self.state, self.table, self.hist, self.out, self.slot, y)
            if self.external_record is not None:
                note_external(self.external_record, self._b, y)
            self.hist = engine.settle(self.table, self.out, self.slot, y, self.hist)
        self._before = None
        self._phase = 0

    def _forecast(self, side) -> None:
        """Write this round's distribution into ``out``; ``side`` is the round's true mean or
        external forecast (None for a forecaster that takes neither)."""
        if not self._stepped:
            extra = () if side is None else (side,)
            self.spec.forecast(self.state, self.table, self.hist, self.out, *extra)
            return
        self._side = math.nan if side is None else side
        self._before = Snapshot.of(self.state, self.table, self.out)
        hist = self._play("pause", 0)
        if not (hist.t == -(self.hist.t + 1) and hist.prev_y == PAUSE):
            raise AssertionError(f"the paused round ended at {hist}, after {self.hist}")

    def _play(self, which, y):
        """One round of the forecaster's loop against the stepping adversary ``which`` ("pause":
        the generator is a copy, as the loop draws after the answer; "replay": the outcome y).
        The loop's machine code is looked up once per forecaster and kind (its types do not change)."""
        rng = self._rng if which == "replay" else self._rng.copy()
        par = np.array([float(y), self._side])
        side = None if self.spec.side_input is None else given_side()
        k = self.out.probs.shape[0] > 2
        args, compile_ = loop_args(
            self, 1, rng, stepper(which, k), par, _NO_RNG, side, self.external_record, _NO_TRACE_P, _NO_TRACE_Y
        )
        run = self._runs.get(which)
        if run is None:
            run = self._runs[which] = compile_()
        return run(*args)

    @property
    def rounds(self) -> int:
        """Rounds observed so far."""
        return int(self.hist.t)

    def stats(self) -> BucketStats:
        """The bucket table (q, n, s) of the stated predictions so far (empty before any round).

        Returns
        -------
        BucketStats

        Examples
        --------
        >>> make_forecaster("frequency", horizon=10, m=4).stats().n_buckets
        0
        """
        q, n, s = self.table.q, self.table.n, self.table.s
        keep = n > 0
        if not keep.any():
            empty = np.empty(0)
            return BucketStats(empty, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), empty.copy())
        return BucketStats.from_table(q[keep], n[keep], s[keep])

    def pseudo_stats(self) -> BucketStats:
        """The expected-count table so far: per stated value j, the weight sum_t P_t(j) and
        the weighted outcomes sum_t P_t(j) y_t, P_t each round's distribution (a weighted
        BucketStats over the values of positive weight; empty before any round).

        The pseudo measures (pseudo_ece, pseudo_k2, pseudo_klcal, pseudo_cdl;
        docs/pseudo.md) are the table measures of it.

        Returns
        -------
        BucketStats

        Examples
        --------
        >>> f = make_forecaster("ftpl", horizon=10, m=4)
        >>> p = f.draw(); f.observe(1)
        >>> f.pseudo_stats().counts.tolist(), f.pseudo_stats().positives.tolist()
        ([1.0], [1.0])
        """
        return pseudo_table(self.table, self.out, self.spec.point_mass)

    def _report(self, rounds):
        if self.spec.report is not None:
            self._reported = self.spec.report(self.state, rounds, self._reported)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Forecaster({self.name!r}, horizon={self.horizon}, seed={self.seed}, {args}; rounds={self.rounds})"


_NO_RNG = np.zeros(4, dtype=np.uint64)  # the stepping adversaries draw nothing
_NO_TRACE_P, _NO_TRACE_Y = np.zeros(0), np.zeros(0, dtype=np.int8)


def pseudo_table(table, out, point_mass=False) -> BucketStats:
    """The weighted BucketStats of the expected-count table: weights n_j + pw_j and outcomes
    s_j + pwy_j over the stated values (engine.keep_pseudo keeps the difference from the
    public table); for a point-mass forecaster (no difference kept) n_j and s_j as floats,
    the same numbers bit for bit; values of zero weight left out; empty when nothing is kept."""
    if point_mass:
        w, wy = table.n.astype(np.float64), table.s.astype(np.float64)
    elif out.pw.shape[0] == 0:
        empty = np.empty(0)
        return BucketStats(empty, empty.copy(), empty.copy(), empty.copy())
    else:
        w = table.n + out.pw
        wy = table.s + out.pwy
    keep = w > 0
    if not keep.any():
        empty = np.empty(0)
        return BucketStats(empty, empty.copy(), empty.copy(), empty.copy())
    return BucketStats.from_table(table.q[keep], w[keep], wy[keep])


def make_forecaster(forecaster, *, horizon: int, seed: int = 0, adversary=None, **params) -> Forecaster:
    """A forecaster for a run of ``horizon`` rounds, its generator seeded by ``seed``.

    The generator is child 0 of numpy.random.SeedSequence(seed) (make_adversary uses child 1).

    Parameters
    ----------
    forecaster : str or ForecasterSpec
        A name below, a ForecasterSpec from :func:`plugin_forecaster`, or
        "package.module:ATTRIBUTE".
    horizon : int
        T, the number of rounds; defaults of the parameters depend on it.
    seed : int, default 0
        Seeds the forecaster's generator.
    adversary : str or tuple, optional
        (name, params) of the adversary, for the forecasters that need it ("truthful").
    **params
        The forecaster's parameters, below.

    Returns
    -------
    Forecaster

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown name or parameter, a bad value, or an adversary given
        to a forecaster that takes none (or missing for one that needs it).

    Warns
    -----
    ParameterWarning
        For an m larger than the horizon: most buckets would never fill (m = 100000 at
        T = 1024 gives CDL 1.0).
    ConvergenceWarning
        Should the cdl forecaster's normaliser solve stop at its iteration cap; says in how
        many rounds.

    Notes
    -----
    Names and parameters (docs/algorithm1.md; defaults depend on T = horizon):

    - "cdl": Algorithm 1 with the MsMwC oracle. oracle="sparse" (O(log T) per round) or
      "dense" (the direct O(m K_eta) reference); m buckets (default
      max(2, ceil(m_scale sqrt(T) / ln T)), m_scale default 1; give m or m_scale, not
      both); delta, the distance of the second raw point past the bucket boundary (default
      min(1/T, 1/m); any 0 < delta <= 1/m is accepted, and the step-1 guarantee per round
      is delta, so delta <= 1/T is what the theory asks for).
    - "kt": the same with KT coin-bettors; m, m_scale, delta as for cdl.
    - "foster": Foster's forecaster on the grid j/m, j = 0..m; m default ceil(T^(1/3)).
    - "truthful": states the grid point nearest to the adversary's P(y = 1); needs
      adversary= (name, params) of "bernoulli", "drift", "markov", "segments" or
      "budget" (simulate fills it in); m default max(2, ceil(sqrt T)).
    - "frequency": the grid point nearest to the running mean of y (1/2 at first);
      m default max(2, ceil(sqrt T)). The grid keeps the bucket table O(m).
    - "ftpl": follow the perturbed leader: the running mean of y (1/2 at first) plus a
      uniform one grid cell wide, rounded to j/m; m default max(2, ceil(sqrt(T / ln T)))
      (docs/ftpl.md).
    - "klcal": the pseudo KL-calibration forecaster (Luo, Senapati, Sharan 2025): K + 1
      grid points in (0, 1), Laplace experts, randomized rounding, a stationary
      distribution; k default max(2, ceil((T / ln T)^(1/3))); rounds over up to K + 1
      values, so its adversaries must declare k_points (docs/klcal.md).
    - "l2cal": the pseudo l2-calibration forecaster (Fishelson, Kleinberg, Okoroafor, Paes Leme,
      Schneider, Teng 2025): grid j/k, gradient-descent experts on the squared loss, rounding
      with the expert's mean, a stationary distribution; k default max(2, ceil(T^(1/3)));
      rounds over up to k + 1 values, so its adversaries must declare k_points (docs/l2cal.md).
    - "spr": sign preservation with reuse (Dai & Fishelson 2026): needs the round's true
      mean, ``forecast(mean=...)``; plays the adversaries that declare true_mean
      (docs/spr.md).
    - "noisy": a base forecaster (base=, a registered name, default "acrs") post-processed by
      Laplace noise of scale sigma = sqrt(eps) (eps default 1/sqrt(T)) on the grid j/m,
      m = ceil(1/sigma); K-point rounds (docs/noisy.md).
    - "calibeat" and "ops": the calibeating game (docs/calibeating.md, docs/ops.md): they
      need the round's external forecast, ``forecast(external=...)``, and play the
      adversaries that declare external (informed).
    - a ForecasterSpec from fastcdl.online.plugin_forecaster, or "package.module:ATTRIBUTE".

    Examples
    --------
    >>> f = make_forecaster("cdl", horizon=1000, seed=1)
    >>> f.forecast().points
    (0.0,)
    """
    spec = registry.forecaster(forecaster)
    resolved = spec.resolve_params(params, horizon)
    seed = check_seed(seed)
    pair = None
    if spec.needs_adversary:
        if adversary is None:
            raise ValidationError(
                "adversary",
                "is needed",
                message=f"adversary: the {spec.name} forecaster needs "
                "adversary=(name, params) of the adversary it plays against",
            )
        name, aparams = adversary if isinstance(adversary, tuple) else (adversary, {})
        aspec = registry.adversary(name)
        pair = (aspec, aspec.resolve_params(aparams, horizon))
    elif adversary is not None:
        raise ValidationError("adversary", f"is not a parameter of forecaster {spec.name!r}")
    return Forecaster(spec, int(horizon), seed, resolved, pair)
