"""cdl: Algorithm 1 of Hu and Wu with the MsMwC expert weights (docs/algorithm1.md).

m buckets I_b = (b/m, (b+1)/m] (I_0 closed, 0-based), stated value q_b = (b+1)/m; per
bucket the bias G_b and squared bias Q_b of the raw points. Step 1 mixes the boundary
points of the bucket pair where the weights c change sign; the weights come from the
MsMwC oracle, sparse (O(K_eta * Newton + log m) per round, the default) or dense (every
c_b formed, O(m K_eta), the reference).

step="minimax" replaces the two-point rule by the 2 x K minimax solver
(fastcdl._compiled.minimax) over the 2m points the rule can use (0, each bucket's right end
(b+1)/m, and b/m + delta just inside bucket b), with the adversary's gain c_b (ptilde - y):
every c_b is formed each round (O(m K_eta + m log m) per round) and the solver mixes at
most two of the points. Its value max_y E[c_b (ptilde - y)] is never above the two-point
rule's on the same weights, and is lower when another mixture does better (c with several
sign changes, or a small weight away from the bracket). The default step="two-point" is
the rule above, unchanged.

>>> FORECASTER.resolve_params({}, 1000)["m"]
5
"""

import math
import warnings
from collections import namedtuple

import numpy as np

from fastcdl._compiled import msmwc
from fastcdl._compiled._jit import kernel
from fastcdl._compiled.minimax import minimax_2xk_into
from fastcdl._compiled.step1 import (
    add_to_bias,
    boundary_points,
    drawn_numerator,
    exact_bias,
    point_mass,
    step1_point_mass,
)
from fastcdl._validate import ValidationError, check_real
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.plugins import ConvergenceWarning, ForecasterSpec, default_cdl_m, given_m

# lam: the normaliser Lam (warm start); logc: ln|c_lo|, ln c_hi of the last mixed step
# (NaN otherwise); capped: Lam solves stopped at their cap; last_step: the final step of
# the latest such solve; mm: None for step="two-point", else the minimax step's MinimaxScratch.
# lanes, tpad: the oracle's per-copy rows and bucket terms padded to the vector width
# (msmwc.new_lanes); eta, logpi, off, S, b, w and terms are views of their first K_eta copies.
CDLState = namedtuple(
    "CDLState",
    [
        "G",
        "Q",
        "eta",
        "logpi",
        "off",
        "S",
        "terms",
        "b",
        "w",
        "c",
        "lam",
        "logc",
        "capped",
        "last_step",
        "delta",
        "dense",
        "mm",
        "lanes",
        "tpad",
        "eb",
    ],
)
# c: every c_b of the round; A: the (2m, 2) gains of the candidate points; idx, prob: the solution;
# a, b, order, tmp, hull: minimax_2xk_into's work arrays (2m each: the loop allocates nothing)
MinimaxScratch = namedtuple("MinimaxScratch", ["c", "A", "idx", "prob", "a", "b", "order", "tmp", "hull"])


def init(horizon, params, adversary=None):
    """(state, q) of a fresh run: G = Q = 0, the copies' rates and priors, F_k summed."""
    m = params["m"]
    dense = params["oracle"] == "dense"
    K_eta = msmwc.n_copies(horizon)
    lanes, tpad = msmwc.new_lanes(m, K_eta)
    row = lambda r: lanes[r, :K_eta]  # noqa: E731  (views of the padded rows)
    st = CDLState(
        G=np.zeros(m),
        Q=np.zeros(m),
        eta=row(msmwc.ETA),
        logpi=row(msmwc.LOGPI),
        off=row(msmwc.OFF),
        S=row(msmwc.SUM),
        terms=tpad[:, :K_eta],
        b=row(msmwc.B),
        w=row(msmwc.W),
        c=np.zeros(m if dense else 1),
        lam=np.zeros(1),
        logc=np.full(2, math.nan),
        capped=np.zeros(1, dtype=np.int64),
        last_step=np.zeros(1),
        delta=float(params["delta"]),
        dense=dense,
        mm=None
        if params.get("step", "two-point") == "two-point"
        else MinimaxScratch(
            np.zeros(m),
            np.zeros((2 * m, 2)),
            np.full(2, -1, dtype=np.int64),
            np.zeros(2),
            np.zeros(2 * m),
            np.zeros(2 * m),
            np.zeros(2 * m, dtype=np.int64),
            np.zeros(2 * m, dtype=np.int64),
            np.zeros(2 * m, dtype=np.int64),
        ),
        lanes=lanes,
        tpad=tpad,
        eb=exact_bias(m),
    )
    if not dense:
        msmwc.refresh_normaliser(st.G, st.Q, st.eta, st.off, st.S, st.terms)
    return st, np.arange(1, m + 1) / m


@kernel(inline="always")
def _keep_lam(st, lam, converged, step):
    st.lam[0] = lam
    if not converged:
        st.capped[0] += 1
        st.last_step[0] = step


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    """Step 1. Sparse: bisection on sign(G) (c has G's signs) and c at the two buckets only;
    dense: all c_b (dense_weights) and bisection on sign(c)."""
    m = st.G.shape[0]
    st.logc[0] = np.nan
    st.logc[1] = np.nan
    if _minimax_step(st, st.mm, out):
        return
    if st.dense:
        lam, converged, step = msmwc.dense_weights(st.G, st.Q, st.eta, st.logpi, st.b, st.w, st.lam[0], st.c)
        _keep_lam(st, lam, converged, step)
    # c has G's signs: step 1 decides on the exact signs of G (st.eb), the weights give magnitudes
    lo, done = step1_point_mass(st.eb.sign, out.points, out.probs, out.buckets)
    if not done:
        if st.dense:
            lc_lo = math.log(abs(st.c[lo]))
            lc_hi = math.log(abs(st.c[lo + 1]))
        else:
            lam, converged, step = msmwc.lam_lanes(st.lanes, st.lam[0])
            _keep_lam(st, lam, converged, step)
            lc_lo, lc_hi = msmwc.lanes_logc_pair(lo, st.G, st.Q, lam, st.lanes, st.tpad)
        st.logc[0] = lc_lo
        st.logc[1] = lc_hi
        # r = c_hi / (c_hi - c_lo) = 1 / (1 + |c_lo| / c_hi)
        boundary_points(lo, m, st.delta, 1.0 / (1.0 + math.exp(lc_lo - lc_hi)), out.points, out.probs, out.buckets)


@kernel
def _candidate(j, m, delta):
    """Candidate point j of the minimax step and its bucket: j = 0 the point 0 (bucket 0);
    j = 1..m the right end j/m of bucket j - 1; j = m+1..2m-1 the point b/m + delta inside bucket b = j - m."""
    if j == 0:
        return 0.0, 0
    if j <= m:
        return j / m, j - 1
    return (j - m) / m + delta, j - m


@kernel
def _minimax_step(st, mm, out):
    """step="minimax": every c_b (dense_weights, or the sparse Lam and ln|c_b| of each bucket),
    the gains c_b (x - y) of the 2m candidate points, and minimax_2xk's mixture of at most two.
    Returns False at once for step="two-point" (mm is None: numba drops the rest when compiling)."""
    if mm is None:
        return False
    m = st.G.shape[0]
    if st.dense:
        lam, converged, step = msmwc.dense_weights(st.G, st.Q, st.eta, st.logpi, st.b, st.w, st.lam[0], st.c)
        _keep_lam(st, lam, converged, step)
        for b in range(m):
            mm.c[b] = st.eb.sign[b] * abs(st.c[b])
    else:
        lam, converged, step = msmwc.lam_lanes(st.lanes, st.lam[0])
        _keep_lam(st, lam, converged, step)
        for b in range(m):
            if st.eb.sign[b] == 0.0:
                mm.c[b] = 0.0
            else:
                v = math.exp(msmwc.lanes_logc(b, st.G, st.Q, lam, st.lanes, st.tpad))
                mm.c[b] = v if st.eb.sign[b] > 0.0 else -v
    for j in range(2 * m):
        x, b = _candidate(j, m, st.delta)
        mm.A[j, 0] = mm.c[b] * x
        mm.A[j, 1] = mm.c[b] * (x - 1.0)
    minimax_2xk_into(mm.A, mm.idx, mm.prob, mm.a, mm.b, mm.order, mm.tmp, mm.hull)
    x, b = _candidate(mm.idx[0], m, st.delta)
    if mm.idx[1] < 0 or mm.prob[1] <= 0.0:
        point_mass(x, b, out.points, out.probs, out.buckets)
    else:
        out.points[0] = x
        out.buckets[0] = b
        out.probs[0] = mm.prob[0]
        x, b = _candidate(mm.idx[1], m, st.delta)
        out.points[1] = x
        out.buckets[1] = b
        out.probs[1] = mm.prob[1]
    return True


@kernel  # not inlined: numba drops the branch of a None mm only in a function of its own
def _drawn_numerator(mm, out, slot):
    """(a, e) with the drawn raw point = a/m + e delta: step 1's (drawn_numerator), or the
    minimax step's candidate j (_candidate: 0; j/m for j <= m; (j - m)/m + delta)."""
    if mm is None:
        a, e = drawn_numerator(out, slot)
    else:
        j = mm.idx[slot]
        a, e = (j, 0) if j <= mm.c.shape[0] else (j - mm.c.shape[0], 1)
    return a, e


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    """G_b += g, Q_b += g^2 for the drawn bucket, g = ptilde - y (sparse: F_k too, and every
    m rounds F_k summed afresh against rounding drift)."""
    b = out.buckets[slot]
    a, e = _drawn_numerator(st.mm, out, slot)
    add_to_bias(st.eb, b, a, e, y, st.G.shape[0], st.delta)
    g = out.points[slot] - y
    if st.dense:
        st.G[b] += g
        st.Q[b] += g * g
    else:
        msmwc.update_lanes(b, g, st.G, st.Q, st.lanes, st.tpad)
        if (hist.t + 1) % st.G.shape[0] == 0:
            msmwc.resum_normaliser(st.off, st.S, st.terms)


# _nrt=False: the loop allocates nothing, so it is compiled without numba's reference counting,
# which otherwise takes and releases a reference to every state array the inlined forecast and
# observe touch, every round (measured: about 45% of a round; msmwc's vector kernels likewise).
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


def resolve(params, T):
    """oracle ("sparse" | "dense"), m (default max(2, ceil(m_scale sqrt(T) / ln T))), m_scale
    (default 1; not with m), delta (default min(1/T, 1/m); any 0 < delta <= 1/m), step
    ("two-point" | "minimax")."""
    out = {}
    oracle = params.get("oracle", "sparse")
    if oracle not in ("sparse", "dense"):
        raise ValidationError("oracle", "must be 'sparse' or 'dense'", value=oracle)
    out["oracle"] = oracle
    step = params.get("step", "two-point")
    if step not in ("two-point", "minimax"):
        raise ValidationError("step", "must be 'two-point' or 'minimax'", value=step)
    return {**out, **resolve_grid(params, T), "step": step}


def resolve_grid(params, T):
    """m, m_scale and delta of Algorithm 1's grid (shared by cdl and the forecasters built on it)."""
    out = {}
    if "m" in params and "m_scale" in params:
        raise ValidationError(
            "m_scale",
            "cannot be given with m",
            message="m and m_scale: give the number of buckets m or its scale m_scale, not both",
        )
    if "m" in params:
        out["m"] = given_m(params, T, default_cdl_m(T))
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


def report(st, rounds, seen):
    """Warn (ConvergenceWarning) about Lam solves that stopped at their cap since ``seen``; the
    kernels count them instead of stopping the run. Returns the new count."""
    capped = int(st.capped[0])
    if capped > seen:
        step = st.last_step[0]
        how = (
            "the normaliser evaluated to NaN"
            if math.isnan(step)
            else f"it stopped at its cap of {msmwc.LAM_MAX_STEPS} Newton/bisection steps, the last "
            f"step {step:.3g} above the tolerance {msmwc.LAM_STEP_TOL:g}"
        )
        warnings.warn(
            ConvergenceWarning(
                f"cdl forecaster: the MsMwC normaliser Lam did not converge in {capped - seen} round(s) "
                f"(of {rounds} so far): {how}; the bucket weights c of those rounds are approximate"
            ),
            stacklevel=4,
        )
    return capped


def expected_cdl_bound(T, m=None, delta=None) -> float:
    """The explicit upper bound on Algorithm 1's expected CDL against any adaptive adversary
    that this project's derivation gives (docs/algorithm1.md, "An explicit bound"):

        E[CDL] <= 2 E[ECE] <= 2 (1/m + (1 + m (64 + 32 ln K) + 17 sqrt(m T (ln K + ln(1 + T)))) / T),

    K = 2m + 1, for delta <= 1/T (the default): CDL <= 2 ECE; the stated bias of bucket i is
    G_i plus a rounding offset of at most n_i / m; sigma G_i <= sum_t X_t + R(Q_i) pathwise by
    the regret bounds (a) and (b) with MsMwC's constants, E[sum_t X_t] <= T delta <= 1, and
    sum_i sqrt(n_i) <= sqrt(m T). Loose: with the default m it exceeds 1 (says nothing, as
    CDL <= 1) for T below about 2^22, where it is 0.91; 0.11 at 2^34. O(1) cost.

    >>> round(expected_cdl_bound(2**40), 3)
    0.039
    """
    m = default_cdl_m(T) if m is None else int(m)
    if delta is not None and delta > 1.0 / T:
        raise ValidationError("delta", "the bound assumes delta <= 1/T", value=delta)
    K = 2 * m + 1
    bias = 1.0 + m * (64.0 + 32.0 * math.log(K)) + 17.0 * math.sqrt(m * T * (math.log(K) + math.log1p(T)))
    return 2.0 * (1.0 / m + bias / T)


def _grid_m(resolved):
    """m: the stated values are j/m."""
    return resolved["m"]


FORECASTER = ForecasterSpec(
    "cdl",
    init,
    forecast,
    observe,
    params={"oracle": "sparse", "m": None, "m_scale": 1.0, "delta": None, "step": "two-point"},
    # version 2: the vectorised oracle (msmwc.update_lanes, lam_lanes, lanes_logc). Same
    # algorithm; Lam and c round differently (polynomial exp, pairwise sums), so the step-1
    # probability r can differ in its last bits and, rarely, a draw with it. Version 3: step 1
    # decides on the exact signs of G (step1.ExactBias), not on the float sums, which leave a
    # residue such as -2.2e-16 where G_b is 0.
    version=3,
    resolve=resolve,
    loop=simulate,
    report=report,
    grid=_grid_m,
    doc=__doc__,
)
