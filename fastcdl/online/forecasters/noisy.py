"""noisy: the noisy post-processing of Hartline, Wu and Yang (2025, "Smooth Calibration and
Decision Making", arXiv 2504.15582) over another forecaster, the base (docs/noisy.md).

The paper's claim: post-processing an online forecaster whose distance to calibration is eps
(per round) by adding noise that makes its predictions differentially private gives ECE and
CDL O(sqrt eps). Here the noise is Laplace noise of scale sigma = sqrt(eps) on a grid (the
noise distribution, the grid and the ends of [0, 1] are this module's choices: docs/noisy.md).
Each round:

1. the base states its distribution P over its stated values p_i (its own kernels, on a table
   of its own predictions);
2. each p_i is reported as a point of the grid q_j = j/m, m = ceil(1/sigma), drawn with
   probability N(j | p_i) = exp(-|q_j - p_i| / sigma) / sum_k exp(-|q_k - p_i| / sigma):
   Laplace noise restricted to the grid of [0, 1] (the exponential mechanism with score
   -|q - p|). Nothing is clipped: near 0 and 1 the mass is renormalised over the grid, so a
   base prediction at 0 is reported from a one-sided (geometric) distribution with mean
   above 0;
3. the round's distribution has one slot per pair (i, j), of probability P(i) N(j | p_i) and
   stated value q_j: the engine's one draw picks the base's slot and the noise together;
4. after y the base observes its own slot i, and its table records p_i and y.

sigma defaults to sqrt(eps) with eps = 1/sqrt(T), the order of the distance to calibration of
acrs (the default base: at most 2 sqrt(T) + 1 in sum); give eps, the base's distance to
calibration per round, or sigma, not both. sigma = 0 is the base itself, slot for slot. The
registered ``noisy`` takes a registered forecaster by name (``base``) with its default
parameters; :func:`noisy_spec` wraps any spec, a plug-in's included, and takes the base's
parameters. Cost per round: the base's, plus O(K m) for its K slots (the exponentials only
for the slots of positive probability); memory O(K m) for the round's distribution.

>>> FORECASTER.resolve_params({"base": "frequency"}, 2**16)
{'base': 'frequency', 'sigma': 0.0625, 'm': 256}
>>> from fastcdl.online import make_forecaster
>>> f = make_forecaster("noisy", horizon=2**16, base="frequency")
>>> fc = f.forecast()  # the base states 1/2; the noise spreads it over j/16
>>> len(fc.probs), fc.predictions[8], round(fc.mean_prediction, 12)
(17, 0.5, 0.5)
"""

import importlib
import math
import pkgutil
from collections import namedtuple

import numba
import numpy as np
from numba.extending import overload

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_real
from fastcdl.online import engine
from fastcdl.online.engine import not_outcome, play_round, record, settle, stopped
from fastcdl.online.plugins import ForecasterSpec

#: This module's own version; a spec's version is 1000 VERSION plus its base's (noisy_spec) or
#: plus the bumps of every built-in it may wrap (the registered noisy).
VERSION = 1
DEFAULT_BASE = "acrs"
NOISE = ("eps", "sigma")  # the post-processing's parameters, beside the base's
SIGMA_MIN = 2.0**-20  # a grid of at most 2^20 + 1 points a round per slot of the base

# base: the base's state; table, out: its own table (its stated values, its rounds) and Draw;
# sigma: the Laplace scale (0: no noise)
NoisyState = namedtuple("NoisyState", ["base", "table", "out", "sigma"])

# The base's kernels by the numba type of its state, and its report by the state's class, filled
# by _new_state: the noisy kernels compile once per base, each version calling its base's kernels.
_KERNELS: dict = {}
_REPORTS: dict = {}


def noise_sigma(params, T) -> float:
    """sigma, the Laplace scale, from the given ``eps`` or ``sigma`` (not both): sigma =
    sqrt(eps) with eps = 1/sqrt(T) by default, so sigma = T^(-1/4). O(1).

    Parameters
    ----------
    params : dict
        The given noise parameters (``eps``, ``sigma`` or neither).
    T : int
        The horizon.

    Returns
    -------
    float
        0 (no noise) or at least 2^-20.

    Raises
    ------
    ValidationError
        (a ValueError naming ``eps`` or ``sigma``) for both given, a negative or non-finite
        value, or a sigma in (0, 2^-20).

    Examples
    --------
    >>> noise_sigma({}, 2**16), noise_sigma({"eps": 0.01}, 100), noise_sigma({"sigma": 0.2}, 100)
    (0.0625, 0.1, 0.2)
    """
    if "sigma" in params:
        if "eps" in params:
            raise ValidationError("eps", "sets sigma = sqrt(eps); give eps or sigma, not both")
        name, sigma = "sigma", check_real(params["sigma"], "sigma", 0.0)
    else:
        eps = check_real(params["eps"], "eps", 0.0) if "eps" in params else 1.0 / math.sqrt(T)
        name, sigma = "eps", math.sqrt(eps)
    if 0.0 < sigma < SIGMA_MIN:
        raise ValidationError(
            name,
            "gives sigma below 2^-20 (a grid of more than 2^20 points a round); sigma must be 0 or at least 2^-20",
            value=params.get(name),
        )
    return sigma


def grid_size(sigma) -> int:
    """m = ceil(1/sigma) for sigma > 0: the grid j/m is at least as fine as the noise.

    >>> grid_size(0.0625), grid_size(0.1), grid_size(5.0)
    (16, 10, 1)
    """
    return max(1, math.ceil(1.0 / sigma - 1e-9))


@kernel(inline="always")
def laplace_row(q, p, sigma, w):
    """w_j = exp(-|q_j - p| / sigma) at every point q_j of the grid; returns their sum W, so
    that N(j | p) = w_j / W is Laplace noise of scale sigma around p restricted to the grid.
    O(len(q)).

    >>> w = np.zeros(3)
    >>> W = laplace_row(np.array([0.0, 0.5, 1.0]), 0.0, 0.5, w)
    >>> np.allclose(w, np.exp([0.0, -1.0, -2.0])), bool(np.isclose(W, w.sum()))
    (True, True)
    """
    W = 0.0
    for j in range(q.shape[0]):
        w[j] = math.exp(-abs(q[j] - p) / sigma)
        W += w[j]
    return W


def base_forecast(bst, table, hist, out):
    """The base's forecast kernel, chosen when compiled by the type of its state (numba only)."""
    raise NotImplementedError("base_forecast runs in compiled code only")


def base_observe(bst, table, hist, out, slot, y):
    """The base's observe kernel, chosen when compiled by the type of its state (numba only)."""
    raise NotImplementedError("base_observe runs in compiled code only")


@overload(base_forecast)
def _base_forecast(bst, table, hist, out):
    fc = _KERNELS[bst][0]

    def impl(bst, table, hist, out):
        fc(bst, table, hist, out)

    return impl


@overload(base_observe)
def _base_observe(bst, table, hist, out, slot, y):
    ob = _KERNELS[bst][1]

    def impl(bst, table, hist, out, slot, y):
        ob(bst, table, hist, out, slot, y)

    return impl


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    """The base's distribution P, then slot i J + j = (base slot i, grid point j) with
    probability P(i) N(j | p_i), J = m + 1 the grid's size (J = 1 for sigma = 0: the base's
    own slot)."""
    bout, q = st.out, table.q
    base_forecast(st.base, st.table, hist, bout)
    K = bout.probs.shape[0]
    J = out.probs.shape[0] // K
    for i in range(K):
        P = bout.probs[i]
        if J == 1:  # sigma = 0: the base's slot, raw point and bucket as they are
            out.points[i] = bout.points[i]
            out.probs[i] = P
            out.buckets[i] = bout.buckets[i]
            continue
        row = out.probs[i * J : (i + 1) * J]
        for j in range(J):
            out.points[i * J + j] = q[j]
            out.buckets[i * J + j] = j
        if P > 0.0:
            W = laplace_row(q, st.table.q[bout.buckets[i]], st.sigma, row)
            for j in range(J):
                row[j] = P * (row[j] / W)
        else:
            row[:] = 0.0


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    """The base observes its slot i = slot // J (before its table records p_i and y)."""
    J = out.probs.shape[0] // st.out.probs.shape[0]
    i = slot // J
    base_observe(st.base, st.table, hist, st.out, i, y)
    record(st.table, st.out.buckets[i], y)


# _nrt=False: the loop allocates nothing, nor do the built-in bases' kernels (as every built-in's loop)
@kernel(_nrt=False)
def simulate(T, st, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y):
    for t in range(T):
        forecast(st, table, hist, out)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(st, table, hist, out, slot, y)
        hist = settle(table, out, slot, y, hist)
    return hist


# A plug-in's base (a state type of the user's module) runs in copies of the kernels that numba
# does not cache, as the engine's generic loop for plug-ins: a cached kernel's index lists the
# argument types of all its versions, and a process that cannot import the user's module could
# not read it, the built-in bases' versions included. The loop keeps numba's reference counting,
# as the generic loop does: a plug-in's kernels may allocate.
_forecast_uncached = kernel(cache=False, inline="always")(forecast.py_func)
_observe_uncached = kernel(cache=False, inline="always")(observe.py_func)
_simulate_uncached = kernel(cache=False)(simulate.py_func)


def check_base(base) -> ForecasterSpec:
    """``base`` if noisy can wrap it: its kernels take the round alone (no true mean, external
    forecast or adversary) and it is not noisy itself; else a ValidationError naming ``base``.

    >>> from fastcdl.online import registry
    >>> check_base(registry.forecaster("kt")).name
    'kt'
    """
    if base.side_input is not None or base.needs_adversary:
        what = {"mean": "the round's true mean", "external": "the round's external forecast"}
        what = what.get(base.side_input, "the adversary it plays")
        raise ValidationError(
            "base",
            f"needs {what}, which noisy does not pass on",
            value=base.name,
            message=f"base: forecaster {base.name!r} needs {what}; noisy wraps forecasters whose kernels take "
            "the round alone",
        )
    if base.forecast in (forecast, _forecast_uncached):
        raise ValidationError("base", "is noisy itself", value=base.name)
    return base


def _split(resolved):
    """(the base's resolved parameters, sigma) of noisy's."""
    return {k: v for k, v in resolved.items() if k not in ("base", "sigma")}, float(resolved["sigma"])


def _new_state(base, horizon, resolved):
    """(NoisyState, q) of a fresh run over the spec ``base``: q = j/m, or the base's own
    stated values for sigma = 0."""
    bparams, sigma = _split(resolved)
    bst, bq = base.init(horizon, bparams, None)
    key = numba.typeof(bst)
    kernels = (base.forecast, base.observe)
    if _KERNELS.setdefault(key, kernels) != kernels or _REPORTS.setdefault(type(bst), base.report) != base.report:
        raise ValidationError(
            "base",
            "keeps its state in the type of another forecaster with other kernels",
            value=base.name,
            message=f"base: forecaster {base.name!r} keeps its state in a type ({key}) that another forecaster "
            "with other kernels uses; noisy tells its bases apart by that type (give its state a namedtuple "
            "class of its own)",
        )
    bout = engine.new_draw(base.slots(bparams))
    if sigma == 0.0:
        q = np.asarray(bq, dtype=np.float64)
    else:
        m = grid_size(sigma)
        q = np.arange(m + 1) / m
    return NoisyState(bst, engine.new_table(bq, bout), bout, sigma), q


def _resolve(base, params, T):
    noise = {k: params[k] for k in NOISE if k in params}
    bparams = base.resolve_params({k: v for k, v in params.items() if k not in NOISE}, T)
    return {"sigma": noise_sigma(noise, T), **bparams}


def _support(base, resolved):
    """K m: m + 1 grid points for each of the base's K slots (K for sigma = 0)."""
    bparams, sigma = _split(resolved)
    return base.slots(bparams) * (1 if sigma == 0.0 else grid_size(sigma) + 1)


def _grid(base, resolved):
    """m of the grid j/m (the base's, if any, for sigma = 0)."""
    bparams, sigma = _split(resolved)
    if sigma == 0.0:
        return None if base.grid is None else base.grid(bparams)
    return grid_size(sigma)


def report(st, rounds, seen):
    """The base's report (its warnings, as cdl's), if it has one."""
    base_report = _REPORTS.get(type(st.base))
    return seen if base_report is None else base_report(st.base, rounds, seen)


def noisy_spec(base, *, name=None, version=None) -> ForecasterSpec:
    """The noisy post-processing of the forecaster ``base`` (any spec, a plug-in's included),
    with the base's parameters and ``eps`` or ``sigma``: the registered ``noisy``'s kernels,
    which compile once per base (for a base that is not a built-in, copies that numba does not
    cache, compiled once per process).

    Parameters
    ----------
    base : ForecasterSpec
        The forecaster post-processed; its kernels must take the round alone.
    name : str, optional
        Default ``"noisy_" + base.name``.
    version : int, optional
        Default ``1000 * VERSION + base.version``: the base's version is part of it, so a
        stored trial is never taken for one of another version of the base.

    Returns
    -------
    ForecasterSpec

    Raises
    ------
    ValidationError
        (a ValueError) naming ``base`` for a base that needs a true mean, an external forecast
        or the adversary, or is noisy itself; naming ``params`` when the base has a parameter
        called eps or sigma.

    Examples
    --------
    >>> from fastcdl.online import registry
    >>> spec = noisy_spec(registry.forecaster("klcal"))
    >>> spec.name, spec.version, sorted(spec.params)
    ('noisy_klcal', 1002, ['eps', 'even', 'k', 'sigma'])
    >>> spec.resolve_params({"k": 4, "sigma": 0.25}, 100)
    {'sigma': 0.25, 'k': 4}
    """
    base = check_base(base)
    clash = sorted(set(base.params) & set(NOISE))
    if clash:
        raise ValidationError("params", f"of base {base.name!r} include {clash[0]!r}, a parameter of noisy")

    def init(horizon, params, adversary=None):
        return _new_state(base, horizon, params)

    from fastcdl.online import registry

    builtin = registry.forecasters().get(base.name) is base
    return ForecasterSpec(
        name or f"noisy_{base.name}",
        init,
        forecast if builtin else _forecast_uncached,
        observe if builtin else _observe_uncached,
        params={**base.params, "eps": None, "sigma": None},
        version=version or 1000 * VERSION + base.version,
        resolve=lambda params, T: _resolve(base, params, T),
        loop=simulate if builtin else _simulate_uncached,
        report=report,
        doc=__doc__,
        grid=lambda resolved: _grid(base, resolved),
        support=lambda resolved: _support(base, resolved),
    )


# -- the registered forecaster: the base by name, at its default parameters ------------------
def base_of(name) -> ForecasterSpec:
    """The registered forecaster ``name`` as a base (:func:`check_base`).

    >>> base_of("klcal").name
    'klcal'
    """
    from fastcdl.online import registry

    known = [n for n in registry.forecasters() if n != "noisy"]
    if not isinstance(name, str) or name not in registry.forecasters():
        raise ValidationError(
            "base",
            f"must be a registered forecaster ({', '.join(known)})",
            value=name,
            message=f"base must be a registered forecaster ({', '.join(known)}); got {name!r}",
        )
    return check_base(registry.forecaster(name))


def init(horizon, params, adversary=None):
    """(state, q) of a fresh run over the base named by params["base"]."""
    return _new_state(base_of(params["base"]), horizon, params)


def resolve(params, T):
    """The base by name, its parameters at their defaults for T, and sigma."""
    base = base_of(params.get("base", DEFAULT_BASE))
    return {"base": base.name, **_resolve(base, {k: v for k, v in params.items() if k != "base"}, T)}


def builtin_bumps() -> int:
    """sum over the other built-in forecasters of (version - 1): it grows with every bump of any
    of them, so the registered noisy's version moves with its base's (the trial key holds the
    spec's version, which cannot depend on the base a trial chose).

    >>> builtin_bumps() >= 0
    True
    """
    pkg = importlib.import_module("fastcdl.online.forecasters")
    total = 0
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name == "noisy":
            continue
        spec = getattr(importlib.import_module(f"{pkg.__name__}.{info.name}"), "FORECASTER", None)
        if isinstance(spec, ForecasterSpec):
            total += spec.version - 1
    return total


FORECASTER = ForecasterSpec(
    "noisy",
    init,
    forecast,
    observe,
    params={"base": DEFAULT_BASE, "eps": None, "sigma": None},
    version=1000 * VERSION + builtin_bumps(),
    resolve=resolve,
    loop=simulate,
    report=report,
    doc=__doc__,
    grid=lambda resolved: _grid(base_of(resolved["base"]), resolved),
    support=lambda resolved: _support(base_of(resolved["base"]), resolved),
)
