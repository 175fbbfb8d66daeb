"""Adversaries of the online game, one round at a time (docs/algorithm1.md).

    a = make_adversary("greedy", horizon=T, seed=0)
    y = a.respond(f.forecast())   # sees the round's distribution, never the draw
    a.observe(p, y)               # the public record: stated prediction and outcome

respond() calls the same compiled kernel (fastcdl._kernels.adversaries.adversary_outcome)
that simulate() calls, with the same inputs, so a Python-driven run reproduces simulate.
"""

from __future__ import annotations

import numpy as np

from fastcdl._kernels import adversaries as _ak
from fastcdl._kernels.rng import seed_states
from fastcdl._validate import ValidationError, check_seed
from fastcdl.online._params import resolve_adversary

__all__ = ["Adversary", "make_adversary"]

CODES = {
    "bernoulli": _ak.BERNOULLI,
    "drift": _ak.DRIFT,
    "markov": _ak.MARKOV,
    "contrarian": _ak.CONTRARIAN,
    "greedy": _ak.GREEDY,
}
_ORDER = {
    "bernoulli": ("p",),
    "drift": ("amplitude", "period"),
    "markov": ("p01", "p10"),
    "contrarian": (),
    "greedy": (),
}


def parameter_vector(name: str, params: dict) -> np.ndarray:
    """The kernel's apar vector of a resolved parameter dict."""
    return np.array([params[k] for k in _ORDER[name]], dtype=np.float64)


class Adversary:
    """An adversary with its own generator and its record of the public history.

    The record is, per stated prediction value, the number of rounds and of those with
    y = 1, plus the round number and the previous outcome: everything the adversaries of
    docs/algorithm1.md may use.
    """

    def __init__(self, name: str, params: dict, seed: int):
        self.name = name
        self.params = params
        self.seed = seed
        self.code = CODES[name]
        self._apar = parameter_vector(name, params)
        self._rng = seed_states(seed)[1]
        self._table = {}
        self._t = 0
        self._prev = -1

    def respond(self, forecast) -> int:
        """The outcome y in {0, 1} for a round whose distribution is ``forecast`` (a Forecast)."""
        k = len(forecast.probs)
        if k not in (1, 2) or len(forecast.predictions) != k:
            raise ValidationError("forecast", "must have one or two entries (probs and predictions)")
        preds = np.zeros(2)
        probs = np.zeros(2)
        n_at = np.zeros(2, dtype=np.int64)
        s_at = np.zeros(2, dtype=np.int64)
        for j in range(2):
            src = j if j < k else 0
            preds[j] = forecast.predictions[src]
            probs[j] = forecast.probs[j] if j < k else 0.0
            n_at[j], s_at[j] = self._table.get(preds[j], (0, 0))
        return int(_ak.adversary_outcome(self.code, self._apar, self._rng, self._t + 1, self._prev,
                                         preds, probs, n_at, s_at))

    def observe(self, p, y) -> None:
        """Add the round's stated prediction p and outcome y to the public record."""
        from fastcdl._validate import check_outcome

        y = check_outcome(y)
        p = float(p)
        n, s = self._table.get(p, (0, 0))
        self._table[p] = (n + 1, s + y)
        self._t += 1
        self._prev = y

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Adversary({self.name!r}, seed={self.seed}{args}; rounds={self._t})"


def make_adversary(name: str, *, horizon: int | None = None, seed: int = 0, **params) -> Adversary:
    """An adversary by name with its parameters (docs/algorithm1.md; the names are fixed):

    - "bernoulli": p=0.5, i.i.d. outcomes;
    - "drift": amplitude=0.4 (in [0, 1/2]), period=horizon/8: y ~ Bernoulli(1/2 +
      amplitude sin(2 pi t / period)), t = 1, 2, ...; needs horizon or period;
    - "markov": p01=0.1, p10=0.1, a two-state chain started from its stationary law;
    - "contrarian": y = 1 when the expected stated prediction is below 1/2, else 0;
    - "greedy": the y with the larger expected increase of sum over stated values of
      |bias| (bias = sum of stated prediction minus outcome); ties by a fair coin.

    The generator is child 1 of numpy.random.SeedSequence(seed), so with the same seed a
    forecaster and an adversary made here reproduce simulate(..., seed=seed).

    >>> a = make_adversary("bernoulli", p=0.25, seed=3)
    >>> a.params
    {'p': 0.25}
    """
    params = resolve_adversary(name, params, horizon)
    return Adversary(name, params, check_seed(seed))
