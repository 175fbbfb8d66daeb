"""Compiled simulate loops: T rounds of forecaster x adversary, streaming into the bucket table.

One loop per forecaster family; the adversary is chosen by its integer code. Each round
calls exactly the kernels the per-round Python API calls (forecast, adversary_outcome,
draw, observe), on the same state arrays, so both paths produce the same run.
Memory is the forecaster's state, O(m): nothing per round is kept unless a trace
buffer of length T is passed (trace_p, trace_y; length 0 disables it).
"""

from fastcdl._kernels._jit import kernel

from fastcdl._kernels.adversaries import adversary_outcome
from fastcdl._kernels.forecasters import (
    cdl_forecast,
    cdl_observe,
    draw,
    grid_forecast,
    grid_observe,
    kt_forecast,
    kt_observe,
)


@kernel
def adversary_round(acode, apar, arng, q, n, s, ctr, probs, bkt, preds, n_at, s_at):
    """The adversary's outcome for this round from the distribution and the public table."""
    for j in range(2):
        preds[j] = q[bkt[j]]
        n_at[j] = n[bkt[j]]
        s_at[j] = s[bkt[j]]
    return adversary_outcome(acode, apar, arng, ctr[0] + 1, ctr[2], preds, probs, n_at, s_at)


@kernel
def _trace(t, p, y, trace_p, trace_y):
    if trace_p.shape[0] > 0:
        trace_p[t] = p
        trace_y[t] = y


@kernel
def simulate_cdl(T, dense, G, Q, eta, logpi, off, S, terms, b, w, c, par, q, n, s, ctr, pts, probs, bkt, rng,
                 acode, apar, arng, preds, n_at, s_at, trace_p, trace_y):
    for t in range(T):
        cdl_forecast(dense, G, Q, eta, logpi, off, S, b, w, c, par, pts, probs, bkt)
        y = adversary_round(acode, apar, arng, q, n, s, ctr, probs, bkt, preds, n_at, s_at)
        p = draw(q, probs, bkt, rng, ctr)
        _trace(t, p, y, trace_p, trace_y)
        cdl_observe(y, dense, G, Q, eta, off, S, terms, n, s, pts, bkt, ctr)


@kernel
def simulate_kt(T, G, logW, par, q, n, s, ctr, pts, probs, bkt, rng,
                acode, apar, arng, preds, n_at, s_at, trace_p, trace_y):
    for t in range(T):
        kt_forecast(G, logW, n, par, pts, probs, bkt)
        y = adversary_round(acode, apar, arng, q, n, s, ctr, probs, bkt, preds, n_at, s_at)
        p = draw(q, probs, bkt, rng, ctr)
        _trace(t, p, y, trace_p, trace_y)
        kt_observe(y, G, logW, n, s, pts, bkt, ctr)


@kernel
def simulate_grid(T, kind, fcode, fpar, q, n, s, ctr, pts, probs, bkt, rng,
                  acode, apar, arng, preds, n_at, s_at, trace_p, trace_y):
    for t in range(T):
        grid_forecast(kind, fcode, fpar, q, n, s, ctr, pts, probs, bkt)
        y = adversary_round(acode, apar, arng, q, n, s, ctr, probs, bkt, preds, n_at, s_at)
        p = draw(q, probs, bkt, rng, ctr)
        _trace(t, p, y, trace_p, trace_y)
        grid_observe(y, n, s, bkt, ctr)
