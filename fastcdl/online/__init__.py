"""Online calibration: Algorithm 1 (the CDL forecaster), baselines, adversaries, and plug-ins.

The per-round API, and the same run compiled::

    f = make_forecaster("cdl", horizon=T, seed=0)       # per-round API
    a = make_adversary("greedy", horizon=T, seed=0)
    for t in range(T):
        d = f.forecast(); y = a.respond(d); p = f.draw(); f.observe(y); a.observe(p, y)
    res = simulate("cdl", "greedy", horizon=T, seed=0)  # the same run, compiled
    res.stats == f.stats()                               # True

Forecasters and adversaries are the modules of fastcdl/online/forecasters/ and
fastcdl/online/adversaries/ (``FORECASTERS``, ``ADVERSARIES``), or a user's own made with
:func:`plugin_forecaster` / :func:`plugin_adversary` (contracts in fastcdl.online.engine).
"""

from fastcdl.online import registry
from fastcdl.online.adversaries import Adversary, make_adversary
from fastcdl.online.engine import (
    Draw,
    History,
    KTable,
    Round,
    Table,
    k_point_only,
    slot,
    slots,
    two_point_only,
    uniform,
)
from fastcdl.online.forecasters import Forecast, Forecaster, make_forecaster
from fastcdl.online.minimax import MinimaxSolution, minimax
from fastcdl.online.plugins import (
    AdversarySpec,
    ConvergenceWarning,
    ForecasterSpec,
    OnlineWarning,
    ParameterWarning,
    plugin_adversary,
    plugin_forecaster,
)
from fastcdl.online.simulate import RunResult, simulate, trace

__all__ = [
    "ADVERSARIES",
    "FORECASTERS",
    "Adversary",
    "AdversarySpec",
    "ConvergenceWarning",
    "Draw",
    "Forecast",
    "Forecaster",
    "ForecasterSpec",
    "History",
    "KTable",
    "MinimaxSolution",
    "OnlineWarning",
    "ParameterWarning",
    "Round",
    "RunResult",
    "Table",
    "k_point_only",
    "make_adversary",
    "make_forecaster",
    "minimax",
    "plugin_adversary",
    "plugin_forecaster",
    "simulate",
    "slot",
    "slots",
    "trace",
    "two_point_only",
    "uniform",
]


def __getattr__(name):  # FORECASTERS and ADVERSARIES: the registries' names, read when asked
    if name == "FORECASTERS":
        return tuple(registry.forecasters())
    if name == "ADVERSARIES":
        return tuple(registry.adversaries())
    raise AttributeError(f"module 'fastcdl.online' has no attribute {name!r}")
