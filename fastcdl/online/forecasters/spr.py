"""spr: sign preservation with reuse, with explicit constants (Dai and Fishelson 2026; the SPR
game of Dagan et al. 2024; docs/spr.md). A forecaster for environments that state the round's
true mean e_t = E[y_t | past] (``needs_mean``): it plays only adversaries that declare
``true_mean`` (bernoulli, drift, markov, segments, budget) and states one value a round.

Levels from T = 2^tau (``tau``, default ceil(log2 T): the least power of two at least T, so
that a horizon between powers of two gets the levels of the next one): i0 = floor(tau /
(3 + 2 eps)), h = tau - 2 i0, eps = 0.0342855641. Levels i = i0..i0+h-1; thresholds j in
i0+1..i0+h at level i0, j = i0+h above it; per (i, j) two games G(i, j, l), l in {0, 1}, of
2^i cells: cell c (1-based) is [m, m + 1) 2^-(i+1) with m = 2(c - 1) + l. A cell holds a sign
('+': state its left end; '-': its right end; none: empty) and a bias record per sign, the sum
of e_t - p_t over its rounds with that sign. Round t, given e_t:

1. removal: in the order of (i, j) and l, the first game with a cell whose active record is
   above 1 with e_t at or left of its left end, or below -1 with e_t at or right of its right
   end; the smallest such c: state that end; record += e_t - p_t;
2. placement: for (i, j) in order, the cell c holding e_t (m = min(floor(2^(i+1) e_t),
   2^(i+1) - 1)) of G(i, j, m mod 2); if |its active record| < 2^(j-i) (an empty cell's is 0):
   if it is empty, point at it (the game's board erases every '-' left of c and every '+'
   right of c, and the game's labeler A(1, 2^i, 0) writes c's sign), state the end of c's
   sign, record += e_t - p_t;
3. otherwise the nearest multiple of 2^-(i0+h+1), ties down.

The labeler is the recursive two-phase A(l, r, b) / B(l, r, b, tau) of the notes with rho =
0.0164237243, kappa = 0.4148723339, delta = 9.4880928733, built lazily (a node is made when a
request first reaches it; the labels are those of the eager tree). The stated values are
k / 2^(i0+h+1), k = 0..2^(i0+h+1). The outcome is not used: every record is of means.

Cost per round: removal O(G + sum over games with heavy cells of 2^i / 64) word scans (G =
2h + 2(h - 1) games), placement O(h); a pointing O(2^i) for the erasure plus the labeler's
descent, one node per level of the labeler's tree it reaches (O(i + log T)); memory
O(2^(i0+h)) cells, the labeler's nodes (made, never freed: O(pointings x depth) at worst) and a
table of 2^(i0+h+1) + 1 stated values.

>>> FORECASTER.resolve_params({}, 1000)
{'tau': 10}
>>> f = FORECASTER.init(1024, {"tau": 10}, None)[0]
>>> [choose(f, 0.3) for _ in range(2)], f.games.level.tolist()
([64, 64], [3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 5, 5, 6, 6])
"""

# ruff: noqa: E741 -- l is the notes' name: a range's left end, a game's parity

import math
from collections import namedtuple

import numpy as np
from numba import typed

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import point_mass
from fastcdl._validate import ValidationError, check_horizon, check_int
from fastcdl.online.engine import bad_mean, mean_stopped, not_outcome, play_round, settle, stopped
from fastcdl.online.plugins import ForecasterSpec

EPS = 0.0342855641
RHO = 0.0164237243
KAPPA = 0.4148723339
DELTA = 9.4880928733

# The labeler's nodes, one row each in a growing int64 table (columns named here):
# A(l, r, b): ``count`` labels given so far, ``cur`` its B (-1: not made yet).
A_L, A_R, A_B, A_COUNT, A_CUR = range(5)
# B(l, r, b, tau): kids (A rows, -1 until a request reaches them), the request counts c0, c1 of
# phase 1, ``phase`` (1, 2), and in phase 2 the length L, the count tc and the shifted A (-1: L = 0).
B_L, B_R, B_B, B_TAU, B_KID0, B_KID1, B_C0, B_C1, B_PHASE, B_LEN, B_TC, B_SHIFTED = range(12)

# games g = 2 p + l for the p-th (i, j) in order: level i, threshold 2^(j - i), their first cell
# in the cell arrays and first word in the bitsets, and the row of the root labeler A(1, 2^i, 0)
Games = namedtuple("Games", ["level", "threshold", "first", "word", "root"])
# cells: sign (+1, -1, 0 empty), records per sign; bitsets of the "heavy" cells, whose active record
# is above 1 ('+') or below -1 ('-') (the candidates of removal), and their count per game;
# anodes, bnodes: the labeler's tables, in a one-element list so that they can grow; used: rows in use
SPRState = namedtuple(
    "SPRState",
    [
        "games",
        "sign",
        "rec_plus",
        "rec_minus",
        "heavy_plus",
        "heavy_minus",
        "n_heavy",
        "anodes",
        "bnodes",
        "used",
        "res",
    ],
)


TAU_MAX = 30  # 2^21 cells and a table of 2^22 + 1 stated values; beyond, memory runs out


def default_tau(T):
    """ceil(log2 T): the least tau with 2^tau >= T."""
    return (int(T) - 1).bit_length()


def levels(tau):
    """(i0, h) for T = 2^tau: i0 = floor(tau / (3 + 2 eps)), h = tau - 2 i0."""
    i0 = math.floor(tau / (3.0 + 2.0 * EPS))
    return i0, tau - 2 * i0


def pairs(i0, h):
    """The (i, j) in order: i = i0 with j = i0+1..i0+h, then i = i0+1..i0+h-1 with j = i0+h."""
    out = [(i0, j) for j in range(i0 + 1, i0 + h + 1)]
    return out + [(i, i0 + h) for i in range(i0 + 1, i0 + h)]


def init(horizon, params, adversary=None):
    i0, h = levels(int(params["tau"]))
    level, threshold, first, word = [], [], [0], [0]
    for i, j in pairs(i0, h):
        for _ in (0, 1):
            level.append(i)
            threshold.append(2.0 ** (j - i))
            first.append(first[-1] + 2**i)
            word.append(word[-1] + (2**i + 63) // 64)
    G = len(level)
    anodes = typed.List([np.zeros((max(64, 2 * G), 5), dtype=np.int64)])
    bnodes = typed.List([np.zeros((max(64, 2 * G), 12), dtype=np.int64)])
    used = np.zeros(2, dtype=np.int64)
    root = np.array([new_a(anodes, used, 1, 2**i, 0) for i in level], dtype=np.int64)
    games = Games(
        np.array(level, dtype=np.int64),
        np.array(threshold),
        np.array(first[:-1], dtype=np.int64),
        np.array(word[:-1], dtype=np.int64),
        root,
    )
    R = 2 ** (i0 + h + 1)
    st = SPRState(
        games,
        np.zeros(first[-1], dtype=np.int8),
        np.zeros(first[-1]),
        np.zeros(first[-1]),
        np.zeros(word[-1], dtype=np.uint64),
        np.zeros(word[-1], dtype=np.uint64),
        np.zeros(G, dtype=np.int64),
        anodes,
        bnodes,
        used,
        R,
    )
    return st, np.arange(R + 1) / R


# -- the labeler --------------------------------------------------------------------------
@kernel(inline="always")
def grown(nodes):
    """A table of twice the rows of ``nodes``, its first rows a copy of them, the others zero.
    The rows are copied in a loop: numba's slice assignment ``bigger[:k] = nodes`` compiles the
    formatting of its shape-mismatch message (3.0 s of spr's first compile, measured)."""
    k, width = nodes.shape
    bigger = np.zeros((2 * k, width), dtype=np.int64)
    for i in range(k):
        for c in range(width):
            bigger[i, c] = nodes[i, c]
    return bigger


@kernel
def new_a(anodes, used, l, r, b):
    """A new row A(l, r, b) (its B made on its first request); the table doubles when full."""
    k = used[0]
    nodes = anodes[0]
    if k == nodes.shape[0]:
        bigger = grown(nodes)
        anodes[0] = bigger
        nodes = bigger
    nodes[k, A_L] = l
    nodes[k, A_R] = r
    nodes[k, A_B] = b
    nodes[k, A_COUNT] = 0
    nodes[k, A_CUR] = -1
    used[0] = k + 1
    return k


@kernel
def new_b(bnodes, used, l, r, b, tau):
    """A new row B(l, r, b, tau) in phase 1 (its kids made on their first request)."""
    k = used[1]
    nodes = bnodes[0]
    if k == nodes.shape[0]:
        bigger = grown(nodes)
        bnodes[0] = bigger
        nodes = bigger
    nodes[k, B_L] = l
    nodes[k, B_R] = r
    nodes[k, B_B] = b
    nodes[k, B_TAU] = tau
    nodes[k, B_KID0] = -1
    nodes[k, B_KID1] = -1
    nodes[k, B_C0] = 0
    nodes[k, B_C1] = 0
    nodes[k, B_PHASE] = 1
    nodes[k, B_LEN] = 0
    nodes[k, B_TC] = 0
    nodes[k, B_SHIFTED] = -1
    used[1] = k + 1
    return k


@kernel
def label(anodes, bnodes, used, a, s):
    """A(a).label(s): the sign (+1 or -1) the labeler rooted at row a writes in cell s.

    The recursion of the notes as one descent: at an A, its B (a new B(l, r, b, count) when the
    current one is in phase 2 with tc = L, where the notes' B returns None); at a B in phase 1,
    the half holding s (counted; the switch to phase 2 is decided on the counts, which the
    kid's answer does not change); in phase 2, the shifted A. O(depth)."""
    while True:
        A = anodes[0]
        l = A[a, A_L]
        r = A[a, A_R]
        b = A[a, A_B]
        if l == r:
            A[a, A_COUNT] += 1
            return 1 if b >= 0 else -1
        cur = A[a, A_CUR]
        if cur < 0:
            cur = new_b(bnodes, used, l, r, b, 0)
            A[a, A_CUR] = cur
        elif bnodes[0][cur, B_PHASE] == 2 and bnodes[0][cur, B_TC] == bnodes[0][cur, B_LEN]:
            cur = new_b(bnodes, used, l, r, b, A[a, A_COUNT])
            A[a, A_CUR] = cur
        A[a, A_COUNT] += 1
        B = bnodes[0]
        if B[cur, B_PHASE] == 2:
            B[cur, B_TC] += 1
            a = B[cur, B_SHIFTED]
            continue
        mid = (l + r) // 2
        half = 0 if s <= mid else 1
        B[cur, B_C0 + half] += 1
        kid = B[cur, B_KID0 + half]
        if kid < 0:
            kid = new_a(anodes, used, l, mid, b) if half == 0 else new_a(anodes, used, mid + 1, r, b)
            B = bnodes[0]
            B[cur, B_KID0 + half] = kid
        th = max(B[cur, B_C0], B[cur, B_C1])
        tl = min(B[cur, B_C0], B[cur, B_C1])
        if DELTA * tl >= B[cur, B_TAU] and RHO * th <= tl:
            L = math.floor(KAPPA * th)
            B[cur, B_LEN] = L
            B[cur, B_TC] = 0
            B[cur, B_PHASE] = 2
            if L > 0:
                shifted = new_a(anodes, used, l, r, b + 1 if half == 0 else b - 1)
                bnodes[0][cur, B_SHIFTED] = shifted
        a = kid


# -- the cells ----------------------------------------------------------------------------
@kernel(inline="always")
def _bit(c0):
    return np.uint64(1) << np.uint64(c0 & 63)


# The kernels below take the state's arrays one by one: numba takes and releases a reference to
# every array of a namedtuple each time one is passed (about 0.3 us a call here, measured), and
# these run every round. Cells: sign, rec_plus, rec_minus (by cell), heavy_plus, heavy_minus
# (bitsets by game word), n_heavy (by game); games' first cell and first word.
@kernel(inline="always")
def set_heavy(first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, g, c0):
    """Set cell c0 of game g's heavy bits from its sign and records (the count kept)."""
    cell = first[g] + c0
    w = word[g] + (c0 >> 6)
    bit = _bit(c0)
    was = ((heavy_plus[w] | heavy_minus[w]) & bit) != 0
    heavy_plus[w] &= ~bit
    heavy_minus[w] &= ~bit
    sg = sign[cell]
    now = False
    if sg == 1 and rec_plus[cell] > 1.0:
        heavy_plus[w] |= bit
        now = True
    elif sg == -1 and rec_minus[cell] < -1.0:
        heavy_minus[w] |= bit
        now = True
    n_heavy[g] += int(now) - int(was)


@kernel(inline="always")
def next_bit(bits, word, n, c0):
    """The least set bit >= c0 among the n bits from word ``word`` on, or -1."""
    if c0 >= n:
        return -1
    k = c0 >> 6
    last = (n - 1) >> 6
    x = bits[word + k] & ~((np.uint64(1) << np.uint64(c0 & 63)) - np.uint64(1))
    while True:
        if x != 0:
            b = 0
            while (x & np.uint64(1)) == 0:
                x >>= np.uint64(1)
                b += 1
            return 64 * k + b
        k += 1
        if k > last:
            return -1
        x = bits[word + k]


@kernel
def point(
    level, first, word, root, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, anodes, bnodes, used, g, c0
):
    """Point at empty cell c0 of game g: erase every '-' left of it and every '+' right of it,
    then write the labeler's sign. O(2^i) plus the labeler's descent."""
    f = first[g]
    for c in range(1 << level[g]):
        sg = sign[f + c]
        if (c < c0 and sg == -1) or (c > c0 and sg == 1):
            sign[f + c] = 0
            set_heavy(first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, g, c)
    sign[f + c0] = label(anodes, bnodes, used, root[g], c0 + 1)


# _nrt=False: it allocates nothing; without numba's reference counting a call does not take and
# release a reference to each of its arrays (28 atomic operations a round, about 0.3 us here)
@kernel(_nrt=False)
def step(level, threshold, first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, R, e):
    """k of the round's prediction k / R (R = 2^(i0+h+1)) for the true mean e: the removal,
    placement and fallback steps over the state's arrays, which it updates; or, when the
    placement reaches an empty cell, -1 - (g 2^32 + c0) for game g and cell c0, with nothing
    changed: the caller points at that cell (:func:`point`, which allocates the labeler's
    nodes) and calls it again, which then places the round there (pointing changes no record
    and only empties cells of that game, so the steps before it find what they found)."""
    G = level.shape[0]
    # (1) removal
    for g in range(G):
        if n_heavy[g] == 0:
            continue
        i = level[g]
        l = g & 1
        n = 1 << i
        x = e * (2 << i)  # e / w, exact: w = 2^-(i+1)
        cp = next_bit(heavy_plus, word[g], n, max(0, int(math.ceil((x - l) / 2.0))))
        cm = next_bit(heavy_minus, word[g], n, 0)
        if cm >= 0 and cm > math.floor((x - l - 1.0) / 2.0):
            cm = -1
        if cp < 0 and cm < 0:
            continue
        if cm < 0 or (cp >= 0 and cp < cm):
            c0, m = cp, 2 * cp + l
            k = m * (R >> (i + 1))
            rec_plus[first[g] + c0] += e - k / R
        else:
            c0, m = cm, 2 * cm + l + 1
            k = m * (R >> (i + 1))
            rec_minus[first[g] + c0] += e - k / R
        set_heavy(first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, g, c0)
        return k
    # (2) placement
    for g0 in range(0, G, 2):
        i = level[g0]
        m = min(int(math.floor(e * (2 << i))), (2 << i) - 1)
        l = m & 1
        g = g0 + l
        c0 = (m - l) // 2
        cell = first[g] + c0
        sg = sign[cell]
        active = rec_plus[cell] if sg == 1 else rec_minus[cell] if sg == -1 else 0.0
        if abs(active) < threshold[g]:
            if sg == 0:
                return -1 - ((g << 32) + c0)
            if sg == 1:
                k = m * (R >> (i + 1))
                rec_plus[cell] += e - k / R
            else:
                k = (m + 1) * (R >> (i + 1))
                rec_minus[cell] += e - k / R
            set_heavy(first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, g, c0)
            return k
    # (3) the nearest multiple of 1 / R, ties down
    return int(math.ceil(e * R - 0.5))


@kernel(inline="always")
def choose_in(
    level,
    threshold,
    first,
    word,
    root,
    sign,
    rec_plus,
    rec_minus,
    heavy_plus,
    heavy_minus,
    n_heavy,
    anodes,
    bnodes,
    used,
    R,
    e,
):
    """:func:`choose` over the state's arrays (the loop unpacks them once, before its first round)."""
    k = step(level, threshold, first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, R, e)
    if k < 0:
        g = (-1 - k) >> 32
        c0 = (-1 - k) & 0xFFFFFFFF
        point(
            level,
            first,
            word,
            root,
            sign,
            rec_plus,
            rec_minus,
            heavy_plus,
            heavy_minus,
            n_heavy,
            anodes,
            bnodes,
            used,
            g,
            c0,
        )
        k = step(level, threshold, first, word, sign, rec_plus, rec_minus, heavy_plus, heavy_minus, n_heavy, R, e)
    return k


@kernel
def choose(st, e):
    """k of the round's prediction k / R for the true mean e: :func:`step` on the state's arrays,
    pointing where it asks (:func:`choose_in`)."""
    gm = st.games
    return choose_in(
        gm.level,
        gm.threshold,
        gm.first,
        gm.word,
        gm.root,
        st.sign,
        st.rec_plus,
        st.rec_minus,
        st.heavy_plus,
        st.heavy_minus,
        st.n_heavy,
        st.anodes,
        st.bnodes,
        st.used,
        st.res,
        e,
    )


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out, e):
    k = choose(st, e)
    point_mass(table.q[k], k, out.points, out.probs, out.buckets)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    pass  # every record is of means: the outcome teaches nothing


# The loop unpacks the state once: numba's reference counting (on here: the labeler's tables grow)
# would otherwise take and release a reference to each of the state's arrays every round.
@kernel
def simulate(T, st, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y, mean):
    gm = st.games
    level, threshold, first, word, root = gm.level, gm.threshold, gm.first, gm.word, gm.root
    sign, rec_plus, rec_minus, heavy_plus, heavy_minus = (
        st.sign,
        st.rec_plus,
        st.rec_minus,
        st.heavy_plus,
        st.heavy_minus,
    )
    n_heavy, anodes, bnodes, used, R = st.n_heavy, st.anodes, st.bnodes, st.used, st.res
    q = table.q
    for t in range(T):
        e = mean(hist, apar)
        if bad_mean(e):
            return mean_stopped(hist)
        k = choose_in(
            level,
            threshold,
            first,
            word,
            root,
            sign,
            rec_plus,
            rec_minus,
            heavy_plus,
            heavy_minus,
            n_heavy,
            anodes,
            bnodes,
            used,
            R,
            e,
        )
        point_mass(q[k], k, out.points, out.probs, out.buckets)  # forecast's, with the state unpacked
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        hist = settle(table, out, slot, y, hist)  # observe does nothing
    return hist


def resolve(params, T):
    T = check_horizon(T)
    tau = params.get("tau")
    tau = default_tau(T) if tau is None else check_int(tau, "tau", low=0)
    if tau > TAU_MAX:
        raise ValidationError(
            "tau", f"must be at most {TAU_MAX} (the cells and stated values grow like 2^(2 tau / 3))", value=tau
        )
    return {"tau": tau}


def _grid_m(resolved):
    """R = 2^(i0+h+1): the stated values are k / R."""
    i0, h = levels(int(resolved["tau"]))
    return 2 ** (i0 + h + 1)


FORECASTER = ForecasterSpec(
    "spr",
    init,
    forecast,
    observe,
    params={"tau": None},
    version=1,
    resolve=resolve,
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
    needs_mean=True,
    point_mass=True,
)
