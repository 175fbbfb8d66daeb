"""Forecasters of the online game, one round at a time (docs/algorithm1.md).

    f = make_forecaster("cdl", horizon=T, seed=0)
    d = f.forecast()   # Forecast(points, probs, predictions): at most two raw points
    p = f.draw()       # the stated prediction, drawn from d with f's own generator
    f.observe(y)       # y in {0, 1}
    f.stats()          # BucketStats of (p_t, y_t) so far

Each method is a thin wrapper around the compiled kernels of fastcdl._kernels.forecasters;
simulate() runs the same kernels on the same state arrays in one compiled loop, so the two
paths give identical runs for the same seed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from fastcdl._kernels import forecasters as _fk
from fastcdl._kernels import msmwc as _mk
from fastcdl._kernels import simulate as _sk
from fastcdl._kernels.adversaries import BERNOULLI, DRIFT, MARKOV
from fastcdl._kernels.rng import seed_states
from fastcdl._validate import ValidationError, check_outcome, check_seed
from fastcdl.online._params import ConvergenceWarning, resolve_forecaster
from fastcdl.online.adversaries import parameter_vector
from fastcdl.stats import BucketStats

__all__ = ["Forecast", "Forecaster", "make_forecaster"]

_STOCHASTIC_CODES = {"bernoulli": BERNOULLI, "drift": DRIFT, "markov": MARKOV}


@dataclass(frozen=True)
class Forecast:
    """One round's distribution: raw points ptilde, their probabilities, the stated predictions
    (bucket values) and the forecaster's bucket index of each point. At most two entries;
    entries of probability 0 are left out."""

    points: tuple
    probs: tuple
    predictions: tuple
    buckets: tuple

    @property
    def mean_prediction(self) -> float:
        """The expected stated prediction."""
        return float(sum(p * q for p, q in zip(self.probs, self.predictions)))


class Forecaster:
    """Common round protocol: forecast -> draw -> observe. Subclasses own the kernel state."""

    family = ""

    def __init__(self, name: str, horizon: int, seed: int, params: dict, n_values: int):
        self.name = name
        self.horizon = horizon
        self.seed = seed
        self.params = params
        self._rng = seed_states(seed)[0]
        self._n = np.zeros(n_values, dtype=np.int64)
        self._s = np.zeros(n_values, dtype=np.int64)
        self._ctr = np.zeros(4, dtype=np.int64)  # rounds, sum of y, previous y, drawn slot
        self._ctr[2] = -1
        self._pts = np.zeros(2)
        self._probs = np.zeros(2)
        self._bkt = np.zeros(2, dtype=np.int64)
        self._phase = 0  # 0: new round, 1: forecast made, 2: drawn
        self._p = math.nan

    # -- the round protocol -------------------------------------------------------------
    def forecast(self) -> Forecast:
        """This round's distribution (computed once per round)."""
        if self._phase == 0:
            self._forecast()
            self._phase = 1
        keep = [j for j in range(2) if self._probs[j] > 0.0]
        return Forecast(
            points=tuple(float(self._pts[j]) for j in keep),
            probs=tuple(float(self._probs[j]) for j in keep),
            predictions=tuple(float(self._q[self._bkt[j]]) for j in keep),
            buckets=tuple(int(self._bkt[j]) for j in keep),
        )

    def draw(self) -> float:
        """The stated prediction of this round, drawn with the forecaster's generator (once per round)."""
        if self._phase == 0:
            self.forecast()
        if self._phase == 1:
            self._p = float(_fk.draw(self._q, self._probs, self._bkt, self._rng, self._ctr))
            self._phase = 2
        return self._p

    def observe(self, y) -> None:
        """Record this round's outcome y in {0, 1} and update the state."""
        y = check_outcome(y)
        if self._phase != 2:
            raise ValidationError("y", "was observed before draw()",
                                  message="observe(y) before draw(): call forecast() and draw() first in each round")
        self._observe(y)
        self._phase = 0

    @property
    def rounds(self) -> int:
        return int(self._ctr[0])

    def stats(self) -> BucketStats:
        """The bucket table (q, n, s) of the stated predictions so far (empty before any round)."""
        keep = self._n > 0
        if not keep.any():
            empty = np.empty(0)
            return BucketStats(empty, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), empty.copy())
        return BucketStats.from_table(self._q[keep], self._n[keep], self._s[keep])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Forecaster({self.name!r}, horizon={self.horizon}, seed={self.seed}, {args}; rounds={self.rounds})"

    # -- subclass hooks -----------------------------------------------------------------
    def _forecast(self):
        raise NotImplementedError

    def _observe(self, y):
        raise NotImplementedError

    def _simulate(self, T, adversary, trace_p, trace_y):
        raise NotImplementedError


def _adv_buffers():
    return np.zeros(2), np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)


class CDLForecaster(Forecaster):
    """Algorithm 1 (docs/algorithm1.md): MsMwC weights (oracle 'sparse' or 'dense'), step 1 at a sign change."""

    family = "cdl"

    def __init__(self, horizon, seed, params):
        m = params["m"]
        super().__init__("cdl", horizon, seed, params, m)
        self._q = np.arange(1, m + 1) / m
        self._dense = params["oracle"] == "dense"
        K_eta = _mk.n_copies(horizon)
        self._G = np.zeros(m)
        self._Q = np.zeros(m)
        self._eta = np.zeros(K_eta)
        self._logpi = np.zeros(K_eta)
        _mk.copy_rates(m, self._eta, self._logpi)
        self._off = np.zeros(K_eta)
        self._S = np.zeros(K_eta)
        self._terms = np.zeros((m, K_eta) if not self._dense else (0, K_eta))
        if not self._dense:
            _mk.refresh_normaliser(self._G, self._Q, self._eta, self._off, self._S, self._terms)
        self._b = np.zeros(K_eta)
        self._w = np.zeros(K_eta)
        self._c = np.zeros(m if self._dense else 1)
        # delta, lam, ln|c_lo|, ln c_hi, Lam solves stopped at their cap, last step of the latest one
        self._par = np.array([params["delta"], 0.0, math.nan, math.nan, 0.0, 0.0])
        self._capped_seen = 0

    @property
    def K_eta(self) -> int:
        return int(self._eta.shape[0])

    def _report_capped(self, rounds):
        """Warn (ConvergenceWarning) about Lam solves that stopped at their iteration cap since
        the last report; the kernels count them in par[4] instead of stopping the run."""
        capped = int(self._par[4])
        if capped > self._capped_seen:
            new = capped - self._capped_seen
            self._capped_seen = capped
            step = self._par[5]
            how = ("the normaliser evaluated to NaN" if math.isnan(step) else
                   f"it stopped at its cap of {_mk.LAM_MAX_STEPS} Newton/bisection steps, the last "
                   f"step {step:.3g} above the tolerance {_mk.LAM_STEP_TOL:g}")
            warnings.warn(
                ConvergenceWarning(
                    f"cdl forecaster: the MsMwC normaliser Lam did not converge in {new} round(s) "
                    f"(of {rounds} so far): {how}; the bucket weights c of those rounds are approximate"
                ),
                stacklevel=3,
            )

    def _forecast(self):
        _fk.cdl_forecast(self._dense, self._G, self._Q, self._eta, self._logpi, self._off, self._S,
                         self._b, self._w, self._c, self._par, self._pts, self._probs, self._bkt)
        self._report_capped(self.rounds + 1)

    def _observe(self, y):
        _fk.cdl_observe(y, self._dense, self._G, self._Q, self._eta, self._off, self._S, self._terms,
                        self._n, self._s, self._pts, self._bkt, self._ctr)

    def _simulate(self, T, adv, trace_p, trace_y):
        _sk.simulate_cdl(T, self._dense, self._G, self._Q, self._eta, self._logpi, self._off, self._S, self._terms,
                         self._b, self._w, self._c, self._par, self._q, self._n, self._s, self._ctr,
                         self._pts, self._probs, self._bkt, self._rng,
                         adv.code, adv._apar, adv._rng, *_adv_buffers(), trace_p, trace_y)
        self._report_capped(self.rounds)


class KTForecaster(Forecaster):
    """Algorithm 1's step 1 with one Krichevsky-Trofimov coin-bettor per bucket (docs/algorithm1.md, kt)."""

    family = "kt"

    def __init__(self, horizon, seed, params):
        m = params["m"]
        super().__init__("kt", horizon, seed, params, m)
        self._q = np.arange(1, m + 1) / m
        self._G = np.zeros(m)
        self._logW = np.full(m, -math.log(m))
        self._par = np.array([params["delta"], math.nan, math.nan])  # delta, ln|c_lo|, ln c_hi

    def _forecast(self):
        _fk.kt_forecast(self._G, self._logW, self._n, self._par, self._pts, self._probs, self._bkt)

    def _observe(self, y):
        _fk.kt_observe(y, self._G, self._logW, self._n, self._s, self._pts, self._bkt, self._ctr)

    def _simulate(self, T, adv, trace_p, trace_y):
        _sk.simulate_kt(T, self._G, self._logW, self._par, self._q, self._n, self._s, self._ctr,
                        self._pts, self._probs, self._bkt, self._rng,
                        adv.code, adv._apar, adv._rng, *_adv_buffers(), trace_p, trace_y)


class GridForecaster(Forecaster):
    """foster, truthful and frequency: stated values j/m, j = 0..m (docs/algorithm1.md)."""

    family = "grid"
    _KINDS = {"foster": _fk.FOSTER, "truthful": _fk.TRUTHFUL, "frequency": _fk.FREQUENCY}

    def __init__(self, name, horizon, seed, params):
        m = params["m"]
        super().__init__(name, horizon, seed, params, m + 1)
        self._q = np.arange(m + 1) / m
        self._kind = self._KINDS[name]
        if name == "truthful":
            self._fcode = _STOCHASTIC_CODES[params["adversary"]]
            self._fpar = parameter_vector(params["adversary"], params["adversary_params"])
        else:
            self._fcode = -1
            self._fpar = np.zeros(0)

    def _forecast(self):
        _fk.grid_forecast(self._kind, self._fcode, self._fpar, self._q, self._n, self._s, self._ctr,
                          self._pts, self._probs, self._bkt)

    def _observe(self, y):
        _fk.grid_observe(y, self._n, self._s, self._bkt, self._ctr)

    def _simulate(self, T, adv, trace_p, trace_y):
        _sk.simulate_grid(T, self._kind, self._fcode, self._fpar, self._q, self._n, self._s, self._ctr,
                          self._pts, self._probs, self._bkt, self._rng,
                          adv.code, adv._apar, adv._rng, *_adv_buffers(), trace_p, trace_y)


def make_forecaster(name: str, *, horizon: int, seed: int = 0, **params) -> Forecaster:
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
      adversary= one of "bernoulli", "drift", "markov" and adversary_params (simulate
      fills both in); m default max(2, ceil(sqrt T)).
    - "frequency": the grid point nearest to the running mean of y (1/2 at first);
      m default max(2, ceil(sqrt T)). The grid keeps the bucket table O(m).

    An m larger than the horizon is accepted with a :class:`fastcdl.online.ParameterWarning`
    naming m and T: most buckets would never fill (m = 100000 at T = 1024 gives CDL 1.0).
    Should the cdl forecaster's normaliser solve stop at its iteration cap, a
    :class:`fastcdl.online.ConvergenceWarning` says in how many rounds.

    The generator is child 0 of numpy.random.SeedSequence(seed) (make_adversary uses child 1).

    >>> f = make_forecaster("cdl", horizon=1000, seed=1)
    >>> f.forecast().points
    (0.0,)
    """
    params = resolve_forecaster(name, horizon, params)
    seed = check_seed(seed)
    if name == "cdl":
        return CDLForecaster(horizon, seed, params)
    if name == "kt":
        return KTForecaster(horizon, seed, params)
    return GridForecaster(name, horizon, seed, params)
