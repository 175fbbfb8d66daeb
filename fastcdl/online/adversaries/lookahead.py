"""lookahead(kinks = 32): one-step lookahead on the CDL of the stated table, kept up to date.

The calibration decision loss is 2 fbar(1/2), fbar the upper concave envelope of the
V-shaped decision-loss curve f(mu) = (1/T) sum_i n_i v_i(mu) (docs/exact-cdl.md). This
adversary keeps f on the kink grid mu_j = j/K, j = 0..K (K = kinks, a power of two, so
every kink is exactly a float), as the exact
integers K T f(mu_j) = sum_i K n_i v_i(mu_j), in its scratch memory, and updates it for the
one bucket that changed in the previous round (O(K) per round, never recomputed from the
table). Each round it chooses the y that maximises the expected value, over the round's
distribution, of CDL_K after the round: twice the envelope of the grid points at 1/2. CDL_K
never exceeds the table's CDL and is within about 2/K of it (f has slope at most 1 between
its jumps).
Ties go to a fair coin. The two expectations are rationals whose numerators outgrow what can
be compared exactly in a few floats (up to 2^50 before the probabilities), so a tie is decided
with a documented tolerance: the expectations are equal when they differ by at most TIE_REL
= 16 units of roundoff relative to the larger (their evaluation rounds a few times, each time
by at most one unit), so an exact tie that two evaluation orders round apart still tosses the
coin; two expectations that truly differ by less than that are also a tie. Cost O(K^2) per
round (the envelope at 1/2 by its chords).

Against a forecaster whose rounds put mass on more than two stated values (support K > 2,
engine.slots and engine.slot) the expectation runs over every slot of positive probability,
sum_i p_i CDL_K(table with bucket b_i gaining one round with outcome y), in slot order (for
two slots the sum above, to the bit). Its scratch memory cannot hold K slots, so the bucket
that gained the previous round is found from the table's weighted count W = sum_b (b + 1) n_b
(fastcdl.online.adversaries._lastround: O(m) a round more). The two-point code is unchanged.

>>> ADVERSARY.resolve_params({})
{'kinks': 32}
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int
from fastcdl.online.adversaries._lastround import gained_bucket
from fastcdl.online.engine import k_point_only, slot, slots, two_point_only, uniform
from fastcdl.online.plugins import AdversarySpec

# scratch layout after par[0] = K: F_0..F_K, then the two slots seen last round (bucket,
# n, s each) and a flag that they are set (against a K-point forecaster: the table's weighted
# count W in the first of those slots, and the flag)
_F = 1
TIE_REL = 16.0 * 2.0**-53  # expectations this close (relative) are a tie: docstring


@kernel
def scaled_loss(q, n, s, j, K):
    """K n v(mu_j) of a bucket with stated value q, n rounds and s outcomes y = 1, mu_j = j / K
    (the tie rule of f: mu = q counts when q is above the bucket's frequency)."""
    mu = j / K
    d = K * s - j * n  # K n (qhat - mu), exact
    if q < mu and d > 0:
        return float(d)
    if mu <= q and d < 0:
        return float(-d)
    return 0.0


@kernel
def envelope_at_half(par, K, b, dn, ds, q, n, s):
    """2 K T fbar_K(1/2) of the grid values par[_F + j] with bucket b's term changed from
    (n, s) to (n + dn, s + ds); returned as a float of the exact best chord."""
    h = K // 2
    best_num, best_den = 0.0, 1.0
    for a in range(h + 1):
        fa = par[_F + a] + scaled_loss(q, n + dn, s + ds, a, K) - scaled_loss(q, n, s, a, K)
        for c in range(h, K + 1):
            fc = par[_F + c] + scaled_loss(q, n + dn, s + ds, c, K) - scaled_loss(q, n, s, c, K)
            if a == c:
                num, den = fa, 1.0
            else:
                num, den = fa * (c - h) + fc * (h - a), float(c - a)
            if num * best_den > best_num * den:
                best_num, best_den = num, den
    return 2.0 * (best_num / best_den)


@kernel
def catch_up(par, table, K):
    """Fold the previous round into the grid values: the slot whose bucket gained a round."""
    base = _F + K + 1
    if par[base + 6] == 0.0:
        return
    for k in range(2):
        b = int(par[base + 3 * k])
        n_old = int(par[base + 3 * k + 1])
        s_old = int(par[base + 3 * k + 2])
        if table.n[b] != n_old:
            for j in range(K + 1):
                par[_F + j] += scaled_loss(table.q[b], table.n[b], table.s[b], j, K) - scaled_loss(
                    table.q[b], n_old, s_old, j, K
                )
            return


@kernel
def expected_value(par, table, view, y, K):
    b0, b1 = view.bucket0, view.bucket1
    v = view.prob0 * envelope_at_half(par, K, b0, 1, y, table.q[b0], table.n[b0], table.s[b0])
    if view.prob1 > 0.0:
        v += view.prob1 * envelope_at_half(par, K, b1, 1, y, table.q[b1], table.n[b1], table.s[b1])
    return v


@kernel
def catch_up_k(par, table, K, prev_y):
    """Fold the previous round of a K-point run into the grid values: the bucket whose
    weighted count moved, from (n - 1, s - prev_y) to (n, s); remember W. O(m + K)."""
    base = _F + K + 1
    b, w = gained_bucket(table, par[base])
    if par[base + 6] != 0.0 and b >= 0:
        n, s = table.n[b], table.s[b]
        for j in range(K + 1):
            par[_F + j] += scaled_loss(table.q[b], n, s, j, K) - scaled_loss(table.q[b], n - 1, s - prev_y, j, K)
    par[base] = float(w)
    par[base + 6] = 1.0


@kernel
def expected_value_k(par, table, view, y, K):
    """The expectation over the round's K slots (those of positive probability)."""
    v = 0.0
    for i in range(slots(view, table)):
        p, q, b, x = slot(view, table, i)
        if p > 0.0:
            v += p * envelope_at_half(par, K, b, 1, y, q, table.n[b], table.s[b])
    return v


@kernel
def respond_k(view, table, par, rng):
    """respond against a K-point forecaster's table."""
    K = int(par[0])
    catch_up_k(par, table, K, view.prev_y)
    up = expected_value_k(par, table, view, 1, K)
    down = expected_value_k(par, table, view, 0, K)
    if abs(up - down) <= TIE_REL * max(abs(up), abs(down)):
        return 1 if uniform(rng) < 0.5 else 0
    return 1 if up > down else 0


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_respond_k = k_point_only(respond_k, 0)


@kernel(inline="always")
def respond_two(view, table, par, rng):
    """respond against a two-point forecaster's table."""
    K = int(par[0])
    catch_up(par, table, K)
    up = expected_value(par, table, view, 1, K)
    down = expected_value(par, table, view, 0, K)
    base = _F + K + 1
    par[base] = view.bucket0
    par[base + 1] = table.n[view.bucket0]
    par[base + 2] = table.s[view.bucket0]
    par[base + 3] = view.bucket1
    par[base + 4] = table.n[view.bucket1]
    par[base + 5] = table.s[view.bucket1]
    par[base + 6] = 1.0
    if abs(up - down) <= TIE_REL * max(abs(up), abs(down)):
        return 1 if uniform(rng) < 0.5 else 0
    return 1 if up > down else 0


# the two-point code, compiled for a two-point forecaster's table only (engine.two_point_only)
_respond_two = two_point_only(respond_two, 0)


@kernel
def respond(view, table, par, rng):
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        return _respond_k(view, table, par, rng)
    return _respond_two(view, table, par, rng)


def resolve(params, horizon):
    K = check_int(params.get("kinks", 32), "kinks", low=2)
    if K & (K - 1) or K > 4096:  # a power of two: every kink j/K is a float exactly
        raise ValidationError("kinks", "must be a power of two, at most 4096", value=K)
    return {"kinks": K}


# version 2: ties within TIE_REL (version 1 compared the float expectations exactly, so an exact
# tie rounded apart by the two evaluations skipped the coin)
ADVERSARY = AdversarySpec(
    "lookahead",
    respond,
    {"kinks": 32},
    version=2,
    resolve=resolve,
    doc=__doc__,
    scratch=lambda resolved: int(resolved["kinks"]) + 1 + 7,
    k_points=True,
)
