"""simulate: a whole forecaster x adversary run in compiled code, streaming (see README.md).

Memory is the forecaster's state and bucket table, O(m), whatever T is: no per-round
array is kept. The run calls the same kernels as the per-round API on the same state,
so make_forecaster / make_adversary with the same seed reproduce it round by round.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from fastcdl._validate import ValidationError, check_horizon, check_name
from fastcdl.online._params import FORECASTERS, STOCHASTIC, resolve_adversary
from fastcdl.online.adversaries import make_adversary
from fastcdl.online.forecasters import make_forecaster
from fastcdl.stats import BucketStats

__all__ = ["RunResult", "simulate"]

_WARM = set()


@dataclass(frozen=True, repr=False)
class RunResult:
    """One simulated run: the bucket table of (p_t, y_t), timing, and what was run.

    ``params`` holds the resolved parameters: {"forecaster": {...}, "adversary": {...}}.
    The metric shortcuts (.cdl, .ece, .k2, .vcdl, .ucal) evaluate fastcdl's metrics on .stats.
    """

    stats: BucketStats
    seconds: float
    rounds_per_second: float
    forecaster: str
    adversary: str
    horizon: int
    seed: int
    params: dict

    @property
    def cdl(self) -> float:
        from fastcdl.metrics import cdl

        return cdl(self.stats)

    @property
    def ece(self) -> float:
        from fastcdl.metrics import ece

        return ece(self.stats)

    @property
    def k2(self) -> float:
        from fastcdl.metrics import k2

        return k2(self.stats)

    @property
    def vcdl(self) -> float:
        from fastcdl.metrics import vcdl

        return vcdl(self.stats)

    @property
    def ucal(self) -> float:
        from fastcdl.metrics import ucal

        return ucal(self.stats)

    def __repr__(self) -> str:
        return (f"RunResult({self.forecaster!r} vs {self.adversary!r}, horizon={self.horizon}, seed={self.seed}, "
                f"n_buckets={self.stats.n_buckets}, seconds={self.seconds:.3g}, "
                f"rounds_per_second={self.rounds_per_second:.3g})")


def _build(forecaster, adversary, horizon, seed, forecaster_params, adversary_params):
    check_name(forecaster, FORECASTERS, "forecaster")
    T = check_horizon(horizon)
    aparams = resolve_adversary(adversary, adversary_params, T)
    fparams = dict(forecaster_params or {})
    if forecaster == "truthful":
        for key in ("adversary", "adversary_params"):
            if key in fparams:
                raise ValidationError(key, "is set by simulate", message=f"{key}: simulate gives the "
                                      "truthful forecaster its adversary; do not pass it")
        if adversary not in STOCHASTIC:
            raise ValidationError("adversary", "must be stochastic", value=adversary,
                                  message=f"adversary: the truthful forecaster needs a stochastic adversary "
                                  f"({', '.join(STOCHASTIC)}), got {adversary!r}")
        fparams.update(adversary=adversary, adversary_params=aparams)
    f = make_forecaster(forecaster, horizon=T, seed=seed, **fparams)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    return f, a


def _warm(f, a):
    """Compile (or load from cache) the family's loop once per process, off the clock."""
    key = f.family
    if key in _WARM:
        return
    g, b = _build(f.name, a.name, f.horizon, 0, {k: v for k, v in f.params.items()
                                                 if k not in ("adversary", "adversary_params", "m_scale")},
                  a.params)
    g._simulate(1, b, np.zeros(0), np.zeros(0, dtype=np.int8))
    _WARM.add(key)


def _run(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, trace):
    f, a = _build(forecaster, adversary, horizon, seed, forecaster_params, adversary_params)
    T = f.horizon
    _warm(f, a)
    if trace:
        trace_p, trace_y = np.zeros(T), np.zeros(T, dtype=np.int8)
    else:
        trace_p, trace_y = np.zeros(0), np.zeros(0, dtype=np.int8)
    t0 = time.perf_counter()
    f._simulate(T, a, trace_p, trace_y)
    seconds = time.perf_counter() - t0
    res = RunResult(
        stats=f.stats(),
        seconds=seconds,
        rounds_per_second=T / seconds if seconds > 0 else float("inf"),
        forecaster=forecaster,
        adversary=adversary,
        horizon=T,
        seed=f.seed,
        params={"forecaster": dict(f.params), "adversary": dict(a.params)},
    )
    return res, trace_p, trace_y


def simulate(forecaster: str, adversary: str, *, horizon: int, seed: int = 0,
             forecaster_params: dict | None = None, adversary_params: dict | None = None) -> RunResult:
    """Run ``forecaster`` against ``adversary`` for ``horizon`` rounds in compiled code.

    Names and parameters are those of make_forecaster and make_adversary (docs/algorithm1.md); for
    "truthful" the adversary (which must be stochastic) is passed to the forecaster.
    The seed fixes the whole run: the forecaster draws from child 0 and the adversary
    from child 1 of numpy.random.SeedSequence(seed), exactly as the per-round API does.
    Cost: O(T log T) for cdl with the sparse oracle (O(T m log T) dense), O(T log m) for
    the others; memory O(m). ``seconds`` excludes JIT compilation.

    >>> res = simulate("cdl", "bernoulli", horizon=2000, seed=1)
    >>> int(res.stats.total)
    2000
    """
    return _run(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, False)[0]


def trace(forecaster: str, adversary: str, *, horizon: int, seed: int = 0,
          forecaster_params: dict | None = None, adversary_params: dict | None = None):
    """simulate, also returning the stated predictions and outcomes of every round (memory O(T)).

    The same compiled loop as simulate, with a trace buffer: for tests and small diagnostics.
    Returns (RunResult, predictions float64[T], outcomes int8[T]).
    """
    return _run(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, True)
