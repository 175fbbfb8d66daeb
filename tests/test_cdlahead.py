"""cdlahead (the exact one-step lookahead on the CDL) against references written from its
definition: for y in {0, 1}, E(y) = sum over the round's entries of prob x CDL(table with the
entry's bucket gaining one round with outcome y); play the larger, a tie tosses the coin.

Two references:

- ``float_expectations``: each CDL from the public API, fastcdl.cdl(BucketStats.from_table);
  a decision is compared when the two expectations differ by more than 1e-9 (relative);
- ``exact_expectations``: each CDL in rational arithmetic from docs/exact-cdl.md (f and its
  right limit at the candidates {0, 1/2, 1} u {q_i} u {qhat_i}, the best chord over 1/2),
  with the stated values as the fractions they stand for; with the documented tie rule
  (within 16 units of roundoff, relative) and a copy of the adversary's generator, it
  predicts every outcome, coin tosses included, and the generator's state after each round.

The kernel's own pieces are checked too: its envelope against table_cdl (both the kept and
the summed-from-the-table heights, the latter being what more than CAPACITY stated values
use), and the kept heights H_j against the exact ones during a game.
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest

import baseline_reference as R
import fastcdl as fc
from fastcdl._compiled.rng import seed_states
from fastcdl._compiled.tablecdl import table_cdl
from fastcdl.online import engine, make_adversary, make_forecaster, simulate
from fastcdl.online.adversaries import cdlahead
from fastcdl.online.forecasters import Forecast
from fastcdl.online.simulate import trace

HALF = Fraction(1, 2)
TIE_REL = Fraction(16, 2**53)  # the documented tie rule
GAP = 1e-9  # float reference: decisions compared when the expectations differ by more


# -- references -------------------------------------------------------------------------------
def cdl_after(q, n, s, b, y):
    """fastcdl.cdl of the table (q, n, s) with bucket b gaining one round with outcome y."""
    n2 = np.array(n, dtype=np.int64)
    s2 = np.array(s, dtype=np.int64)
    n2[b] += 1
    s2[b] += y
    with warnings.catch_warnings():  # tables of a few rounds: the sample-size warning is expected
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        return fc.cdl(fc.BucketStats.from_table(np.asarray(q, dtype=np.float64), n2, s2))


def float_expectations(q, n, s, entries):
    """(E(1), E(0)) from fastcdl.cdl; entries: [(probability, bucket)]."""
    return tuple(sum(p * cdl_after(q, n, s, b, y) for p, b in entries if p > 0) for y in (1, 0))


def float_decision(up, down):
    """1 or 0 when the expectations differ by more than GAP (relative), else None."""
    if abs(up - down) <= GAP * max(abs(up), abs(down)):
        return None
    return 1 if up > down else 0


def losses(stated, n, s, mu, right):
    """sum_i n_i v_i(mu) (right: its limit from the right), exact, from the definition."""
    total = Fraction(0)
    for q, ni, si in zip(stated, n, s):
        if ni == 0:
            continue
        qhat = Fraction(si, ni)
        if right:
            up, down = q <= mu < qhat, qhat <= mu < q
        else:
            up, down = q < mu < qhat, qhat < mu <= q
        if up:
            total += ni * (qhat - mu)
        elif down:
            total += ni * (mu - qhat)
    return total


def exact_cdl(stated, n, s):
    """2 fbar(1/2) / T of the table, fbar the upper concave envelope of h = max(f, f(.+)) read
    at 1/2 as the best chord between candidates a <= 1/2 <= c (exact rationals)."""
    n, s = [int(v) for v in n], [int(v) for v in s]
    T = sum(n)
    cands = {Fraction(0), HALF, Fraction(1), *stated}
    cands |= {Fraction(si, ni) for ni, si in zip(n, s) if ni}
    pts = [(x, max(losses(stated, n, s, x, False), losses(stated, n, s, x, True))) for x in sorted(cands)]
    best = Fraction(0)
    for xa, ha in pts:
        if xa > HALF:
            break
        for xc, hc in pts:
            if xc < HALF:
                continue
            v = ha if xa == xc else (ha * (xc - HALF) + hc * (HALF - xa)) / (xc - xa)
            best = max(best, v)
    return 2 * best / T


def exact_expectations(stated, n, s, entries):
    out = []
    for y in (1, 0):
        total = Fraction(0)
        for p, b in entries:
            if p > 0:
                n2, s2 = [int(v) for v in n], [int(v) for v in s]
                n2[b] += 1
                s2[b] += y
                total += Fraction(p) * exact_cdl(stated, n2, s2)
        out.append(total)
    return tuple(out)


class ExactCdlAhead:
    """The reference adversary: exact expectations, the documented tie rule, a fair coin."""

    def __init__(self, seed):
        self.rng = R.streams(seed)[1]

    def respond(self, stated, n, s, entries):
        up, down = exact_expectations(stated, n, s, entries)
        if abs(up - down) > TIE_REL * max(abs(up), abs(down)):
            return (1 if up > down else 0), False
        return (1 if self.rng.uniform() < 0.5 else 0), True


# -- helpers ----------------------------------------------------------------------------------
def _table(q, n, s):
    t = engine.new_table(np.asarray(q, dtype=np.float64))
    t.n[:] = n
    t.s[:] = s
    return t


def _view(table, entries, t=1):
    (p0, b0), (p1, b1) = entries[0], entries[-1] if len(entries) == 2 else (0.0, entries[0][1])
    q = table.q
    return engine.Round(
        t,
        -1,
        q.shape[0],
        float(q[b0]),
        float(q[b1]),
        float(p0),
        float(p1),
        float(q[b0]),
        float(q[b1]),
        int(b0),
        int(b1),
    )


def _kernel(q, n, s, entries, seed=0):
    """The kernel's y on a fresh run whose table is (q, n, s) (its first round: H built from the
    table), and the adversary's generator words after it."""
    table = _table(q, n, s)
    par = cdlahead.ADVERSARY.parameter_vector({})
    rng = seed_states(seed)[1]
    y = cdlahead.ADVERSARY.compiled()(_view(table, entries), table, par, rng)
    return int(y), [int(w) for w in rng]


def _grid(kind, m, g):
    """(float stated values, their fractions or None): the grids of the engine's forecasters and
    others: j/m with 0 and 1, (b+1)/m (Algorithm 1's), a subset of the eighths (1/2 often
    stated), and random floats (no exact fractions: den = 0)."""
    if kind == "foster":
        st = [Fraction(j, m) for j in range(m + 1)]
    elif kind == "algorithm1":
        st = [Fraction(b + 1, m) for b in range(m)]
    elif kind == "eighths":
        ks = sorted(g.choice(9, size=min(m, 9), replace=False))
        st = [Fraction(int(k), 8) for k in ks]
    else:
        q = np.unique(g.random(m))
        return q, None
    return np.array([float(v) for v in st]), st


def _random_table(m, g, stated=None):
    scale = int(g.choice([1, 3, 10, 200, 10**5]))
    n = g.integers(0, scale + 1, m)
    if g.random() < 0.3:
        n = n * (g.random(m) < 0.4)  # mostly empty buckets
    s = np.array([int(g.integers(0, x + 1)) for x in n])
    if stated is not None and g.random() < 0.3:  # calibrated buckets: qhat exactly at q
        for i in range(m):
            if g.random() < 0.5:
                k = int(g.integers(1, 4)) * stated[i].denominator
                n[i], s[i] = k, stated[i].numerator * k // stated[i].denominator
    if g.random() < 0.15:  # frequencies at 0 and 1
        s = np.where(g.random(m) < 0.5, 0, n)
    return n.astype(np.int64), s.astype(np.int64)


def _random_entries(m, g):
    i = int(g.integers(m))
    if m == 1 or g.random() < 0.35:
        return [(1.0, i)]
    j = int(g.integers(m - 1))
    j += j >= i
    if g.random() < 0.5:  # neighbours, as the forecasters mix
        i = min(i, m - 2)
        j = i + 1
    p = float(g.choice([0.5, 0.25, 0.75, g.random()]))
    return [(p, min(i, j)), (1.0 - p, max(i, j))]


GRIDS = ["foster", "algorithm1", "eighths", "floats"]


# -- the references themselves ----------------------------------------------------------------
def test_exact_reference_equals_fastcdl():
    g = np.random.default_rng(0)
    for case in range(150):
        q, stated = _grid(GRIDS[case % 3], int(g.integers(1, 9)), g)
        n, s = _random_table(len(q), g, stated)
        if n.sum() == 0:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fc.SampleSizeWarning)
            got = fc.cdl(fc.BucketStats.from_table(q, n, s))
        assert abs(got - float(exact_cdl(stated, list(n), list(s)))) <= 1e-12, (q, n, s)


# -- the kernel's CDL -------------------------------------------------------------------------
@pytest.mark.parametrize("grid", GRIDS)
def test_envelope_equals_table_cdl(grid):
    """den T' fbar(1/2) of every option, from the kept heights and from the table, equals
    table_cdl of the table after the round, whatever the warm start."""
    g = np.random.default_rng(len(grid))
    for case in range(400):
        m = int(g.integers(1, 150 if case % 10 == 0 else 12))
        q, stated = _grid(grid, m, g)
        m = len(q)
        n, s = _random_table(m, g, stated)
        table = _table(q, n, s)
        den = table.den if table.den > 0 else 1
        assert (table.den > 0) == (grid != "floats")
        par = cdlahead.ADVERSARY.parameter_vector({})
        cdlahead.rebuild(par, table)
        b, y = int(g.integers(m)), int(g.integers(2))
        n2, s2 = n.copy(), s.copy()
        n2[b] += 1
        s2[b] += y
        want = table_cdl(q, n2, s2, False)[0]
        for direct in (False, True):
            par[cdlahead._A], par[cdlahead._C] = g.integers(-1, m + 3), g.integers(-1, m + 3)
            got = 2.0 * cdlahead.envelope(par, table, b, y, direct) / (den * n2.sum())
            assert abs(got - want) <= 1e-13 * want + 1e-300, (q, n, s, b, y, direct, got, want)


def test_envelope_bridge_passes_above_a_stated_half():
    """A stated value 1/2 below the bridge over 1/2 (the bridge joins 0.4 and 0.7 here): the
    envelope is the bridge's value, not h(1/2)."""
    q = np.array([0.0, 0.1, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    n = np.array([67, 1, 39, 86, 55, 3, 77, 73, 85, 17])
    s = np.array([1, 0, 21, 6, 16, 1, 32, 29, 2, 0])
    table = _table(q, n, s)
    par = cdlahead.ADVERSARY.parameter_vector({})
    cdlahead.rebuild(par, table)
    b, y = 4, 0
    n[b] += 1
    want, mu1, mu2 = table_cdl(q, n, s, False)[:3]
    assert (mu1, mu2) == (0.4, 0.7)
    for a, c in ((5, 11), (0, 0), (4, 8)):
        par[cdlahead._A], par[cdlahead._C] = a, c
        assert 2.0 * cdlahead.envelope(par, table, b, y, False) / (10 * n.sum()) == pytest.approx(want, rel=1e-14)


# -- (1) decisions on random tables and views -------------------------------------------------
@pytest.mark.parametrize("grid", GRIDS)
def test_decisions_on_random_tables(grid):
    """The kernel's y equals fastcdl.cdl's decision whenever its expectations differ by more
    than 1e-9; on the rational grids it equals the exact reference's always, coin included
    (the generator's words after the round too)."""
    g = np.random.default_rng(10 + len(grid))
    decided = ties = 0
    for case in range(300):
        m = int(g.integers(1, 40 if case % 10 == 0 else 10))
        q, stated = _grid(grid, m, g)
        m = len(q)
        n, s = _random_table(m, g, stated)
        if case % 20 == 0:
            n[:] = 0
            s[:] = 0
        entries = _random_entries(m, g)
        y, words = _kernel(q, n, s, entries, seed=case)
        want = float_decision(*float_expectations(q, n, s, entries))
        if want is not None:
            decided += 1
            assert y == want, (q, n, s, entries)
        if stated is not None:
            ref = ExactCdlAhead(case)
            ry, tie = ref.respond(stated, list(n), list(s), entries)
            ties += tie
            assert (y, words) == (ry, ref.rng.s), (q, n, s, entries)
    assert decided > 150
    if grid != "floats":
        assert ties > 5


# -- (2) whole games, replayed round by round -------------------------------------------------
@pytest.mark.parametrize("forecaster", ["cdl", "foster"])
def test_game_replayed_with_the_reference(forecaster):
    """A run of simulate (trace) against cdlahead, replayed with the forecaster and the exact
    reference adversary: every outcome (coin tosses included, from a copy of the adversary's
    generator) and every stated prediction agree; the per-round API gives the same run with the
    same generator state after every round, and its kept heights H_j are the exact
    den T h(q_j) of the table."""
    T, seed = 300, 3
    res, tp, ty = trace(forecaster, "cdlahead", horizon=T, seed=seed)
    f = make_forecaster(forecaster, horizon=T, seed=seed)
    a = make_adversary("cdlahead", horizon=T, seed=seed)
    ref = ExactCdlAhead(seed)
    q = f.table.q
    m = len(q)
    stated = [Fraction(float(v)).limit_denominator(2**20) for v in q]
    assert [float(v) for v in stated] == list(q)
    den = int(f.table.den)
    n, s = [0] * m, [0] * m
    ties = 0
    for t in range(T):
        d = f.forecast()
        entries = list(zip(d.probs, d.buckets))
        ry, tie = ref.respond(stated, n, s, entries)
        ties += tie
        y = a.respond(d)
        assert y == ry == ty[t], f"round {t + 1}: {d}: kernel {y}, trace {ty[t]}, reference {ry}"
        assert [int(w) for w in a._rng] == ref.rng.s
        fy = float_decision(*float_expectations(q, n, s, entries))
        assert fy is None or fy == y
        if t % 25 == 0:
            H = a._par[cdlahead._H : cdlahead._H + m]
            want = [den * max(losses(stated, n, s, x, False), losses(stated, n, s, x, True)) for x in stated]
            assert list(H) == [float(v) for v in want], f"round {t + 1}"
        p = f.draw()
        assert p == tp[t]
        f.observe(y)
        a.observe(p, y)
        b = list(d.predictions).index(p)
        n[d.buckets[b]] += 1
        s[d.buckets[b]] += y
    assert res.stats == f.stats()
    assert 0 < int(ty.sum()) < T and ties < T // 2


@pytest.mark.parametrize("grid", GRIDS)
def test_fixed_forecasts_with_the_reference(grid):
    """Per-round API on fixed random forecast sequences over several grids (1/2 stated or not,
    0 and 1 stated or not, no exact fractions), so that the incremental H (or, for den = 0, the
    per-round rebuild) meets every kind of bucket; decisions against the exact reference with
    the generator (rational grids) or fastcdl.cdl's (floats)."""
    g = np.random.default_rng(20 + len(grid))
    q, stated = _grid(grid, 7, g)
    m = len(q)
    a = make_adversary("cdlahead", seed=5)
    ref = ExactCdlAhead(5)
    n, s = [0] * m, [0] * m
    for t in range(250):
        entries = _random_entries(m, g)
        if stated is not None:
            ry, _ = ref.respond(stated, n, s, entries)
        else:
            ry = float_decision(*float_expectations(q, n, s, entries))
        ps, bs = zip(*entries)
        stated_t = tuple(float(q[b]) for b in bs)
        y = a.respond(Forecast(stated_t, ps, stated_t, bs, q))
        assert ry is None or y == ry, f"round {t + 1}: {entries}"
        if stated is not None:
            assert [int(w) for w in a._rng] == ref.rng.s
        k = 0 if len(bs) == 1 or g.random() < ps[0] else 1
        a.observe(stated_t[k], y)
        n[bs[k]] += 1
        s[bs[k]] += y


@pytest.mark.parametrize("forecaster", ["cdl", "foster", "acrs"])
def test_simulate_equals_per_round(forecaster):
    T, seed = 1500, 8
    res, tp, ty = trace(forecaster, "cdlahead", horizon=T, seed=seed)
    f = make_forecaster(forecaster, horizon=T, seed=seed)
    a = make_adversary("cdlahead", horizon=T, seed=seed)
    ps, ys = [], []
    for _ in range(T):
        y = a.respond(f.forecast())
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ps.append(p)
        ys.append(y)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == f.stats()
    # a second run starts from zero scratch: the same run again
    assert simulate(forecaster, "cdlahead", horizon=T, seed=seed).stats == res.stats


# -- K-point rounds ----------------------------------------------------------------------------
def _random_k_entries(m, g, K=5):
    """A K-slot round over m stated values: 1 to K slots of positive probability on distinct
    buckets (dyadic weights now and then: exact ties), the rest of probability 0 at random
    positions (slot 0 too)."""
    used = int(g.integers(1, min(K, m) + 1))
    buckets = [int(b) for b in g.choice(m, size=used, replace=False)]
    if used == 1:
        probs = [1.0]
    elif used in (2, 4) and g.random() < 0.5:
        probs = [1.0 / used] * used
    else:
        w = g.random(used)
        probs = [float(v) for v in w / w.sum()]
    while len(probs) < K:
        i = int(g.integers(len(probs) + 1))
        probs.insert(i, 0.0)
        buckets.insert(i, int(g.integers(m)))
    return list(zip(probs, buckets))


@pytest.mark.parametrize("grid", GRIDS)
def test_k_point_forecasts_with_the_reference(grid):
    """Per-round API on fixed K-slot forecast sequences (a KTable): the expectation over every
    slot, against the exact reference with its generator (rational grids; the kept H_j equal the
    exact den T h(q_j), caught up through the table's weighted count) or fastcdl.cdl's (floats:
    H rebuilt every round)."""
    g = np.random.default_rng(40 + len(grid))
    q, stated = _grid(grid, 7, g)
    m = len(q)
    a = make_adversary("cdlahead", seed=6)
    ref = ExactCdlAhead(6)
    n, s = [0] * m, [0] * m
    for t in range(200):
        entries = _random_k_entries(m, g)
        if stated is not None:
            ry, _ = ref.respond(stated, n, s, entries)
        else:
            ry = float_decision(*float_expectations(q, n, s, entries))
        ps, bs = zip(*entries)
        stated_t = tuple(float(q[b]) for b in bs)
        y = a.respond(Forecast(stated_t, ps, stated_t, bs, q, support=len(ps)))
        assert ry is None or y == ry, f"round {t + 1}: {entries}"
        if stated is not None:
            assert [int(w) for w in a._rng] == ref.rng.s
            if t % 20 == 0:
                den = int(a._table.den)
                want = [den * max(losses(stated, n, s, x, False), losses(stated, n, s, x, True)) for x in stated]
                assert list(a._par[cdlahead._H : cdlahead._H + m]) == [float(v) for v in want], f"round {t + 1}"
        k = int(np.searchsorted(np.cumsum(ps), g.random(), side="right"))
        k = min(k, len(ps) - 1)
        while ps[k] == 0.0:
            k -= 1
        a.observe(stated_t[k], y)
        n[bs[k]] += 1
        s[bs[k]] += y


@pytest.mark.parametrize("forecaster", ["klcal", "spread"])
def test_k_point_game_replayed_with_the_reference(forecaster):
    """Whole games against K-point forecasters: klcal (stated values without exact fractions:
    fastcdl.cdl's expectations decide wherever they differ by more than GAP) and the test plug-in
    spread (the grid j/8 with 0, 1/2 and 1: the exact reference with its generator, coin tosses
    included); simulate's compiled loop and the per-round API agree on every round."""
    import user_plugins

    spec = "klcal" if forecaster == "klcal" else user_plugins.SPREAD
    T, seed = 300, 3
    res, tp, ty = trace(spec, "cdlahead", horizon=T, seed=seed)
    f = make_forecaster(spec, horizon=T, seed=seed)
    a = make_adversary("cdlahead", horizon=T, seed=seed)
    ref = ExactCdlAhead(seed)
    q = f.table.q
    m = len(q)
    exact = int(f.table.den) > 0
    stated = [Fraction(float(v)) for v in q]
    n, s = [0] * m, [0] * m
    wide = 0
    for t in range(T):
        d = f.forecast()
        wide += len(d.probs) > 2
        entries = list(zip(d.probs, d.buckets))
        y = a.respond(d)
        if exact:
            ry, _ = ref.respond(stated, n, s, entries)
            assert y == ry and [int(w) for w in a._rng] == ref.rng.s, f"round {t + 1}: {d}"
        else:
            fy = float_decision(*float_expectations(q, n, s, entries))
            assert fy is None or fy == y, f"round {t + 1}: {d}"
        p = f.draw()
        assert (p, y) == (tp[t], ty[t])
        f.observe(y)
        a.observe(p, y)
        b = d.buckets[list(d.predictions).index(p)]
        n[b] += 1
        s[b] += y
    assert res.stats == f.stats() and wide > T // 2
    assert 0 < int(ty.sum()) < T


# -- (3) edge cases ---------------------------------------------------------------------------
def _coin(seed):
    """The outcome of the coin on a fresh generator of this seed, and its words after the toss."""
    rng = R.streams(seed)[1]
    return (1 if rng.uniform() < 0.5 else 0), rng.s


def test_first_round_point_masses():
    """Empty table, a point mass at q: one round at q. q = 1/2: CDL 1 whatever y, a tie (coin);
    q = 1/4: y = 1 gives CDL 1, y = 0 gives 1/3; q = 3/4: the mirror image; q = 0 (stated):
    y = 0 is calibrated (CDL 0), y = 1 gives 1."""
    q = np.arange(5) / 4
    zero = np.zeros(5, dtype=np.int64)
    for seed in range(6):
        assert _kernel(q, zero, zero, [(1.0, 2)], seed) == (_coin(seed)[0], _coin(seed)[1])
    assert exact_expectations([Fraction(j, 4) for j in range(5)], [0] * 5, [0] * 5, [(1.0, 1)]) == (1, Fraction(1, 3))
    seed_words = [int(w) for w in seed_states(0)[1]]
    assert _kernel(q, zero, zero, [(1.0, 1)]) == (1, seed_words)  # no coin drawn
    assert _kernel(q, zero, zero, [(1.0, 3)]) == (0, seed_words)
    assert _kernel(q, zero, zero, [(1.0, 0)]) == (1, seed_words)
    assert _kernel(q, zero, zero, [(1.0, 4)]) == (0, seed_words)
    # one stated value
    assert _kernel(np.array([0.25]), np.zeros(1, np.int64), np.zeros(1, np.int64), [(1.0, 0)])[0] == 1


def test_probability_one_half():
    """Mixtures with probability exactly 1/2: 1/4 and 3/4 on an empty table are an exact tie
    ((1 + 1/3) / 2 either way), evaluated through different chords: the coin; 1/4 and 1/2 are
    not ((1 + 1) / 2 > (1/3 + 1) / 2)."""
    q = np.arange(5) / 4
    zero = np.zeros(5, dtype=np.int64)
    st = [Fraction(j, 4) for j in range(5)]
    assert exact_expectations(st, [0] * 5, [0] * 5, [(0.5, 1), (0.5, 3)]) == (Fraction(2, 3), Fraction(2, 3))
    for seed in range(6):
        assert _kernel(q, zero, zero, [(0.5, 1), (0.5, 3)], seed) == _coin(seed)
    assert _kernel(q, zero, zero, [(0.5, 1), (0.5, 2)]) == (1, [int(w) for w in seed_states(0)[1]])
    # a symmetric table: mirror images on both sides of 1/2 stay an exact tie
    n = np.array([3, 5, 0, 5, 3], dtype=np.int64)
    s = np.array([1, 2, 0, 3, 2], dtype=np.int64)
    up, down = exact_expectations(st, list(n), list(s), [(0.5, 1), (0.5, 3)])
    assert up == down
    for seed in range(4):
        assert _kernel(q, n, s, [(0.5, 1), (0.5, 3)], seed) == _coin(seed)


def test_spec():
    spec = cdlahead.ADVERSARY
    assert spec.name == "cdlahead" and spec.resolve_params({}, 100) == {} and not spec.stochastic
    par = spec.parameter_vector({})
    assert par.shape == (cdlahead.SCRATCH,) and not par.any()
    with pytest.raises(ValueError, match="unknown parameter"):
        make_adversary("cdlahead", kinks=8)
