"""Fits of the rates the theory predicts: c ln T / sqrt T and c / m (docs/experiments.md).

A slope is a local secant; where the theory names the form of the decay, the constant of
that form says more. For each (forecaster, adversary, metric) whose forecaster has a
predicted form, over the same window as the slope (analysis.fit_window):

- ``c ln T / sqrt T``: Algorithm 1's CDL bound (Hu & Wu 2024), for cdl and the forecasters
  built on its grid (kt, sign, uniform);
- ``c / m``: the rounding offset of those forecasters, whose stated value is a bucket's
  right end, 1/m from a raw point at the bucket's left end (m = ceil(m_scale sqrt T / ln T)
  buckets); and Foster's T^-1/3, with his grid's m = ceil(T^(1/3)) points.

The constant c = exp(mean over the window of log(mean / g(T))) (least squares on the log
scale with the slope fixed by the form) with a jackknife-over-seeds t interval; the fit
is judged by the root-mean-square log residual (next to that of a free power law) and by
the residual slope, the slope of log(mean / g(T)) against log T: 0 when the form is
right, and its interval says whether the data can tell.
"""

from __future__ import annotations

import json
import math

import numpy as np

from fastcdl.measures import MEASURES
from fastcdl.experiments.analysis import (
    common_seeds,
    group_rows,
    seed_matrix,
    slope_weights,
    fit_window,
    jackknife_log_linear,
)

FORMS_COLUMNS = (
    "forecaster",
    "adversary",
    "metric",
    "form",
    "c",
    "c_lo",
    "c_hi",
    "rms_log_residual",
    "power_law_rms_log_residual",
    "residual_slope",
    "residual_slope_lo",
    "residual_slope_hi",
    "t_min_fit",
    "t_max_fit",
    "n_seeds",
)

LOG_OVER_ROOT = "c ln T / sqrt T"
OVER_M = "c / m"
OVER_ROOT = "c / sqrt T"
OVER_CUBE_ROOT = "c / T^(1/3)"
ALL_FORMS = (LOG_OVER_ROOT, OVER_M, OVER_ROOT, OVER_CUBE_ROOT)  # the worst-case folder fits each to every forecaster

# the measures of the size of a bias whose forms are fitted, as the registry marks them
# (Measure.fitted) when this module is imported; fits read the registry itself
FITTED_METRICS = tuple(k for k, m in MEASURES.items() if m.fitted)

# forecaster name -> the forms its theory predicts
PREDICTED = {
    "cdl": (LOG_OVER_ROOT, OVER_M),
    "kt": (LOG_OVER_ROOT, OVER_M),
    "sign": (LOG_OVER_ROOT, OVER_M),
    "uniform": (LOG_OVER_ROOT, OVER_M),
    "foster": (OVER_M,),
}


def form_values(form, forecaster, params: dict, Ts) -> np.ndarray:
    """g(T) of a form at each horizon; m is the forecaster's grid size at that horizon.

    >>> form_values("c / m", "cdl", {}, [2**20])  # m = ceil(sqrt(2^20) / ln 2^20) = 74
    array([0.01351351])
    """
    if form == LOG_OVER_ROOT:
        return np.array([math.log(T) / math.sqrt(T) for T in Ts])
    if form == OVER_ROOT:
        return np.array([T**-0.5 for T in Ts])
    if form == OVER_CUBE_ROOT:
        return np.array([T ** (-1.0 / 3.0) for T in Ts])
    if form == OVER_M:
        from fastcdl.online import registry

        spec = registry.forecaster(forecaster)
        return np.array([1.0 / spec.grid_m(params, int(T)) for T in Ts])
    raise ValueError(f"unknown form {form!r}; known: {', '.join(map(repr, ALL_FORMS))}")


def form_fits(rows, metrics, forms=None) -> list[dict]:
    """The fitted constant of each predicted form (module docstring), as a list of dicts.

    Cost O(cells x window x seeds).

    Parameters
    ----------
    rows : list of dict
        Trials as :func:`fastcdl.experiments.analyze` takes them, with forecaster (the
        registered name) and forecaster_params (JSON) next to the labels; forecasters
        without a predicted form are skipped.
    metrics : list of str
        The metrics to fit (those with predicted forms).
    forms : list of str, optional
        Fit these forms to every forecaster instead (c / m only where the forecaster
        declares a grid).

    Returns
    -------
    list of dict
        Per forecaster, adversary, metric and form: the constant c with its interval, the
        residuals against the form and against a free power law, and the fitted window.

    Examples
    --------
    >>> rows = [dict(forecaster="cdl", forecaster_label="cdl", forecaster_params="{}",
    ...              adversary_label="greedy", T=T, seed_index=i, cdl=(1 + 0.1 * i) / T ** 0.5)
    ...         for T in (64, 256, 1024, 4096) for i in range(3)]
    >>> [f["form"] for f in form_fits(rows, ["cdl"])]
    ['c ln T / sqrt T', 'c / m']
    """
    component = {}
    for r in rows:
        if "forecaster" in r and "forecaster_params" in r:
            component[r["forecaster_label"]] = (r["forecaster"], r["forecaster_params"])
    # the measures of the size of a bias (K2 is squared, the kinks are locations): the registry's
    # entries marked fitted
    groups = group_rows(rows, [m for m in metrics if m in MEASURES and MEASURES[m].fitted])
    out = []
    nan = float("nan")
    for (f, a, m), by_T in sorted(groups.items()):
        if f not in component or (forms is None and component[f][0] not in PREDICTED):
            continue
        name, params = component[f][0], json.loads(component[f][1])
        fit_T = fit_window(by_T)
        seeds = common_seeds(by_T, fit_T)
        if len(fit_T) < 2 or not seeds:
            continue
        V = seed_matrix(by_T, fit_T, seeds)
        means = V.mean(axis=1)
        if np.any(~(means > 0)):
            continue
        ly = np.log(means)
        lx = np.log(np.asarray(fit_T, dtype=float))
        free = ly - np.polyval(np.polyfit(lx, ly, 1), lx)
        w = slope_weights(fit_T)
        k = len(fit_T)
        todo = (
            PREDICTED[name] if forms is None else [g for g in forms if g != OVER_M or registry_grid(name) is not None]
        )
        for form in todo:
            lg = np.log(form_values(form, name, params, fit_T))
            log_c, lo, hi, _ = jackknife_log_linear(V, np.full(k, 1.0 / k))
            shift = lg.mean()
            resid = ly - lg - (log_c - shift)
            rs, rs_lo, rs_hi, _ = jackknife_log_linear(V, w)
            g_slope = float(w @ lg)
            out.append(
                dict(
                    forecaster=f,
                    adversary=a,
                    metric=m,
                    form=form,
                    c=math.exp(log_c - shift),
                    c_lo=math.exp(lo - shift) if np.isfinite(lo) else nan,
                    c_hi=math.exp(hi - shift) if np.isfinite(hi) else nan,
                    rms_log_residual=float(np.sqrt(np.mean(resid**2))),
                    power_law_rms_log_residual=float(np.sqrt(np.mean(free**2))),
                    residual_slope=rs - g_slope,
                    residual_slope_lo=rs_lo - g_slope,
                    residual_slope_hi=rs_hi - g_slope,
                    t_min_fit=fit_T[0],
                    t_max_fit=fit_T[-1],
                    n_seeds=len(seeds),
                )
            )
    return out


def registry_grid(forecaster):
    """The forecaster's declared grid function (None: no grid)."""
    from fastcdl.online import registry

    return registry.forecaster(forecaster).grid
