"""The MsMwC oracle of Algorithm 1 with learning-rate copies, in closed form (docs/algorithm1.md).

K = 2m + 1 experts (bucket i with sign +/-, and one expert with gain 0), each copied
K_eta = ceil(0.5 log2 T) + 1 times at rates eta_k = 2^-k / 32 with prior rho_k / K,
rho_k proportional to eta_k^2. With hint 0, fixed rates and no clipping the weights are

    w_(i,+-,k) = (rho_k / K) exp(-eta_k Lam) exp(-32 eta_k^2 Q_i) exp(+-eta_k G_i),

so the whole state is (G_i, Q_i) per bucket, and

    c_i = sum_k (rho_k/K) e^{-eta_k Lam} e^{-32 eta_k^2 Q_i} 2 sinh(eta_k G_i)   (sign = sign G_i),
    Lam solves sum_k (rho_k/K) F_k e^{-eta_k Lam} = 1,
    F_k = 1 + sum_i 2 cosh(eta_k G_i) e^{-32 eta_k^2 Q_i}.

Sparse exact form (docs/algorithm1.md): F_k is kept as exp(off_k) * S_k and changed
only for the drawn bucket, O(K_eta) per round; each bucket's term is cached (memory
O(m K_eta)) and recomputed from (G_i, Q_i) whenever the bucket is drawn, and every m rounds
S_k is summed afresh from the cached terms against rounding drift. Lam is found by Newton
on the convex decreasing log-normaliser, warm-started from the last mixed round and
safeguarded by bisection; c is needed only at the two buckets of a mixed step. Per round
O(K_eta * Newton steps), independent of m. Equal to the dense form up to float rounding
and the Lam tolerance (tests: ln|c| within 1e-9, in practice ~1e-12).

The sparse form runs vectorised (update_lanes, lam_lanes, lanes_logc): the per-copy state
is a structure of arrays padded to the vector width, every exp is lane_exp's polynomial
(so the loops compile to AVX-512/AVX2 code), each bucket's tanh(eta_k |G_i|) is cached
beside its term (so c needs no exps), and the copies' weights at the root are kept from
solve to solve and moved by a polynomial factor when Lam moves a little; the three kernels
are compiled without numba's reference counting (_nrt=False: they allocate nothing). The scalar
kernels (update_bucket, sparse_lam, sparse_logc) state the same numbers copy by copy;
update_bucket and sparse_logc are also the fallbacks for the rare offset moves and
underflows.

Dense form: every weight formed explicitly each round and normalised, O(m K_eta) per
round. The reference for the sparse form and the benchmark baseline.
"""

import math

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.lane_exp import exp_lane, expm1_lane

RESCALE = 600.0  # keep exp(new - off_k) below e^600 in the scaled sums S_k
TINY_S = 1e-30  # renormalise S_k below this, so S_k stays in [1e-30, (m+1) e^600]
LAM_STEP_TOL = 1e-5  # stop when a Newton step is this small: the next error is O(step^2)
LAM_MAX_STEPS = 200  # evaluations before solve_lam gives up and says so (warm starts need 1-2)


def n_copies(T):
    """K_eta = ceil(0.5 log2 T) + 1, exactly: the smallest j with 4^j >= T, plus one."""
    j = 0
    while 4**j < T:
        j += 1
    return j + 1


@kernel
def copy_rates(m, eta, logpi):
    """Fill eta_k = 2^-k / 32 and logpi_k = ln(rho_k / K), rho_k = eta_k^2 / sum_j eta_j^2."""
    K = 2 * m + 1
    total = 0.0
    for k in range(eta.shape[0]):
        eta[k] = 2.0 ** (-k) / 32.0
        total += eta[k] * eta[k]
    for k in range(eta.shape[0]):
        logpi[k] = math.log(eta[k] * eta[k] / total) - math.log(K)


@kernel
def refresh_normaliser(G, Q, eta, off, S, terms):
    """Recompute every F_k = exp(off_k) S_k and every bucket's term from scratch, O(m K_eta).

    Bucket i's term in F_k is exp(u) (1 + e) with u = eta_k |G_i| - 32 eta_k^2 Q_i - off_k
    and e = exp(-2 eta_k |G_i|) (= 2 cosh(eta_k G_i) exp(-32 eta_k^2 Q_i - off_k)); off_k is
    the largest u + off_k (or 0, the aux expert's exponent), and terms[i, k] holds the term.
    The same formula, to the bit, as update_bucket and update_lanes.
    """
    m = G.shape[0]
    K_eta = eta.shape[0]
    for k in range(K_eta):
        top = 0.0
        for i in range(m):
            u = eta[k] * abs(G[i]) - 32.0 * eta[k] * eta[k] * Q[i]
            if u > top:
                top = u
        off[k] = top
        S[k] = math.exp(-top)
    for i in range(m):
        x = abs(G[i])
        for k in range(K_eta):
            t, _ = _term(eta[k] * x - 32.0 * eta[k] * eta[k] * Q[i] - off[k], eta[k], x)
            terms[i, k] = t
            S[k] += t


@kernel(inline="always")
def _term(u, eta, x):
    """(term, tanh): a bucket's term exp(u) (1 + e) in a scaled normaliser, e = exp(-2 eta x),
    and tanh(eta x) = (1 - e) / (1 + e), both through em = expm1(-2 eta x) = e - 1, which
    keeps tanh's relative precision for small x (vectorisable)."""
    em = expm1_lane(-2.0 * eta * x)
    return exp_lane(u) * (2.0 + em), -em / (2.0 + em)


@kernel
def resum_normaliser(off, S, terms):
    """S_k = exp(-off_k) + sum_i terms[i, k]: F_k summed afresh, O(m K_eta) additions.

    Each cached term is an exact function of its bucket's current (G_i, Q_i) (recomputed at
    every update, never by ratios), so summing them anew removes all the rounding drift of
    the subtractive updates of S_k; this is the every-m-rounds recomputation of docs/algorithm1.md at
    the cost of additions rather than exps.
    """
    for k in range(S.shape[0]):
        S[k] = math.exp(-off[k])
    for i in range(terms.shape[0]):
        for k in range(S.shape[0]):
            S[k] += terms[i, k]


@kernel
def _shift_offset(k, shift, off, S, terms):
    """off_k += shift, rescaling S_k and column k of terms (rare: O(m))."""
    f = math.exp(-shift)
    off[k] += shift
    S[k] *= f
    for i in range(terms.shape[0]):
        terms[i, k] *= f


@kernel
def update_bucket(i, g, G, Q, eta, off, S, terms):
    """Add gain g to bucket i (G_i += g, Q_i += g^2) and update every F_k for it, O(K_eta).

    S_k += new term - old term (the old one is cached in terms[i, k]). One round changes the
    term by a factor in [e^-1/16, e^1/16] (eta_k <= 1/32, |g| <= 1), so the subtractive
    update loses at most a constant factor of relative precision per round;
    resum_normaliser every m rounds removes the drift. off_k moves only when a term would
    exceed e^RESCALE or S_k falls below TINY_S. The copy-by-copy form of update_lanes (the
    same numbers), which calls it when an offset must move.
    """
    Gn = G[i] + g
    Qn = Q[i] + g * g
    x = abs(Gn)
    for k in range(eta.shape[0]):
        u = eta[k] * x - 32.0 * eta[k] * eta[k] * Qn - off[k]
        if u > RESCALE:
            _shift_offset(k, u, off, S, terms)
            u = 0.0
        t, _ = _term(u, eta[k], x)
        S[k] += t - terms[i, k]
        terms[i, k] = t
        if S[k] < TINY_S:
            _shift_offset(k, math.log(S[k]), off, S, terms)
    G[i] = Gn
    Q[i] = Qn


# -- the vectorised oracle ---------------------------------------------------------------
#
# The per-copy state is kept as rows of one array ``lanes`` (structure of arrays), each row
# padded from K_eta to a multiple of LANE copies (width P), and per bucket i a row of ``tpad``
# (m x (2P + 1)): the terms tpad[i, :P], tanh(eta_k |G_i|) in tpad[i, P:2P], and in
# tpad[i, 2P] the |G_i| those tanh belong to (a bucket whose G was set by other means, then
# refresh_normaliser, gets them recomputed). Every per-copy loop then runs over whole vector registers, with no
# scalar remainder, and its exps are exp_lane's arithmetic. Padding copies are neutral: rate
# 0, prior 0 (ln 0 = -inf), offset 0, S = 1 and terms 2 (= exp(0) (1 + exp(0)), which an
# update leaves unchanged), so they add exactly 0 to every sum. The state's eta, logpi, off,
# S, b, w and terms are views of the first K_eta copies.

LANE = 8  # float64 per AVX-512 register; the rows are padded to a multiple of it
ETA, E32, LOGPI, OFF, SUM, B, W, V, T1, T2, SCALARS = range(11)  # the rows of ``lanes``
# lanes[SCALARS, .]: TOP the shift of the V row, AT the Lam it holds, AGE its reuses (lam_lanes)
TOP, AT, AGE = range(3)
REUSE = 16  # moves of the weights V (lam_lanes) before they are formed afresh with exps
MOVE = 0.05  # the largest move of Lam done by a polynomial factor (_move)


def n_lanes(K_eta):
    """The padded width: K_eta rounded up to a multiple of LANE."""
    return LANE * ((K_eta + LANE - 1) // LANE)


@kernel
def new_lanes(m, K_eta):
    """(lanes, tpad) of a fresh oracle: rates, priors and neutral padding; G = Q = 0 terms
    are left to refresh_normaliser. O(m K_eta)."""
    P = LANE * ((K_eta + LANE - 1) // LANE)
    lanes = np.zeros((SCALARS + 1, P))
    tpad = np.zeros((m, 2 * P + 1))
    tpad[:, :P] = 2.0
    copy_rates(m, lanes[ETA, :K_eta], lanes[LOGPI, :K_eta])
    for k in range(P):
        lanes[E32, k] = 32.0 * lanes[ETA, k] * lanes[ETA, k]
        if k >= K_eta:
            lanes[LOGPI, k] = -np.inf
            lanes[B, k] = -np.inf
            lanes[SUM, k] = 1.0
    lanes[SCALARS, AGE] = np.inf  # no V yet
    return lanes, tpad


@kernel(inline="always")
def _u(k):
    """k as an unsigned index. numba adds a negative-index wraparound to a signed index unless
    LLVM can prove it non-negative, which it cannot for a runtime sum like P + k or j + 1; that
    select keeps a loop from vectorising. An unsigned index has none (the indices here are >= 0)."""
    return np.uint64(k)


@kernel(inline="always")
def _tree_sum(lanes, r):
    """lanes[r, 0] + ... + lanes[r, P-1] (P a multiple of LANE) in a fixed order: eight
    running sums a_l = sum_j lanes[r, LANE j + l], then ((a0 + a4) + (a2 + a6)) + ((a1 + a5) +
    (a3 + a7)). The same bits on every machine, and no stores."""
    a0, a1, a2, a3 = lanes[r, 0], lanes[r, 1], lanes[r, 2], lanes[r, 3]
    a4, a5, a6, a7 = lanes[r, 4], lanes[r, 5], lanes[r, 6], lanes[r, 7]
    for j in range(LANE, lanes.shape[1], LANE):
        a0 += lanes[r, _u(j)]
        a1 += lanes[r, _u(j + 1)]
        a2 += lanes[r, _u(j + 2)]
        a3 += lanes[r, _u(j + 3)]
        a4 += lanes[r, _u(j + 4)]
        a5 += lanes[r, _u(j + 5)]
        a6 += lanes[r, _u(j + 6)]
        a7 += lanes[r, _u(j + 7)]
    return ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))


@kernel(inline="always")
def _tree_max(lanes, r):
    """max_k lanes[r, k], folded like _tree_sum."""
    a0, a1, a2, a3 = lanes[r, 0], lanes[r, 1], lanes[r, 2], lanes[r, 3]
    a4, a5, a6, a7 = lanes[r, 4], lanes[r, 5], lanes[r, 6], lanes[r, 7]
    for j in range(LANE, lanes.shape[1], LANE):
        a0 = max(a0, lanes[r, _u(j)])
        a1 = max(a1, lanes[r, _u(j + 1)])
        a2 = max(a2, lanes[r, _u(j + 2)])
        a3 = max(a3, lanes[r, _u(j + 3)])
        a4 = max(a4, lanes[r, _u(j + 4)])
        a5 = max(a5, lanes[r, _u(j + 5)])
        a6 = max(a6, lanes[r, _u(j + 6)])
        a7 = max(a7, lanes[r, _u(j + 7)])
    return max(max(max(a0, a4), max(a2, a6)), max(max(a1, a5), max(a3, a7)))


@kernel
def _update_moving_offsets(i, g, x, G, Q, lanes, tpad):
    """update_lanes' rare case, an offset to move (a term above e^RESCALE): update_bucket
    copy by copy on the first K_eta copies, then the bucket's tanh."""
    P = lanes.shape[1]
    K_eta = 0
    while K_eta < P and lanes[ETA, K_eta] > 0.0:
        K_eta += 1
    update_bucket(i, g, G, Q, lanes[ETA, :K_eta], lanes[OFF, :K_eta], lanes[SUM, :K_eta], tpad[:, :K_eta])
    _tanh_row(i, x, lanes, tpad)


# error_model="numpy": a float division by zero gives inf or NaN instead of raising, which
# keeps the per-copy loops free of branches (none of them divides by zero).
# _nrt=False: update_lanes, lam_lanes and lanes_logc(_pair) allocate nothing, so they are
# compiled without numba's runtime, and numba then emits no reference counting of their array
# arguments (an atomic increment and decrement of each array's count at every call and at every
# inlined helper that takes an array: measured, more time than their arithmetic). Their callers
# hold the arrays. An allocation added to them fails to compile rather than leak.
@kernel(error_model="numpy", _nrt=False)
def update_lanes(i, g, G, Q, lanes, tpad):
    """update_bucket on whole vector registers: G_i += g, Q_i += g^2, S_k += new term - old
    term for every copy, O(K_eta) in about K_eta / LANE vector steps.

    The same numbers as update_bucket, to the bit (both form each term with _term); when an
    offset must move (a term above e^RESCALE, rare) the round is left to update_bucket.
    """
    P = lanes.shape[1]
    Gn = G[i] + g
    Qn = Q[i] + g * g
    x = abs(Gn)
    for k in range(P):
        lanes[T1, k] = lanes[ETA, k] * x - lanes[E32, k] * Qn - lanes[OFF, k]
    if _tree_max(lanes, T1) > RESCALE:
        _update_moving_offsets(i, g, x, G, Q, lanes, tpad)
        return
    for k in range(P):
        t, th = _term(lanes[T1, k], lanes[ETA, k], x)
        lanes[SUM, k] += t - tpad[i, k]
        tpad[i, k] = t
        tpad[i, _u(P + k)] = th
    tpad[i, 2 * P] = x
    small = 0
    for k in range(P):  # (a count kept in the loop above would keep it from vectorising)
        small += lanes[SUM, k] < TINY_S
    if small:  # rare: each shift changes copy k's S only, so testing first changes nothing
        for k in range(P):
            if lanes[SUM, k] < TINY_S:
                _shift_offset(k, math.log(lanes[SUM, k]), lanes[OFF], lanes[SUM], tpad)
    G[i] = Gn
    Q[i] = Qn


@kernel(inline="always")
def _evaluate(lanes, lam):
    """phi(lam) = ln sum_k S_k exp(b_k - eta_k lam) and d = -phi'(lam), as log_normaliser,
    with every weight formed afresh: V = exp(b - eta lam - top), top = max_k(b_k - eta_k lam)
    in lanes[SCALARS, TOP], lam in lanes[SCALARS, AT]."""
    P = lanes.shape[1]
    for k in range(P):
        a = lanes[B, k] - lanes[ETA, k] * lam
        lanes[T1, k] = a
    top = _tree_max(lanes, T1)
    for k in range(P):
        lanes[V, k] = exp_lane(lanes[T1, k] - top)
    lanes[SCALARS, TOP] = top
    lanes[SCALARS, AT] = lam
    lanes[SCALARS, AGE] = 0.0
    return _sums(lanes)


@kernel(inline="always")
def _sums(lanes):
    """(phi, d) from the weights V (relative to top) and the current S."""
    P = lanes.shape[1]
    for k in range(P):
        t = lanes[SUM, k] * lanes[V, k]
        lanes[T1, k] = t
        lanes[T2, k] = lanes[ETA, k] * t
    s = _tree_sum(lanes, T1)
    return lanes[SCALARS, TOP] + math.log(s), _tree_sum(lanes, T2) / s


@kernel(inline="always")
def _move(lanes, lam):
    """Move the weights V from lanes[SCALARS, AT] to lam (|lam - AT| <= MOVE): V_k *= exp(-a),
    a = eta_k (lam - AT), |a| <= MOVE / 32 = 1.6e-3, by its Taylor polynomial of degree 6
    (truncation error a^7 / 7! < 6e-24, far below rounding): no exps."""
    s = lam - lanes[SCALARS, AT]
    for k in range(lanes.shape[1] if s != 0.0 else 0):  # s = 0 (a warm start): every factor is 1 exactly
        a = lanes[ETA, k] * s
        a2 = a * a
        f = (1.0 - a) + a2 * ((0.5 - a * (1.0 / 6.0)) + a2 * ((1.0 / 24.0 - a * (1.0 / 120.0)) + a2 * (1.0 / 720.0)))
        lanes[V, k] *= f
    lanes[SCALARS, AT] = lam
    lanes[SCALARS, AGE] += 1.0


@kernel(error_model="numpy", _nrt=False)
def _evaluate_once(lanes, lam):
    """:func:`_evaluate` as a call, for lam_lanes' two evaluations after its Newton loop: each
    copy of _evaluate inlined (its vector exps) adds a second to lam_lanes' compilation, and
    these run once a solve."""
    return _evaluate(lanes, lam)


@kernel(error_model="numpy", _nrt=False)
def lam_lanes(lanes, lam0, max_steps=None):
    """solve_lam for the sparse normaliser (b_k = ln(rho_k/K) + off_k, w_k = S_k) on whole
    vector registers: the same Newton/bisection steps, stopping rule and results
    (lam, converged, step). O(K_eta / LANE) vector steps per Newton step.

    Leaves the copies' weights at the root for lanes_logc: V = exp(b - eta Lam - top), top
    in lanes[SCALARS, TOP] and Lam in lanes[SCALARS, AT]. The weights are kept from solve to
    solve: as long as no offset moved (the b_k are unchanged), an evaluation at a point
    within MOVE of the weights' point moves them there by a polynomial factor (_move)
    instead of forming them with exps; the root returned (lam + step, |step| <= 1e-5) is
    reached the same way. Each move adds at most 3 ulps to the relative error of V (one
    rounded factor, one product), so after REUSE moves V is formed afresh.
    """
    P = lanes.shape[1]
    moved = 0
    for k in range(P):
        b = lanes[LOGPI, k] + lanes[OFF, k]
        moved += b != lanes[B, k]
        lanes[B, k] = b
    if moved:
        lanes[SCALARS, AGE] = np.inf
    lo = -np.inf
    hi = np.inf
    lam = lam0
    step = np.inf
    cap = LAM_MAX_STEPS if max_steps is None else max_steps
    for _ in range(cap):
        if lanes[SCALARS, AGE] < REUSE and abs(lam - lanes[SCALARS, AT]) <= MOVE:
            _move(lanes, lam)
            phi, d = _sums(lanes)
        else:
            phi, d = _evaluate(lanes, lam)
        if phi > 0.0:
            lo = lam
        elif phi < 0.0:
            hi = lam
        elif phi == 0.0:
            return lam, True, 0.0
        else:  # NaN: no root to find from here
            lanes[SCALARS, AGE] = np.inf
            return lam, False, np.nan
        nxt = lam + phi / d
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        if abs(nxt - lam) <= LAM_STEP_TOL:
            if lanes[SCALARS, AGE] < REUSE:
                _move(lanes, nxt)
            else:
                _evaluate_once(lanes, nxt)
            return nxt, True, abs(nxt - lam)
        step = abs(nxt - lam)
        lam = nxt
    _evaluate_once(lanes, lam)
    return lam, False, step


@kernel
def _tanh_row(i, x, lanes, tpad):
    """tpad[i, P:2P] = tanh(eta_k x) as _term forms them, and tpad[i, 2P] = x."""
    P = lanes.shape[1]
    for k in range(P):
        em = expm1_lane(-2.0 * lanes[ETA, k] * x)
        lanes[T2, k] = -em / (2.0 + em)
    for k in range(P):
        tpad[i, _u(P + k)] = lanes[T2, k]
    tpad[i, 2 * P] = x


@kernel(inline="always")
def _weighted(lanes, r, i, G, tpad):
    """Row r = V_k tpad[i, k] tanh(eta_k |G_i|) (the tanh recomputed if G_i was set by other means)."""
    P = lanes.shape[1]
    x = abs(G[i])
    if tpad[i, 2 * P] != x:
        _tanh_row(i, x, lanes, tpad)
    for k in range(P):
        lanes[r, k] = lanes[V, k] * tpad[i, k] * tpad[i, _u(P + k)]


@kernel(inline="always")
def _finish_logc(s, i, G, Q, lam, lanes):
    if G[i] == 0.0:
        return -np.inf
    if s > 1e-290 and s < np.inf:
        return lanes[SCALARS, TOP] + math.log(s)
    return _logc_in_log_space(i, G, Q, lam, lanes)


@kernel
def _logc_in_log_space(i, G, Q, lam, lanes):
    """lanes_logc's rare case (its sum underflowed): sparse_logc over the padded rows."""
    return sparse_logc(i, G, Q, lanes[ETA], lanes[LOGPI], lam)


@kernel(error_model="numpy", _nrt=False)
def lanes_logc(i, G, Q, lam, lanes, tpad):
    """ln|c_i| at the Lam of the last lam_lanes (-inf when G_i = 0; c_i has the sign of G_i),
    O(K_eta / LANE) vector steps and one log.

    With V_k = exp(b_k - eta_k Lam - top) from the solve, the cached term
    tpad[i, k] = 2 cosh(eta_k G_i) exp(-32 eta_k^2 Q_i - off_k) and the cached
    tpad[i, P + k] = tanh(eta_k |G_i|) (both formed by the update, no exps here),

        c_i = e^top sum_k V_k tpad[i, k] tanh(eta_k |G_i|),

    tanh y = -expm1(-2y) / (2 + expm1(-2y)) (relative precision for small and large y). If
    the sum falls below 1e-290 (terms lost to underflow could matter) it is redone in log
    space (sparse_logc).
    """
    _weighted(lanes, T1, i, G, tpad)
    return _finish_logc(_tree_sum(lanes, T1), i, G, Q, lam, lanes)


@kernel(error_model="numpy", _nrt=False)
def lanes_logc_pair(lo, G, Q, lam, lanes, tpad):
    """(lanes_logc(lo), lanes_logc(lo + 1)), the same bits."""
    _weighted(lanes, T1, lo, G, tpad)
    _weighted(lanes, T2, lo + 1, G, tpad)
    s0 = _tree_sum(lanes, T1)
    s1 = _tree_sum(lanes, T2)
    return _finish_logc(s0, lo, G, Q, lam, lanes), _finish_logc(s1, lo + 1, G, Q, lam, lanes)


@kernel
def log_normaliser(b, w, eta, lam):
    """(phi, d): phi = ln sum_k w_k exp(b_k - eta_k lam), d = -phi'(lam) (the weighted mean of eta).

    Shifted by max_k (b_k - eta_k lam); w_k lies in [TINY_S, (m+1) e^RESCALE], so no term
    that matters can underflow.
    """
    top = -np.inf
    for k in range(b.shape[0]):
        v = b[k] - eta[k] * lam
        if v > top:
            top = v
    s = 0.0
    se = 0.0
    for k in range(b.shape[0]):
        t = w[k] * math.exp(b[k] - eta[k] * lam - top)
        s += t
        se += eta[k] * t
    return top + math.log(s), se / s


@kernel
def solve_lam(b, w, eta, lam0, max_steps=None):
    """The root Lam of sum_k w_k exp(b_k - eta_k Lam) = 1, i.e. sum_k (rho_k/K) F_k e^{-eta_k Lam} = 1
    with b_k = ln(rho_k/K) + off_k and w_k = S_k.

    phi(lam) = ln sum_k w_k exp(b_k - eta_k lam) is convex and decreasing with slope in
    [-max eta, -min eta], so Newton from any start converges (monotonically after the
    first step); the bracket of signs seen so far guards against rounding. Stops when a
    step s is below LAM_STEP_TOL = 1e-5 and returns the stepped point, whose error is at
    most s^2 phi''/(2|phi'|) <= s^2 (max eta - min eta) max eta / (2 min eta) <= 2e-12 sqrt(T)
    (in practice about s^2 / 64): it moves c by under 1e-10 relative (c depends on Lam
    through exp(-eta_k Lam), eta_k <= 1/32). Warm-started, one or two evaluations.

    Returns (lam, converged, step). After ``max_steps`` evaluations (default
    LAM_MAX_STEPS, read when the kernel compiles) without a step below
    the tolerance it returns the last iterate with converged False and the size of the
    last step taken, so the caller can report how far from converged it stopped (this
    needs, say, a root so large that adjacent floats are further apart than the
    tolerance). A NaN normaliser also returns converged False, with step NaN. The
    iterates themselves do not depend on max_steps.
    """
    lo = -np.inf
    hi = np.inf
    lam = lam0
    step = np.inf
    cap = LAM_MAX_STEPS if max_steps is None else max_steps
    for _ in range(cap):
        phi, d = log_normaliser(b, w, eta, lam)
        if phi > 0.0:
            lo = lam
        elif phi < 0.0:
            hi = lam
        elif phi == 0.0:
            return lam, True, 0.0
        else:  # NaN: no root to find from here
            return lam, False, np.nan
        nxt = lam + phi / d
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        if abs(nxt - lam) <= LAM_STEP_TOL:
            return nxt, True, abs(nxt - lam)
        step = abs(nxt - lam)
        lam = nxt
    return lam, False, step


@kernel
def sparse_lam(eta, logpi, off, S, b, lam0):
    """Lam from the scaled normalisers F_k = exp(off_k) S_k, O(K_eta * Newton steps).
    Returns solve_lam's (lam, converged, step)."""
    for k in range(eta.shape[0]):
        b[k] = logpi[k] + off[k]
    return solve_lam(b, S, eta, lam0)


@kernel
def sparse_logc(i, G, Q, eta, logpi, lam):
    """ln|c_i| in log space, O(K_eta); -inf when G_i = 0. The sign of c_i is the sign of G_i.

    ln|c_i| = logsumexp_k(ln(rho_k/K) - eta_k Lam - 32 eta_k^2 Q_i + ln 2 sinh(eta_k |G_i|)),
    with ln 2 sinh x = x + ln d, d = 1 - e^{-2x}: d_0 = -expm1(-2 eta_0 |G_i|) and, as
    eta_{k+1} = eta_k / 2, d_{k+1} = d_k / (1 + e_{k+1}) with e_{k+1} = sqrt(e_k), exact
    and free of cancellation for small and large |G_i| alike.
    """
    x = abs(G[i])
    if x == 0.0:
        return -np.inf
    top = -np.inf
    for k in range(eta.shape[0]):
        u = logpi[k] - eta[k] * lam - 32.0 * eta[k] * eta[k] * Q[i] + eta[k] * x
        if u > top:
            top = u
    e = math.exp(-2.0 * eta[0] * x)
    d = -math.expm1(-2.0 * eta[0] * x)
    s = 0.0
    for k in range(eta.shape[0]):
        if k > 0:
            e = math.sqrt(e)
            d = d / (1.0 + e)
        u = logpi[k] - eta[k] * lam - 32.0 * eta[k] * eta[k] * Q[i] + eta[k] * x
        s += math.exp(u - top) * d
    return top + math.log(s)


@kernel
def dense_weights(G, Q, eta, logpi, b, w, lam0, c):
    """The direct oracle: every weight formed explicitly and normalised, O(m K_eta).

    F_k = 1 + sum_i (e^{eta G_i} + e^{-eta G_i}) e^{-32 eta^2 Q_i} is summed in full
    (shifted by its largest exponent), Lam is solved, then w_(i,+-,k) are formed,
    c_i = sum_k w_(i,+,k) - w_(i,-,k) (through 2 sinh for |eta G| < 1, which keeps the
    sign of G and the relative precision), and c is divided by the total weight
    (1 up to the Lam tolerance). Returns solve_lam's (Lam, converged, step); c is
    written in place.
    """
    m = G.shape[0]
    for k in range(eta.shape[0]):
        top = 0.0
        for i in range(m):
            v = eta[k] * abs(G[i]) - 32.0 * eta[k] * eta[k] * Q[i]
            if v > top:
                top = v
        tot = math.exp(-top)
        for i in range(m):
            base = -32.0 * eta[k] * eta[k] * Q[i] - top
            tot += math.exp(base + eta[k] * G[i]) + math.exp(base - eta[k] * G[i])
        b[k] = logpi[k] + top
        w[k] = tot
    lam, converged, step = solve_lam(b, w, eta, lam0)
    total = 0.0
    for k in range(eta.shape[0]):
        total += math.exp(logpi[k] - eta[k] * lam)  # the aux expert
    for i in range(m):
        ci = 0.0
        for k in range(eta.shape[0]):
            base = logpi[k] - eta[k] * lam - 32.0 * eta[k] * eta[k] * Q[i]
            x = eta[k] * G[i]
            wp = math.exp(base + x)
            wm = math.exp(base - x)
            total += wp + wm
            if abs(x) < 1.0:
                ci += 2.0 * math.sinh(x) * math.exp(base)
            else:
                ci += wp - wm
        c[i] = ci
    for i in range(m):
        c[i] /= total
    return lam, converged, step
