"""simulate: a whole forecaster x adversary run in compiled code, streaming (see README.md).

Memory is the forecaster's state and bucket table, O(m), whatever T is: no per-round
array is kept. The per-round API runs the same loop a round at a time on the same state
(fastcdl.online.stepping), so make_forecaster / make_adversary with the same seed reproduce
it round by round.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from fastcdl._validate import ValidationError, check_horizon, check_seed
from fastcdl.online import engine, plugins, registry, stepping
from fastcdl.online.adversaries import Adversary, not_an_outcome
from fastcdl.online.external import ExternalScore
from fastcdl.online.external import score as score_external
from fastcdl.online.forecasters import Forecaster
from fastcdl.bucket_table import BucketStats

__all__ = ["RunResult", "simulate", "trace"]


@dataclass(frozen=True, repr=False)
class RunResult:
    """One simulated run: the bucket table of (p_t, y_t), timing, and what was run.

    Returned by :func:`simulate` and :func:`trace`; frozen. The metric shortcuts (``.cdl``,
    ``.ece``, ``.k2``, ``.vcdl``, ``.ucal``, ...) evaluate fastcdl's metrics on ``.stats``.

    Attributes
    ----------
    stats : BucketStats
        The bucket table of the stated predictions and the outcomes.
    seconds : float
        Wall time of the run, JIT compilation excluded.
    rounds_per_second : float
        ``horizon / seconds``.
    forecaster, adversary : str
        The names that were run.
    horizon : int
        T, the number of rounds.
    seed : int
        The run's seed.
    params : dict
        The resolved parameters: {"forecaster": {...}, "adversary": {...}}.
    pseudo_stats : BucketStats
        The expected-count table: per stated value j, sum_t P_t(j) (its counts) and
        sum_t P_t(j) y_t (its positives), P_t the forecaster's distribution in round t; a
        weighted table (docs/pseudo.md). The pseudo measures are computed on it. None for
        a run of ``simulate(..., pseudo=False)``, whose pseudo measures raise.

    Examples
    --------
    >>> res = simulate("cdl", "bernoulli", horizon=1000, seed=0)
    >>> res.horizon, res.cdl == res.metric("cdl"), sorted(res.params)
    (1000, True, ['adversary', 'forecaster'])
    """

    stats: BucketStats
    seconds: float
    rounds_per_second: float
    forecaster: str
    adversary: str
    horizon: int
    seed: int
    params: dict
    pseudo_stats: BucketStats | None = None
    external: ExternalScore | None = None

    def metric(self, name: str) -> float:
        """A metric of the run's table by name.

        Parameters
        ----------
        name : str
            One of the trial metrics (fastcdl.trial_measures): "cdl", "vcdl", "ece", "k2",
            "ucal", ...

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            (a ValueError) for an unknown name.

        Examples
        --------
        >>> simulate("cdl", "bernoulli", horizon=1000, seed=0).metric("ece") >= 0
        True
        """
        from fastcdl.trial_measures import METRICS

        if name not in METRICS:
            raise ValidationError("name", f"must be one of {', '.join(METRICS)}", value=name)
        m = METRICS[name]
        if m.of == "pseudo" and self.pseudo_stats is None:
            raise ValidationError(
                "name",
                "is a pseudo measure: this run kept no expected-count table (simulate(..., pseudo=False))",
                value=name,
            )
        return m.value(self.pseudo_stats if m.of == "pseudo" else self.stats)

    def __getattr__(self, name):  # the metric shortcuts: res.cdl, res.ece, ...
        from fastcdl.trial_measures import METRICS

        if name in METRICS:
            return self.metric(name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return (
            f"RunResult({self.forecaster!r} vs {self.adversary!r}, horizon={self.horizon}, seed={self.seed}, "
            f"n_buckets={self.stats.n_buckets}, seconds={self.seconds:.3g}, "
            f"rounds_per_second={self.rounds_per_second:.3g})"
        )


def _build(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, pseudo=True):
    T = check_horizon(horizon)
    seed = check_seed(seed)
    fspec = registry.forecaster(forecaster)
    aspec = registry.adversary(adversary)
    aparams = aspec.resolve_params(adversary_params, T)
    fparams = fspec.resolve_params(forecaster_params, T)
    plugins.check_pairing(fspec, aspec)
    f = Forecaster(fspec, T, seed, fparams, (aspec, aparams) if fspec.needs_adversary else None, pseudo=pseudo)
    a = Adversary(aspec, aparams, seed)
    return f, a


_entry = stepping.entry  # the name the benchmarks import


def _run_loop(f, a, T, trace_p, trace_y):
    """T rounds of f against a in compiled code, continuing their state; returns the seconds."""
    respond = a.spec.compiled(f.out.probs.shape[0] > 2)
    side = f.spec.side_input  # plugins.check_pairing: the adversary states it
    given = a.spec.compiled_mean() if side == "mean" else a.spec.compiled_external() if side == "external" else None
    record = f.external_record if side == "external" else None  # where the loop notes (b_t, y_t)
    run, args = stepping.loop_call(f, T, f._rng, respond, a._par, a._rng, given, record, trace_p, trace_y)
    t0 = time.perf_counter()
    hist = run(*args)
    seconds = time.perf_counter() - t0
    if hist.t < 0 and hist.ones < 0:  # stopped before round -t: its true mean (or b) was no probability
        f.hist = engine.History(-hist.t - 1, int(f.table.s.sum()), hist.prev_y)
        raise a.bad_side_input(f.hist, side)
    if hist.t < 0:  # the loop stopped at round -t, whose answer was not 0 or 1 (engine.stopped)
        # the rounds before it stay recorded (the run is over: the previous outcome is not kept)
        f.hist = engine.History(-hist.t - 1, hist.ones, -1)
        raise not_an_outcome(a.name, -int(hist.t), int(hist.prev_y))
    f.hist = hist
    f._report(f.rounds)
    return seconds


def _run(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, trace, pseudo=True):
    f, a = _build(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, pseudo)
    T = f.horizon
    if trace:
        trace_p, trace_y = np.zeros(T), np.zeros(T, dtype=np.int8)
    else:
        trace_p, trace_y = np.zeros(0), np.zeros(0, dtype=np.int8)
    seconds = _run_loop(f, a, T, trace_p, trace_y)
    res = RunResult(
        stats=f.stats(),
        seconds=seconds,
        rounds_per_second=T / seconds if seconds > 0 else float("inf"),
        forecaster=f.name,
        adversary=a.name,
        horizon=T,
        seed=f.seed,
        params={"forecaster": dict(f.params), "adversary": dict(a.params)},
        pseudo_stats=f.pseudo_stats() if pseudo else None,
        external=None if f.external_record is None else score_external(f.external_record),
    )
    return res, trace_p, trace_y


def simulate(
    forecaster: str,
    adversary: str,
    *,
    horizon: int,
    seed: int = 0,
    forecaster_params: dict | None = None,
    adversary_params: dict | None = None,
    pseudo: bool = True,
) -> RunResult:
    """Run ``forecaster`` against ``adversary`` for ``horizon`` rounds in compiled code.

    Names and parameters are those of :func:`make_forecaster` and :func:`make_adversary`
    (docs/algorithm1.md); for "truthful" the adversary (which must be stochastic) is passed
    to the forecaster. The seed fixes the whole run: the forecaster draws from child 0 and
    the adversary from child 1 of numpy.random.SeedSequence(seed), exactly as the per-round
    API does. Cost: O(T log T) for cdl with the sparse oracle (O(T m log T) dense),
    O(T log m) for the others; memory O(m), whatever T is.

    Parameters
    ----------
    forecaster : str or ForecasterSpec
        A name of :data:`FORECASTERS`, a plug-in (:func:`plugin_forecaster`), or
        "package.module:ATTRIBUTE".
    adversary : str or AdversarySpec
        A name of :data:`ADVERSARIES`, a plug-in (:func:`plugin_adversary`), or
        "package.module:ATTRIBUTE".
    horizon : int
        T, the number of rounds (at least 1).
    seed : int, default 0
        Fixes the whole run.
    forecaster_params, adversary_params : dict, optional
        Parameters by name; those left out take their defaults.
    pseudo : bool, default True
        Keep the expected-count table (``RunResult.pseudo_stats``, the pseudo measures). A
        randomized round adds its distribution to it (docs/pseudo.md has the cost); False
        runs the loop without it, as fast as before the table existed, and the result's
        pseudo measures raise.

    Returns
    -------
    RunResult
        The bucket table, the timing (JIT compilation excluded) and the resolved parameters.

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown name or parameter, or a bad horizon, seed or value.

    See Also
    --------
    trace : the same run, also returning every round's prediction and outcome.

    Examples
    --------
    >>> res = simulate("cdl", "bernoulli", horizon=2000, seed=1)
    >>> int(res.stats.total)
    2000
    """
    return _run(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, False, pseudo)[0]


def trace(
    forecaster: str,
    adversary: str,
    *,
    horizon: int,
    seed: int = 0,
    forecaster_params: dict | None = None,
    adversary_params: dict | None = None,
):
    """:func:`simulate`, also returning the stated predictions and outcomes of every round.

    The same compiled loop as simulate, with a trace buffer (memory O(T)): for tests and
    small diagnostics.

    Parameters
    ----------
    forecaster, adversary, horizon, seed, forecaster_params, adversary_params
        As in :func:`simulate`.

    Returns
    -------
    result : RunResult
        What :func:`simulate` returns for the same arguments.
    predictions : ndarray of float64, shape (T,)
        p_t, the stated prediction of each round.
    outcomes : ndarray of int8, shape (T,)
        y_t.

    Raises
    ------
    ValidationError
        As :func:`simulate`.

    Examples
    --------
    >>> res, p, y = trace("cdl", "bernoulli", horizon=100, seed=0)
    >>> p.shape, int(y.sum()) == int(res.stats.positives.sum())
    ((100,), True)
    """
    return _run(forecaster, adversary, horizon, seed, forecaster_params, adversary_params, True)
