"""Forecasters of the online game, one round at a time (docs/algorithm1.md).

    f = make_forecaster("cdl", horizon=T, seed=0)   # or a plug-in (plugin_forecaster)
    d = f.forecast()   # Forecast(points, probs, predictions, buckets, grid): at most two raw points
    p = f.draw()       # the stated prediction, drawn from d with f's own generator
    f.observe(y)       # y in {0, 1}
    f.stats()          # BucketStats of (p_t, y_t) so far

Each method calls the forecaster's compiled kernels (its spec's forecast and observe) and
the engine's draw, on the same state that simulate() runs in one compiled loop, so the
two paths give identical runs for the same seed. The built-in forecasters are the modules
of this package (one module each; see fastcdl.online.registry).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fastcdl._kernels.rng import seed_states
from fastcdl._validate import ValidationError, check_outcome, check_seed
from fastcdl.online import engine, registry
from fastcdl.stats import BucketStats

__all__ = ["Forecast", "Forecaster", "make_forecaster"]


@dataclass(frozen=True)
class Forecast:
    """One round's distribution: raw points ptilde, their probabilities, the stated predictions
    (bucket values), the bucket index of each point, and the forecaster's stated values
    (``grid``, increasing; the adversary's public table is indexed like it). At most two
    entries; entries of probability 0 are left out."""

    points: tuple
    probs: tuple
    predictions: tuple
    buckets: tuple
    grid: np.ndarray

    @property
    def mean_prediction(self) -> float:
        """The expected stated prediction."""
        return float(sum(p * q for p, q in zip(self.probs, self.predictions)))


class Forecaster:
    """A forecaster's state, generator and public table, driven one round at a time."""

    def __init__(self, spec, horizon: int, seed: int, params: dict, adversary=None):
        self.spec = spec
        self.name = spec.name
        self.horizon = horizon
        self.seed = seed
        self.params = params
        if adversary is not None:  # the adversary's par as the run's adversary will have it (same seed)
            aspec, aparams = adversary
            adversary = (aspec, aparams, aspec.run_vector(aparams, seed_states(seed)[1]))
        self.state, q = spec.init(horizon, params, adversary)
        self.table = engine.new_table(q)
        self._grid = self.table.q.view()
        self._grid.setflags(write=False)
        self._rng = seed_states(seed)[0]
        self.out = engine.new_draw()
        self.hist = engine.History(0, 0, -1)
        self.slot = -1  # the slot drawn this round
        self._phase = 0  # 0: new round, 1: forecast made, 2: drawn
        self._p = math.nan
        self._reported = 0

    # -- the round protocol -------------------------------------------------------------
    def forecast(self) -> Forecast:
        """This round's distribution (computed once per round)."""
        if self._phase == 0:
            self.spec.forecast(self.state, self.table, self.hist, self.out)
            self._report(self.rounds + 1)
            self._phase = 1
        out, q = self.out, self.table.q
        keep = [j for j in range(2) if out.probs[j] > 0.0]
        return Forecast(
            points=tuple(float(out.points[j]) for j in keep),
            probs=tuple(float(out.probs[j]) for j in keep),
            predictions=tuple(float(q[out.buckets[j]]) for j in keep),
            buckets=tuple(int(out.buckets[j]) for j in keep),
            grid=self._grid,
        )

    def draw(self) -> float:
        """The stated prediction of this round, drawn with the forecaster's generator (once per round)."""
        if self._phase == 0:
            self.forecast()
        if self._phase == 1:
            self.slot = int(engine.draw_slot(self.out, self._rng))
            self._p = float(self.table.q[self.out.buckets[self.slot]])
            self._phase = 2
        return self._p

    def observe(self, y) -> None:
        """Record this round's outcome y in {0, 1} and update the state."""
        y = check_outcome(y)
        if self._phase != 2:
            raise ValidationError("y", "was observed before draw()",
                                  message="observe(y) before draw(): call forecast() and draw() first in each round")
        self.spec.observe(self.state, self.table, self.hist, self.out, self.slot, y)
        self.hist = engine.settle(self.table, self.out, self.slot, y, self.hist)
        self._phase = 0

    @property
    def rounds(self) -> int:
        return int(self.hist.t)

    def stats(self) -> BucketStats:
        """The bucket table (q, n, s) of the stated predictions so far (empty before any round)."""
        q, n, s = self.table.q, self.table.n, self.table.s
        keep = n > 0
        if not keep.any():
            empty = np.empty(0)
            return BucketStats(empty, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), empty.copy())
        return BucketStats.from_table(q[keep], n[keep], s[keep])

    def _report(self, rounds):
        if self.spec.report is not None:
            self._reported = self.spec.report(self.state, rounds, self._reported)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Forecaster({self.name!r}, horizon={self.horizon}, seed={self.seed}, {args}; rounds={self.rounds})"


def make_forecaster(forecaster, *, horizon: int, seed: int = 0, adversary=None, **params) -> Forecaster:
    """A forecaster for a run of ``horizon`` rounds, its generator seeded by ``seed``.

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
    - a ForecasterSpec from fastcdl.online.plugin_forecaster, or "package.module:ATTRIBUTE".

    An m larger than the horizon is accepted with a :class:`fastcdl.online.ParameterWarning`
    naming m and T: most buckets would never fill (m = 100000 at T = 1024 gives CDL 1.0).
    Should the cdl forecaster's normaliser solve stop at its iteration cap, a
    :class:`fastcdl.online.ConvergenceWarning` says in how many rounds.

    The generator is child 0 of numpy.random.SeedSequence(seed) (make_adversary uses child 1).

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
            raise ValidationError("adversary", "is needed", message=f"adversary: the {spec.name} forecaster needs "
                                  "adversary=(name, params) of the adversary it plays against")
        name, aparams = adversary if isinstance(adversary, tuple) else (adversary, {})
        aspec = registry.adversary(name)
        pair = (aspec, aspec.resolve_params(aparams, horizon))
    elif adversary is not None:
        raise ValidationError("adversary", f"is not a parameter of forecaster {spec.name!r}")
    return Forecaster(spec, int(horizon), seed, resolved, pair)
