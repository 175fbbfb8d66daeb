"""cdlahead: the exact one-step lookahead on the calibration decision loss (CDL).

Each round, the y in {0, 1} with the larger expected CDL of the stated table after the round,

    E(y) = prob0 CDL(table, bucket0 + one round with outcome y)
         + prob1 CDL(table, bucket1 + one round with outcome y)

over the round's published distribution (a point mass has prob1 = 0); a tie tosses a fair
coin, y = 1 when ``uniform(rng) < 0.5``. CDL is the exact 2 fbar(1/2) of docs/exact-cdl.md, the
value of fastcdl.cdl (and fastcdl._compiled.tablecdl.table_cdl) on the table after the round;
lookahead is the same rule on the kink grid j/K only. Both tables after the round have T + 1
rounds, so the options are compared unnormalised.

**Points.** f(mu) = (1/T) sum_i n_i v_i(mu) (v_i = qhat_i - mu on (q_i, qhat_i), mu - qhat_i on
(qhat_i, q_i], else 0) is, bucket by bucket, continuous except at q_i and bent upwards (slope
up by n_i) at qhat_i; so f is convex between consecutive stated values, and the upper concave
envelope of h = max(f, f(.+)) on [0, 1] is the upper hull of the m + 2 points (0, 0),
(q_j, h(q_j)) and (1, 0) (stated values strictly increasing, as the engine's are; f vanishes at
0 and 1 when they are not stated, and a point (x, 0) lies below h anyway). The frequencies are
no candidates. At a stated value only bucket j jumps, so

    T h(q_j) = sum over i != j of n_i v_i(q_j) + |n_j q_j - s_j|,

bucket j's ramp taken at q_j when qhat_j < q_j (closed there) and just right of it otherwise.

**State.** With the stated values as the table's fractions num_j / den (den <= 2^20),
H_j = den T h(q_j) is an integer, kept in the scratch memory and updated for the one bucket
that gained the previous round: O(m), no rounding while den T < 2^53 (T < 2^33 for any den,
T < 2^42 for den <= 2048 such as the grids j/m with m <= 2048). An option changes bucket b only:
its h(q_j) is H_j + den (n'_b v'_b(q_j) - n_b v_b(q_j)) for j != b and H_b with bucket b's own
term replaced, O(1) each, exact integers.

**Envelope at 1/2.** The larger of h at a stated value 1/2 (if any) and the bridge over 1/2:
the chord between a point left of 1/2 and a point right of it (strictly) of largest value at
1/2, found by alternating tangents. Scan the left points for the best left end given the right
end, then the right points for the best right end given that left end, until the right end
stays. At the fixed point every left and every right point lies on or below the line
through the two ends: it is the bridge. Each alternation raises the value strictly, and the
slopes of the tangents approach the bridge's monotonically from both sides, so each end walks
monotonically along its side's upper hull: at most m + 2 alternations, O(m^2) in the worst
case. It starts from the previous bridge (a round moves it little): against cdl, 1.0006
alternations per option at T = 2^14 and 1.0002 at 2^18 (measured). So a round is at most 4
options (2 outcomes x 2 slots), each about one scan of the m + 2 points, and the update: O(m),
allocating nothing (the simulate loops are compiled without numba's reference counting).

**K-point rounds.** Against a forecaster whose rounds put mass on more than two stated values
(support K > 2, engine.slots and engine.slot) the expectation runs over every slot of
positive probability,

    E(y) = sum_i p_i CDL(table, bucket b_i + one round with outcome y),

in slot order (for two slots the sum above, to the bit): up to 2K options a round. The
scratch memory cannot hold K slots, so the bucket whose H_j contributions changed is found
from the table's weighted count W = sum_b (b + 1) n_b (fastcdl.online.adversaries._lastround:
O(m) a round, which the update costs anyway). The two-point code is unchanged.

**Ties.** The expectations are rationals, evaluated in floats with a few roundings of the
chords, so (as lookahead's version 2) they are a tie when they differ by at most TIE_REL = 16
units of roundoff relative to the larger: an exact tie that two evaluation orders round apart
still tosses the coin (two expectations that truly differ by less are also a tie).

**Limits.** The scratch memory holds CAPACITY = 2^15 + 1 stated values, 0.26 MB of ``par``
(the grid j/m of acrs, frequency or truthful up to m = 2^15, their default at T = 2^30;
building it costs about 0.5 ms a run, in AdversarySpec.parameter_vector). With more, every
h(q_j) is summed from the table when it is needed (O(m) each, so O(m^2) a scan): the same
decisions, slowly. A grid without exact fractions (den = 0, a plug-in's) is summed from the
table in floats every round, O(m^2).

Cost, measured with scripts/bench_loops.py (median of 5 runs of simulate, ns per round, the
forecaster and the 0.5 ms of setup included) on a 2-core x86_64 shared with other work:

    cdl vs cdlahead, T = 2^14 (m = 14):   810 ns (load 2.3-2.7), 1307 ns (load 4.8-5.0)
    cdl vs cdlahead, T = 2^18 (m = 42):  1064 ns (load 2.3-2.7), 1523 ns (load 4.8-5.0)
    cdl vs greedy, the same runs:         223 and 185 ns,          252 and 279 ns
    cdl vs lookahead (kinks = 32):                                 10106 and 9513 ns
    acrs vs cdlahead, T = 2^18 (m = 513 stated values, point masses): 4512 ns (load 5.0)

so about 600-900 ns a round of the adversary's own at these m, and a few ns per stated value
and option beyond.

>>> ADVERSARY.resolve_params({})
{}
"""

from fastcdl._compiled._jit import kernel
from fastcdl.online.adversaries._lastround import gained_bucket
from fastcdl.online.engine import Table, k_point_only, slot, slots, two_point_only, uniform
from fastcdl.online.plugins import AdversarySpec

TIE_REL = 16.0 * 2.0**-53  # expectations this close (relative) are a tie: docstring
CAPACITY = 2**15 + 1  # stated values whose H_j fit in the scratch memory

# scratch layout (no parameters: par is all scratch): the two slots seen last round (bucket,
# n, s each) and a flag that they are set; the warm start of the bridge (left and right point);
# then H_j = den T h(q_j), j = 0..m-1 (against a K-point forecaster: the table's weighted
# count W in _SLOTS, and the flag)
_SLOTS = 0
_SET = 6
_A = 7
_C = 8
_H = 16
SCRATCH = _H + CAPACITY


@kernel(inline="always")
def ramp(table, i, n, s, j):
    """den n v_i(q_j), j != i: bucket i's loss at the stated value q_j with n rounds and s
    outcomes y = 1 (v_i(mu) = qhat - mu on (q_i, qhat), mu - qhat on (qhat, q_i]); den = 1
    and floats when the grid has no exact fractions."""
    den = table.den
    if den > 0:
        d = den * s - n * table.num[j]  # den n (qhat - q_j), exact
        if i < j and d > 0:
            return float(d)
        if j < i and d < 0:
            return float(-d)
        return 0.0
    if n == 0:
        return 0.0
    qj = table.q[j]
    qhat = s / n
    if i < j and qj < qhat:
        return s - n * qj
    if j < i and qhat < qj:
        return n * qj - s
    return 0.0


@kernel(inline="always")
def own(table, j, n, s):
    """den |n q_j - s|: bucket j's own term in den T h(q_j) (the larger of its loss at q_j and
    just right of q_j)."""
    if table.den > 0:
        return float(abs(table.num[j] * n - table.den * s))
    return abs(n * table.q[j] - s)


@kernel(inline="always")
def point_x(table, p):
    """The abscissa of point p: 0 (p = 0), q_{p-1} (p = 1..m), 1 (p = m + 1)."""
    m = table.q.shape[0]
    if p == 0:
        return 0.0
    if p == m + 1:
        return 1.0
    return table.q[p - 1]


@kernel(inline="always")
def height_direct(table, p, b, y):
    """den T' h(x_p) summed from the table, bucket b (b = -1: none) gaining one round with
    outcome y. O(m)."""
    m = table.q.shape[0]
    if p == 0 or p == m + 1:
        return 0.0
    j = p - 1
    total = 0.0
    for i in range(m):
        n = table.n[i]
        s = table.s[i]
        if i == b:
            n += 1
            s += y
        if i == j:
            total += own(table, j, n, s)
        else:
            total += ramp(table, i, n, s, j)
    return total


@kernel(inline="always")
def height(par, table, p, b, y, direct):
    """den T' h(x_p) of the table with bucket b gaining one round with outcome y: from the
    kept H (O(1)) or, when ``direct``, summed from the table (O(m))."""
    if direct:
        return height_direct(table, p, b, y)
    m = table.q.shape[0]
    if p == 0 or p == m + 1:
        return 0.0
    j = p - 1
    n = table.n[b]
    s = table.s[b]
    if j == b:
        return par[_H + j] - own(table, j, n, s) + own(table, j, n + 1, s + y)
    return par[_H + j] + (ramp(table, b, n + 1, s + y, j) - ramp(table, b, n, s, j))


@kernel
def height_once(par, table, p, b, y, direct):
    """:func:`height` as a call, for the envelope's three calls outside its loops: each copy of
    height inlined into the envelope adds seconds to its compilation, and these run once a call."""
    return height(par, table, p, b, y, direct)


@kernel(inline="always")
def chord(xa, ha, xc, hc):
    """The value at 1/2 of the chord from (xa, ha) to (xc, hc), xa < 1/2 < xc."""
    return (ha * (xc - 0.5) + hc * (0.5 - xa)) / (xc - xa)


@kernel
def envelope(par, table, b, y, direct):
    """den T' fbar(1/2) of the table with bucket b gaining one round with outcome y: the larger
    of h at a stated value 1/2 and the bridge over 1/2 of the points (0, 0), (q_j, h(q_j)),
    (1, 0) left and right of 1/2 (strictly), by alternating tangents, warm-started from (and
    leaving) the bridge in par[_A], par[_C]."""
    last = table.q.shape[0] + 1
    a = int(par[_A])
    c = int(par[_C])
    if a < 0 or a > last or not point_x(table, a) < 0.5:
        a = 0
    if c < 0 or c > last or not point_x(table, c) > 0.5:
        c = last
    xa = point_x(table, a)
    ha = height_once(par, table, a, b, y, direct)
    xc = point_x(table, c)
    hc = height_once(par, table, c, b, y, direct)
    v = chord(xa, ha, xc, hc)
    half = -1  # the point at 1/2, if a stated value is 1/2
    while True:
        p = 0  # the best left end for this right end
        while p <= last:
            x = point_x(table, p)
            if x >= 0.5:
                if x == 0.5:
                    half = p
                break
            if p != a:
                h = height(par, table, p, b, y, direct)
                w = chord(x, h, xc, hc)
                if w > v:
                    a, xa, ha, v = p, x, h, w
            p += 1
        moved = False
        p = last  # the best right end for this left end
        while p >= 0:
            x = point_x(table, p)
            if x <= 0.5:
                break
            if p != c:
                h = height(par, table, p, b, y, direct)
                w = chord(xa, ha, x, h)
                if w > v:
                    c, xc, hc, v = p, x, h, w
                    moved = True
            p -= 1
        if not moved:
            break
    par[_A] = a
    par[_C] = c
    if half >= 0:
        v = max(v, height_once(par, table, half, b, y, direct))
    return v


@kernel
def rebuild(par, table):
    """H_j = den T h(q_j) from the table, O(m^2) (zeros, O(m), for an empty table)."""
    m = table.q.shape[0]
    empty = True
    for j in range(m):
        if table.n[j] != 0:
            empty = False
            break
    for j in range(m):
        par[_H + j] = 0.0 if empty else height_direct(table, j + 1, -1, 0)


@kernel
def catch_up(par, table):
    """Fold the previous round into H: the remembered slot whose bucket gained a round. O(m)."""
    m = table.q.shape[0]
    for k in range(2):
        b = int(par[_SLOTS + 3 * k])
        n_old = int(par[_SLOTS + 3 * k + 1])
        s_old = int(par[_SLOTS + 3 * k + 2])
        n = table.n[b]
        s = table.s[b]
        if n != n_old:
            for j in range(m):
                if j == b:
                    par[_H + j] += own(table, j, n, s) - own(table, j, n_old, s_old)
                else:
                    par[_H + j] += ramp(table, b, n, s, j) - ramp(table, b, n_old, s_old, j)
            return


@kernel
def expected(par, table, view, y, direct):
    """den T' (T' = T + 1) times E(y)/2, the expected CDL after the round if the outcome is y."""
    v = view.prob0 * envelope(par, table, view.bucket0, y, direct)
    if view.prob1 > 0.0:
        v += view.prob1 * envelope(par, table, view.bucket1, y, direct)
    return v


@kernel
def remember(par, table, view):
    par[_SLOTS] = view.bucket0
    par[_SLOTS + 1] = table.n[view.bucket0]
    par[_SLOTS + 2] = table.s[view.bucket0]
    par[_SLOTS + 3] = view.bucket1
    par[_SLOTS + 4] = table.n[view.bucket1]
    par[_SLOTS + 5] = table.s[view.bucket1]
    par[_SET] = 1.0


@kernel
def fold(par, table, b, n_old, s_old):
    """H after bucket b's counts moved from (n_old, s_old) to the table's. O(m)."""
    n = table.n[b]
    s = table.s[b]
    for j in range(table.q.shape[0]):
        if j == b:
            par[_H + j] += own(table, j, n, s) - own(table, j, n_old, s_old)
        else:
            par[_H + j] += ramp(table, b, n, s, j) - ramp(table, b, n_old, s_old, j)


@kernel
def expected_k(par, ktable, record, view, y, direct):
    """den T' times E(y)/2 over the round's K slots (those of positive probability)."""
    v = 0.0
    for i in range(slots(view, ktable)):
        p, q, b, x = slot(view, ktable, i)
        if p > 0.0:
            v += p * envelope(par, record, b, y, direct)
    return v


@kernel
def respond_k(view, table, par, rng):
    """respond against a K-point forecaster's table: H caught up through the weighted count.
    The envelope, fold and rebuild read the record's fields only and are handed them as a
    Table, so that they compile once for both kinds of table (the K-point twin of the envelope
    compiled in about 4 s; the same arithmetic, so the same answers)."""
    record = Table(table.q, table.n, table.s, table.num, table.den)
    direct = table.q.shape[0] > CAPACITY
    if not direct:
        b, w = gained_bucket(table, par[_SLOTS])
        if table.den > 0 and par[_SET] != 0.0:
            if b >= 0:
                fold(par, record, b, table.n[b] - 1, table.s[b] - view.prev_y)
        else:  # the first round, or a grid without exact fractions (every round)
            rebuild(par, record)
        par[_SLOTS] = float(w)
        par[_SET] = 1.0
    up = expected_k(par, table, record, view, 1, direct)
    down = expected_k(par, table, record, view, 0, direct)
    if abs(up - down) <= TIE_REL * max(abs(up), abs(down)):
        return 1 if uniform(rng) < 0.5 else 0
    return 1 if up > down else 0


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_respond_k = k_point_only(respond_k, 0)


@kernel(inline="always")
def respond_two(view, table, par, rng):
    """respond against a two-point forecaster's table: H caught up through the remembered slots."""
    direct = table.q.shape[0] > CAPACITY
    if not direct:
        if table.den > 0 and par[_SET] != 0.0:
            catch_up(par, table)
        else:  # the first round, or a grid without exact fractions (every round)
            rebuild(par, table)
    up = expected(par, table, view, 1, direct)
    down = expected(par, table, view, 0, direct)
    remember(par, table, view)
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


ADVERSARY = AdversarySpec(
    "cdlahead", respond, {}, version=1, doc=__doc__, scratch=lambda resolved: SCRATCH, k_points=True
)
