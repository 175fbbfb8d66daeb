"""Exact decisions (fastcdl/_compiled/exact.py and its users) against rational arithmetic.

- the sign kernels equal the sign of the exact rational sum (fractions.Fraction), on random
  floats, on sums built to cancel exactly, and near ties (a few ulps away);
- rational_grid finds k/m for every grid j/m and (j+1)/m, m up to 2^20, and refuses what is
  no k/D with D <= 2^20;
- step 1's exact biases (step1.ExactBias) equal the rational sums of the raw points a/m + e delta,
  where the float sum leaves a residue;
- greedy's and contrarian's decisions equal their references' (tests/baseline_reference.py:
  Fraction arithmetic) on random small tables, grids and distributions, constructed exact ties
  included: the outcome, and whether the coin was tossed (the adversary generator's words).
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import baseline_reference as R
from fastcdl._compiled.exact import rational_grid, sign_dot2, sign_int_plus, sign_sum5
from fastcdl._compiled.step1 import add_to_bias, exact_bias
from fastcdl._compiled._jit import kernel
from fastcdl.online import make_adversary
from fastcdl.online.forecasters import Forecast


def _sign(x):
    return (x > 0) - (x < 0)


finite = st.floats(-1e30, 1e30, allow_nan=False, allow_infinity=False, allow_subnormal=True)
probs = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 0.1, 1 / 3, 0.2, 0.6]), st.floats(0.0, 1.0, allow_subnormal=False)
)


@given(st.lists(finite, min_size=5, max_size=5))
def test_sign_sum5_is_the_exact_sign(xs):
    assert sign_sum5(*xs) == _sign(sum(Fraction(x) for x in xs))


@given(st.lists(finite, min_size=2, max_size=2), st.lists(st.floats(-1e-5, 1e-5), min_size=1, max_size=1))
def test_sign_sum5_on_sums_that_cancel(pair, small):
    a, b = pair
    xs = [a, b, -a, -b, small[0]]  # exactly small[0]
    assert sign_sum5(*xs) == _sign(Fraction(small[0]))
    assert sign_sum5(a, -a, 0.0, b, -b) == 0


def test_sign_sum5_examples():
    assert 0.1 + 0.2 - 0.3 > 0 and sign_sum5(0.1, 0.2, -0.3, 0.0, 0.0) == 1  # fl(0.1) + fl(0.2) > fl(0.3)
    assert sign_sum5(1e16, 1.0, -1e16, -1.0, 0.0) == 0
    assert sign_sum5(1e16, 1.0, -1e16, -1.0, 5e-324) == 1
    assert sign_sum5(0.0, -0.0, 0.0, -0.0, 0.0) == 0


ints26 = st.integers(-(2**26) + 1, 2**26 - 1)


@given(probs, ints26, probs, ints26, st.integers(-(2**40), 2**40))
def test_sign_dot2_is_the_exact_sign(p0, x0, p1, x1, c):
    assert sign_dot2(p0, x0, p1, x1, c) == _sign(Fraction(p0) * x0 + Fraction(p1) * x1 + c)


@given(st.integers(1, 2**20), st.integers(0, 2**20), st.integers(0, 2**20))
def test_sign_dot2_on_constructed_ties(den, k0, k1):
    """p0 = 1/4, p1 = 3/4 and the mean of two grid values exactly den / 2, and a near miss."""
    k0 %= den + 1
    # 1/4 (2 k0) + 3/4 (2 k1) - den = 0  <=>  k0 + 3 k1 = 2 den
    k1 = (2 * den - k0) // 3
    c = -(Fraction(1, 4) * 2 * k0 + Fraction(3, 4) * 2 * k1)
    assert c.denominator == 1 or c.denominator == 2
    if c.denominator == 1:
        assert sign_dot2(0.25, 2 * k0, 0.75, 2 * k1, int(c)) == 0
    for p0 in (0.25, np.nextafter(0.25, 1.0), np.nextafter(0.25, 0.0), 0.1, 0.7):
        p1 = 1.0 - p0
        want = _sign(Fraction(p0) * 2 * k0 + Fraction(p1) * 2 * k1 - den)
        assert sign_dot2(p0, 2 * k0, p1, 2 * k1, -den) == want


@given(st.integers(-(2**50), 2**50), st.integers(0, 2**40), st.floats(2.0**-40, 1.0))
def test_sign_int_plus_is_the_exact_sign(i, k, x):
    assert sign_int_plus(i, k, x) == _sign(i + k * Fraction(x))


def test_sign_int_plus_at_exact_zero_and_near_it():
    for m in (3, 5, 7, 15, 1000):
        delta = 1.0 / 1024  # dyadic: (1024 m) delta = m exactly
        assert sign_int_plus(-m, m * 1024, delta) == 0
        assert sign_int_plus(-m + 1, m * 1024, delta) == 1
        assert sign_int_plus(-m - 1, m * 1024, delta) == -1
        assert sign_int_plus(-m, m * 1024, np.nextafter(delta, 0.0)) == -1  # one ulp below: not a tie
        assert sign_int_plus(-m, m * 1024, np.nextafter(delta, 1.0)) == 1


@pytest.mark.parametrize("m", [1, 2, 3, 5, 7, 10, 15, 31, 100, 641, 4093, 65536, 99991, 2**20])
def test_rational_grid_finds_every_uniform_grid(m):
    for grid in (np.arange(m + 1) / m, np.arange(1, m + 1) / m):
        num = np.zeros(grid.shape[0], dtype=np.int64)
        assert rational_grid(grid, num) == m
        assert np.array_equal(num, np.arange(m + 1 - grid.shape[0], m + 1))


def test_rational_grid_other_grids():
    num = np.zeros(5, dtype=np.int64)
    assert rational_grid(np.array([0.0, 1 / 3, 0.5, 2 / 3, 1.0]), num) == 6 and num.tolist() == [0, 2, 3, 4, 6]
    num = np.zeros(3, dtype=np.int64)
    assert rational_grid(np.array([0.1, np.pi / 4, 0.5]), num) == 0  # pi/4 is no k/D, D <= 2^20
    assert rational_grid(np.array([1 / (2**20 + 1), 0.5, 1.0]), num) == 0  # denominator too large
    assert rational_grid(np.array([1 / 1021, 1 / 1031, 1.0]), num) == 0  # lcm 1052651 > 2^20
    assert rational_grid(np.array([0.0, 0.5, 1.5]), num) == 0  # outside [0, 1]


# -- step 1's exact biases ------------------------------------------------------------------------
@kernel(cache=False)
def _run_biases(m, delta, a, e, y, b):
    eb = exact_bias(m)
    G = np.zeros(m)
    for t in range(a.shape[0]):
        add_to_bias(eb, b[t], a[t], e[t], y[t], m, delta)
        G[b[t]] += (a[t] / m + delta if e[t] else a[t] / m) - y[t]
    return eb.sign, G


@given(st.integers(1, 12), st.sampled_from([1e-3, 1 / 1024, 1 / 3000, 0.0625]), st.data())
def test_exact_biases_equal_the_rational_sums(m, delta, data):
    delta = min(delta, 1.0 / m)
    T = data.draw(st.integers(1, 60))
    b = np.array(data.draw(st.lists(st.integers(0, m - 1), min_size=T, max_size=T)), dtype=np.int64)
    e = np.array([data.draw(st.integers(0, 1)) if bb > 0 else 0 for bb in b], dtype=np.int64)
    a = np.array(
        [bb if ee else (bb + 1 if data.draw(st.booleans()) or bb > 0 else 0) for bb, ee in zip(b, e)], dtype=np.int64
    )
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=T, max_size=T)), dtype=np.int64)
    sign, _ = _run_biases(m, delta, a, e, y, b)
    G = [Fraction(0)] * m
    for t in range(T):
        G[b[t]] += Fraction(int(a[t]), m) + int(e[t]) * Fraction(delta) - int(y[t])
    assert sign.tolist() == [float(_sign(g)) for g in G]


def test_exact_bias_is_zero_where_the_float_sum_leaves_a_residue():
    """Seven rounds at the right end 1/7 of bucket 0 and one y = 1: G_0 = 7/7 - 1 = 0 exactly;
    the float sum is -2.2e-16 (this test's premise, checked)."""
    m = 7
    b = np.zeros(8, dtype=np.int64)
    a = np.ones(8, dtype=np.int64)
    e = np.zeros(8, dtype=np.int64)
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0])
    sign, G = _run_biases(m, 1e-3, a[:7], e[:7], y[:7], b[:7])
    assert G[0] != 0.0 and sign[0] == 0.0


# -- the adversaries' decisions ---------------------------------------------------------------------
def _respond(name, grid_fracs, n, s, entries, seed):
    """(kernel's y, its generator's words after) and (reference's y, its words) for one round with
    the public record (n, s) on the grid, the distribution [(prob, bucket), ...]."""
    grid = np.array([float(f) for f in grid_fracs])
    probs = tuple(p for p, _ in entries)
    buckets = tuple(b for _, b in entries)
    d = Forecast(tuple(grid[b] for b in buckets), probs, tuple(grid[b] for b in buckets), buckets, grid)
    a = make_adversary(name, seed=seed)
    table = a._table_for(grid, 2)  # a two-point forecaster
    table.n[:] = n
    table.s[:] = s
    y = a.respond(d)
    ra = R.make_adversary(name, 1)
    _, arng = R.streams(seed)
    ry = ra.respond(1, -1, list(entries), list(grid_fracs), list(n), list(s), arng)
    return (y, [int(w) for w in a._rng]), (ry, arng.s)


@st.composite
def rounds(draw):
    kind = draw(st.sampled_from(["k/m", "(k+1)/m", "thirds and halves"]))
    if kind == "thirds and halves":
        grid = [Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), Fraction(1)]
    else:
        m = draw(st.integers(1, 20))
        grid = [Fraction(j, m) for j in (range(m + 1) if kind == "k/m" else range(1, m + 1))]
    k = len(grid)
    n = draw(st.lists(st.integers(0, 12), min_size=k, max_size=k))
    s = [draw(st.integers(0, c)) for c in n]
    two = draw(st.booleans()) and k > 1
    if two:
        b0 = draw(st.integers(0, k - 2))
        b1 = draw(st.integers(b0 + 1, k - 1))
        p0 = draw(probs.filter(lambda p: 0.0 < p < 1.0))
        entries = [(p0, b0), (1.0 - p0, b1)]
    else:
        entries = [(1.0, draw(st.integers(0, k - 1)))]
    return grid, n, s, entries


@pytest.mark.parametrize("name", ["greedy", "contrarian"])
@given(case=rounds(), seed=st.integers(0, 2**32))
def test_adversary_decisions_equal_the_exact_reference(name, case, seed):
    grid, n, s, entries = case
    kernel, reference = _respond(name, grid, n, s, entries, seed)
    assert kernel == reference


@pytest.mark.parametrize("m", [5, 6, 10, 15])
def test_constructed_ties(m):
    """Ties built exactly: contrarian at a mean of exactly 1/2 says 0; greedy with equal expected
    increases tosses its coin (one uniform drawn); both as their references."""
    grid = [Fraction(j, m) for j in range(m + 1)]
    ties = 0
    for k0 in range(m + 1):
        for k1 in range(k0 + 1, m + 1):
            # 1/4 k0/m + 3/4 k1/m = 1/2  <=>  k0 + 3 k1 = 2 m
            if k0 + 3 * k1 != 2 * m:
                continue
            ties += 1
            for name in ("greedy", "contrarian"):
                kernel, reference = _respond(name, grid, [0] * (m + 1), [0] * (m + 1), [(0.25, k0), (0.75, k1)], 7)
                assert kernel == reference
                if name == "contrarian":
                    assert kernel[0] == 0
    assert ties > 0
