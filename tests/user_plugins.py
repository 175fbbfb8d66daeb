"""A user's own forecaster and adversary, written against fastcdl's plug-in contracts only.

Nothing here imports fastcdl's private modules: this is what a researcher's module looks
like. tests/test_plugins.py runs both through simulate, the per-round API and `fastcdl rates`.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from fastcdl.online import plugin_adversary, plugin_forecaster, slot, slots, uniform


# -- an adversary: a coin with P(y = 1) = p, drawing exactly as the built-in bernoulli does ---
@njit(cache=True)
def coin_prob(view, par):
    return par[0]


@njit(cache=True)
def coin(view, table, par, rng):
    return 1 if uniform(rng) < par[0] else 0


COIN = plugin_adversary(coin, name="coin", params={"p": 0.5}, prob=coin_prob)


# -- an adversary that uses the view: y = 1 exactly when the round's mean stated value is below
# the share of y = 1 so far at that value (a "make the bucket's bias worse" rule), ties by a coin
@njit(cache=True)
def spite(view, table, par, rng):
    mean = view.prob0 * view.stated0 + view.prob1 * view.stated1
    b = view.bucket0 if view.prob0 >= view.prob1 else view.bucket1
    n = table.n[b]
    rate = table.s[b] / n if n > 0 else 0.5
    if mean < rate:
        return 0
    if mean > rate:
        return 1
    return 1 if uniform(rng) < 0.5 else 0


SPITE = plugin_adversary(spite, name="spite")


# -- a forecaster: the running frequency of y = 1 rounded to the grid j/m (as the built-in
# "frequency"), written with a state of its own ---------------------------------------------
LastState = namedtuple("LastState", ["m", "ones"])


def last_init(horizon, params):
    m = int(params["m"])
    return LastState(m, np.zeros(1, dtype=np.int64)), np.arange(m + 1) / m


@njit(cache=True)
def last_forecast(st, table, hist, out):
    t = hist.t
    j = (st.m + 1) // 2 if t == 0 else (2 * st.ones[0] * st.m + t) // (2 * t)
    j = min(max(j, 0), st.m)
    out.points[0] = table.q[j]
    out.points[1] = table.q[j]
    out.probs[0] = 1.0
    out.probs[1] = 0.0
    out.buckets[0] = j
    out.buckets[1] = j


@njit(cache=True)
def last_observe(st, table, hist, out, slot, y):
    st.ones[0] += y


RUNNING = plugin_forecaster(
    name="running", init=last_init, forecast=last_forecast, observe=last_observe, params={"m": 32}
)


# -- a faulty adversary: a coin with P(y = 1) = 1/2 that answers `value` (not an outcome) in round
# `at`: the engine stops there and names it ----------------------------------------------------
@njit(cache=True)
def faulty_prob(view, par):
    return 0.5


@njit(cache=True)
def faulty(view, table, par, rng):
    if view.t == int(par[1]):
        return int(par[0])
    return 1 if uniform(rng) < 0.5 else 0


@njit(cache=True)
def faulty_mean(hist, par):
    return 0.5


FAULTY = plugin_adversary(
    faulty,
    name="faulty",
    params={"value": 2, "at": 17},
    prob=faulty_prob,
    k_points=True,  # never reads the distribution: it plays K-point forecasters too
    true_mean=faulty_mean,
    external=faulty_mean,
)  # and spr, which needs the round's mean, and calibeat, which needs an external forecast


# -- an adversary whose worker dies: a coin whose parameter check kills its own process (as the
# system kills one that runs out of memory) at horizons of at least FASTCDL_TEST_KILL_AT -------
def _kill_at(params, horizon):
    import os
    import signal

    at = os.environ.get("FASTCDL_TEST_KILL_AT")
    if at is not None and horizon >= int(at):
        os.kill(os.getpid(), signal.SIGKILL)
    return {"p": float(params.get("p", 0.5))}


KILLER = plugin_adversary(coin, name="killer", params={"p": 0.5}, resolve=_kill_at)


# -- a forecaster with more than two stated values a round (support = 3): the running frequency
# smoothed over the grid point nearest to it and its two neighbours (1/4, 1/2, 1/4; the mass of
# a neighbour beyond the grid's end stays at the point) --------------------------------------
def spread_init(horizon, params):
    m = int(params["m"])
    return LastState(m, np.zeros(1, dtype=np.int64)), np.arange(m + 1) / m


@njit(cache=True)
def spread_forecast(st, table, hist, out):
    t = hist.t
    j = (st.m + 1) // 2 if t == 0 else (2 * st.ones[0] * st.m + t) // (2 * t)
    lo, hi = max(j - 1, 0), min(j + 1, st.m)
    out.probs[0] = 0.25 if lo < j else 0.0
    out.probs[1] = 0.5 + (0.25 if lo == j else 0.0) + (0.25 if hi == j else 0.0)
    out.probs[2] = 0.25 if hi > j else 0.0
    out.buckets[0], out.buckets[1], out.buckets[2] = lo, j, hi
    for i in range(3):
        out.points[i] = table.q[out.buckets[i]]


@njit(cache=True)
def spread_observe(st, table, hist, out, slot, y):
    st.ones[0] += y


SPREAD = plugin_forecaster(
    name="spread", init=spread_init, forecast=spread_forecast, observe=spread_observe, params={"m": 8}, support=3
)


# -- an adversary for rounds of any support: y = 1 when the round's mean stated value is below
# 1/2, read through slots and slot, so it also plays SPREAD ------------------------------------
@njit(cache=True)
def low_mean(view, table, par, rng):
    mean = 0.0
    for i in range(slots(view, table)):
        p, q, b, x = slot(view, table, i)
        mean += p * q
    return 1 if mean < 0.5 else 0


LOW_MEAN = plugin_adversary(low_mean, name="low_mean", k_points=True)
