"""A forecaster written from the README's plug-in section alone ("Your own adversary or
forecaster, in the compiled loop"), as a reader would write it in a module of their own:
tests/test_leaderboard.py ranks it with `fastcdl leaderboard --add readme_plugin:HALFWAY`.

It states the midpoint between 1/2 and the running frequency of y = 1, on the grid j/m.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from fastcdl.online import plugin_forecaster

State = namedtuple("State", ["m", "ones"])


def init(horizon, params):
    m = int(params["m"])
    return State(m, np.zeros(1, dtype=np.int64)), np.arange(m + 1) / m


@njit(cache=True)
def forecast(st, table, hist, out):
    freq = 0.5 if hist.t == 0 else st.ones[0] / hist.t
    j = round((0.5 + freq) / 2 * st.m)
    out.points[:] = table.q[j]
    out.probs[0] = 1.0
    out.probs[1] = 0.0
    out.buckets[:] = j


@njit(cache=True)
def observe(st, table, hist, out, slot, y):
    st.ones[0] += y


HALFWAY = plugin_forecaster(name="halfway", init=init, forecast=forecast, observe=observe, params={"m": 20})
