"""Online calibration: Algorithm 1 (the CDL forecaster), baselines, adversaries (docs/algorithm1.md).

    f = make_forecaster("cdl", horizon=T, seed=0)       # per-round API
    a = make_adversary("greedy", horizon=T, seed=0)
    for t in range(T):
        d = f.forecast(); y = a.respond(d); p = f.draw(); f.observe(y); a.observe(p, y)
    res = simulate("cdl", "greedy", horizon=T, seed=0)  # the same run, compiled
    res.stats == f.stats()                               # True

Forecasters: cdl (oracle "sparse" | "dense"), foster, kt, truthful, frequency.
Adversaries: bernoulli, drift, markov, contrarian, greedy.
"""

from fastcdl.online._params import (
    ADVERSARIES,
    FORECASTERS,
    ConvergenceWarning,
    OnlineWarning,
    ParameterWarning,
)
from fastcdl.online.adversaries import Adversary, make_adversary
from fastcdl.online.forecasters import Forecast, Forecaster, make_forecaster
from fastcdl.online.minimax import MinimaxSolution, minimax
from fastcdl.online.simulate import RunResult, simulate

__all__ = [
    "ADVERSARIES",
    "FORECASTERS",
    "Adversary",
    "ConvergenceWarning",
    "Forecast",
    "Forecaster",
    "MinimaxSolution",
    "OnlineWarning",
    "ParameterWarning",
    "RunResult",
    "make_adversary",
    "make_forecaster",
    "minimax",
    "simulate",
]
