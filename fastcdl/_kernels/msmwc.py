"""The MsMwC oracle of Algorithm 1 with learning-rate copies, in closed form (docs/algorithm1.md).

K = 2m + 1 experts (bucket i with sign +/-, and one expert with gain 0), each copied
K_eta = ceil(0.5 log2 T) + 1 times at rates eta_k = 2^-k / 32 with prior rho_k / K,
rho_k proportional to eta_k^2. With hint 0, fixed rates and no clipping the weights are

    w_(i,+-,k) = (rho_k / K) exp(-eta_k Lam) exp(-32 eta_k^2 Q_i) exp(+-eta_k G_i),

so the whole state is (G_i, Q_i) per bucket, and

    c_i = sum_k (rho_k/K) e^{-eta_k Lam} e^{-32 eta_k^2 Q_i} 2 sinh(eta_k G_i)   (sign = sign G_i),
    Lam solves sum_k (rho_k/K) F_k e^{-eta_k Lam} = 1,
    F_k = 1 + sum_i 2 cosh(eta_k G_i) e^{-32 eta_k^2 Q_i}.

Sparse exact form (notes/msmwc.md section 6): F_k is kept as exp(off_k) * S_k and changed
only for the drawn bucket, O(K_eta) per round; each bucket's term is cached (memory
O(m K_eta)) and recomputed from (G_i, Q_i) whenever the bucket is drawn, and every m rounds
S_k is summed afresh from the cached terms against rounding drift. Lam is found by Newton
on the convex decreasing log-normaliser, warm-started from the last mixed round and
safeguarded by bisection; c is needed only at the two buckets of a mixed step, in log
space. Per round O(K_eta * Newton steps), independent of m. Equal to the dense form up
to float rounding and the Lam tolerance (tests: ln|c| within 1e-9, in practice ~1e-12).

Dense form: every weight formed explicitly each round and normalised, O(m K_eta) per
round. The reference for the sparse form and the benchmark baseline.
"""

import math

import numpy as np
from fastcdl._kernels._jit import kernel

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

    Bucket i's term in F_k is exp(u) (1 + e) with u = eta_k |G_i| - 32 eta_k^2 Q_i and
    e = exp(-2 eta_k |G_i|); off_k is the largest u (or 0, the aux expert's exponent), and
    terms[i, k] holds the term divided by exp(off_k). As eta_{k+1} = eta_k / 2,
    e_{k+1} = sqrt(e_k): one exp per copy and a square root replace ln(2 cosh).
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
        e = math.exp(-2.0 * eta[0] * x)
        for k in range(K_eta):
            if k > 0:
                e = math.sqrt(e)
            t = math.exp(eta[k] * x - 32.0 * eta[k] * eta[k] * Q[i] - off[k]) * (1.0 + e)
            terms[i, k] = t
            S[k] += t


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

    S_k += new term - old term (the old one is cached in terms[i, k]); one exp and one
    square root per copy. One round changes the term by a factor in [e^-1/16, e^1/16]
    (eta_k <= 1/32, |g| <= 1), so the subtractive update loses at most a constant factor
    of relative precision per round; resum_normaliser every m rounds removes the drift.
    off_k moves only when a term would exceed e^RESCALE or S_k falls below TINY_S.
    """
    Gn = G[i] + g
    Qn = Q[i] + g * g
    x = abs(Gn)
    e = math.exp(-2.0 * eta[0] * x)
    for k in range(eta.shape[0]):
        if k > 0:
            e = math.sqrt(e)
        u = eta[k] * x - 32.0 * eta[k] * eta[k] * Qn - off[k]
        if u > RESCALE:
            _shift_offset(k, u, off, S, terms)
            u = 0.0
        t = math.exp(u) * (1.0 + e)
        S[k] += t - terms[i, k]
        terms[i, k] = t
        if S[k] < TINY_S:
            _shift_offset(k, math.log(S[k]), off, S, terms)
    G[i] = Gn
    Q[i] = Qn


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
