"""
The kernels inside your own numba loop
======================================

``fastcdl.kernels`` holds numba functions to call from your own ``@njit`` code: a bucket table
that grows one round at a time, and the measures of a table given as arrays (equal to the Python
API's, bit for bit). Here a stream of forecasts whose calibration drifts is followed by its CDL
and ECE every 10,000 rounds, inside one compiled loop.
"""

# %%
import numpy as np
from numba import njit

import fastcdl as fc
from fastcdl import kernels as K


@njit
def measures_every(p, y, every):
    tab = K.table_new(64)  # exact buckets, as fc.bucket_stats
    out = np.empty((p.shape[0] // every, 2))
    for t in range(p.shape[0]):
        tab = K.table_add(tab, p[t], y[t])  # keep the table it returns: it grows
        if (t + 1) % every == 0:
            q, n, s = K.table_view(tab)
            out[(t + 1) // every - 1, 0] = K.cdl_of_table(q, n, s)
            out[(t + 1) // every - 1, 1] = K.ece_of_table(q, n, s)
    return out


rng = np.random.default_rng(0)
T = 200_000
p = rng.integers(0, 21, T) / 20  # forecasts on a grid of 21 values
bias = np.linspace(0.0, 0.15, T)  # the truth drifts above the forecasts
y = (rng.random(T) < np.clip(p + bias, 0, 1)).astype(np.int64)
out = measures_every(p, y, 10_000)
print(f"after {T} rounds: CDL {out[-1, 0]:.4f}, ECE {out[-1, 1]:.4f}")
print("equal to fc.cdl of all rounds:", out[-1, 0] == fc.cdl(y, p))

# %%
# It prints::
#
#     after 200000 rounds: CDL 0.0108, ECE 0.0708
#     equal to fc.cdl of all rounds: True
#
# The forecasts are too low everywhere by a similar amount: every bucket's gap counts in the ECE,
# while a decision maker loses only on the tasks whose threshold falls between a stated value and
# its frequency, so the CDL stays several times smaller.
import matplotlib.pyplot as plt

rounds = np.arange(1, out.shape[0] + 1) * 10_000
fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.plot(rounds, out[:, 0], "o-", label="CDL so far")
ax.plot(rounds, out[:, 1], "s--", label="ECE so far")
ax.set_xlabel("rounds")
ax.set_ylabel("value of the table so far")
ax.set_title("Measures of a growing table, computed inside @njit")
ax.legend()
fig.tight_layout()
