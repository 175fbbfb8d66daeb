"""Checking and resolving the parameters of forecasters and adversaries (docs/algorithm1.md).

Every error is a fastcdl._validate.ValidationError (a ValueError) naming the parameter;
the scalar checks themselves live in fastcdl._validate with the library's other input
checks. Defaults that depend on the horizon T are resolved here, so a RunResult records
the values actually used.
"""

from __future__ import annotations

import math
import warnings

from fastcdl._validate import (  # noqa: F401  (check_seed, check_horizon: used by the online modules)
    ValidationError,
    check_horizon,
    check_int,
    check_name,
    check_real,
    check_seed,
)

FORECASTERS = ("cdl", "foster", "kt", "truthful", "frequency")
ADVERSARIES = ("bernoulli", "drift", "markov", "contrarian", "greedy")
STOCHASTIC = ("bernoulli", "drift", "markov")

_FORECASTER_KEYS = {
    "cdl": ("oracle", "m", "m_scale", "delta"),
    "kt": ("m", "m_scale", "delta"),
    "foster": ("m",),
    "truthful": ("m", "adversary", "adversary_params"),
    "frequency": ("m",),
}
_ADVERSARY_KEYS = {
    "bernoulli": ("p",),
    "drift": ("amplitude", "period"),
    "markov": ("p01", "p10"),
    "contrarian": (),
    "greedy": (),
}


class OnlineWarning(UserWarning):
    """Base class of fastcdl.online's warnings."""


class ParameterWarning(OnlineWarning):
    """A parameter that is accepted but almost certainly not what was meant (say m > T)."""


class ConvergenceWarning(OnlineWarning):
    """An iterative solve stopped at its iteration cap (the MsMwC normaliser Lam)."""


def _unknown(params, allowed, what):
    extra = sorted(set(params) - set(allowed))
    if extra:
        hint = ", ".join(allowed) if allowed else "none"
        raise ValidationError(extra[0], f"is not a parameter of {what}",
                              message=f"unknown parameter {extra[0]!r} for {what} (accepted: {hint})")


def _given_m(params, T, default):
    """A user-given number of buckets m, checked; warns (ParameterWarning) when m > T.

    Accepted all the same (a short test run of a long-horizon setting is legitimate), but
    with more buckets than rounds most buckets never fill and the forecaster cannot
    become calibrated: m = 100000 at T = 1024 gives CDL 1.0.
    """
    m = check_int(params["m"], "m", low=1)
    if m > T:
        warnings.warn(
            ParameterWarning(
                f"m = {m} buckets for a horizon of T = {T} rounds: more buckets than rounds, so "
                f"most buckets never fill and the forecaster cannot become calibrated (CDL stays "
                f"near its worst); this forecaster's default at T = {T} is m = {default}"
            ),
            stacklevel=4,
        )
    return m


def default_cdl_m(T, m_scale=1.0):
    """m = max(2, ceil(m_scale * sqrt(T) / ln T)) (docs/algorithm1.md; m = 2 for T < 3)."""
    if T < 3:
        return 2
    return max(2, math.ceil(m_scale * math.sqrt(T) / math.log(T)))


def _icbrt_up(T):
    m = max(1, round(T ** (1.0 / 3.0)))
    while m**3 < T:
        m += 1
    while m > 1 and (m - 1) ** 3 >= T:
        m -= 1
    return m


def _isqrt_up(T):
    r = math.isqrt(T)
    return r if r * r == T else r + 1


def resolve_adversary(name, params, horizon=None) -> dict:
    """Checked adversary parameters with defaults filled in."""
    check_name(name, ADVERSARIES, "adversary")
    params = dict(params or {})
    _unknown(params, _ADVERSARY_KEYS[name], f"adversary {name!r}")
    if name == "bernoulli":
        return {"p": check_real(params.get("p", 0.5), "p", 0.0, 1.0)}
    if name == "drift":
        amplitude = check_real(params.get("amplitude", 0.4), "amplitude", 0.0, 0.5)
        if "period" in params:
            period = check_real(params["period"], "period", 0.0, low_open=True)
        elif horizon is None:
            raise ValidationError("period", "is needed", message="period: the drift adversary needs "
                                  "period=... or horizon=... (period = horizon / 8)")
        else:
            period = check_horizon(horizon) / 8.0
        return {"amplitude": amplitude, "period": period}
    if name == "markov":
        return {"p01": check_real(params.get("p01", 0.1), "p01", 0.0, 1.0),
                "p10": check_real(params.get("p10", 0.1), "p10", 0.0, 1.0)}
    return {}


def resolve_forecaster(name, horizon, params) -> dict:
    """Checked forecaster parameters with the horizon-dependent defaults filled in."""
    check_name(name, FORECASTERS, "forecaster")
    T = check_horizon(horizon)
    params = dict(params or {})
    _unknown(params, _FORECASTER_KEYS[name], f"forecaster {name!r}")
    out = {}
    if name in ("cdl", "kt"):
        if name == "cdl":
            oracle = params.get("oracle", "sparse")
            if oracle not in ("sparse", "dense"):
                raise ValidationError("oracle", "must be 'sparse' or 'dense'", value=oracle)
            out["oracle"] = oracle
        if "m" in params and "m_scale" in params:
            raise ValidationError("m_scale", "cannot be given with m", message="m and m_scale: give "
                                  "the number of buckets m or its scale m_scale, not both")
        if "m" in params:
            out["m"] = _given_m(params, T, default_cdl_m(T))
        else:
            scale = check_real(params.get("m_scale", 1.0), "m_scale", 0.0, low_open=True)
            out["m"] = default_cdl_m(T, scale)
            out["m_scale"] = scale
        m = out["m"]
        if "delta" in params:
            delta = check_real(params["delta"], "delta", 0.0, low_open=True)
            if delta > 1.0 / m:
                raise ValidationError("delta", f"must be in (0, 1/m] = (0, {1.0 / m:.6g}]", value=delta)
        else:
            delta = min(1.0 / T, 1.0 / m)
        out["delta"] = delta
        return out
    if name == "foster":
        out["m"] = _given_m(params, T, _icbrt_up(T)) if "m" in params else _icbrt_up(T)
        return out
    out["m"] = _given_m(params, T, max(2, _isqrt_up(T))) if "m" in params else max(2, _isqrt_up(T))
    if name == "truthful":
        if "adversary" not in params:
            raise ValidationError("adversary", "is needed", message="adversary: the truthful forecaster "
                                  f"needs adversary=... (one of {', '.join(STOCHASTIC)}) and optionally adversary_params")
        adv = params["adversary"]
        if adv not in STOCHASTIC:
            raise ValidationError("adversary", "must be stochastic", value=adv,
                                  message=f"adversary: the truthful forecaster needs a stochastic adversary "
                                  f"({', '.join(STOCHASTIC)}), got {adv!r}")
        out["adversary"] = adv
        out["adversary_params"] = resolve_adversary(adv, params.get("adversary_params"), T)
    return out
