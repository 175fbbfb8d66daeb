"""Step 1 of Algorithm 1 (the two-point distribution), bucket boundaries, and the minimax solver."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcdl._compiled.step1 import boundary_points, step1_from_c
from fastcdl.online import minimax
from online_reference import minimax_lp, step1_value


def _step1(c, delta):
    pts, probs, bkt = np.zeros(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    lo = step1_from_c(np.asarray(c, dtype=np.float64), delta, pts, probs, bkt)
    return lo, pts, probs, bkt


def _candidates(c, m, delta):
    """Every point step 1 may use: 0, each bucket's right end b+1/m, and b/m + delta inside bucket b."""
    pts = [0.0] + [(b + 1) / m for b in range(m)] + [b / m + delta for b in range(1, m)]
    bkt = [0] + list(range(m)) + list(range(1, m))
    A = np.array([[c[b] * (x - 0), c[b] * (x - 1)] for x, b in zip(pts, bkt)])
    return A, pts, bkt


weights = st.lists(
    st.one_of(st.just(0.0), st.floats(-1, 1, allow_nan=False), st.floats(1e-12, 1e-9), st.floats(-1e-9, -1e-12)),
    min_size=1,
    max_size=40,
)
signs = st.sampled_from(["any", "positive", "negative", "zero"])


@settings(max_examples=300, deadline=None)
@given(weights, signs, st.floats(1e-9, 1.0))
def test_step1_value_at_most_delta(c, kind, frac):
    c = np.array(c)
    if kind == "positive":
        c = np.abs(c) + 1e-3
    elif kind == "negative":
        c = -np.abs(c) - 1e-3
    elif kind == "zero":
        c = np.zeros_like(c)
    if np.abs(c).sum() > 0:
        c = c / np.abs(c).sum()  # normalised weights: sum |c_i| <= 1
    m = c.size
    delta = frac / m
    lo, pts, probs, bkt = _step1(c, delta)
    value = step1_value(c, pts, probs, bkt)
    assert value <= delta + 1e-15
    if probs[1] > 0:  # a mix straddles the boundary between lo and lo + 1 at distance delta
        assert c[lo] < 0 <= c[lo + 1]
        assert list(bkt) == [lo, lo + 1] and pts[0] == (lo + 1) / m
        assert value <= delta * min(-c[lo], c[lo + 1]) + 1e-15
        assert abs(probs[0] * c[lo] + probs[1] * c[lo + 1]) <= 1e-15  # E[c] = 0
    else:
        assert value <= 1e-15
    # the minimax solver over all candidate points does at least as well, and on step 1's own
    # support it finds step 1's value and mixture
    A, _, _ = _candidates(c, m, delta)
    assert minimax(A).value <= value + 1e-15
    k = 2 if probs[1] > 0 else 1
    own = np.array([[c[bkt[j]] * pts[j], c[bkt[j]] * (pts[j] - 1)] for j in range(k)])
    sol = minimax(own)
    assert sol.value == pytest.approx(value, abs=1e-15)
    if k == 2 and min(probs) > 1e-9 and sol.value > 0:
        assert sol.points == (0, 1)
        # probabilities near 0 computed two ways agree to rounding of numbers near 1 (absolute
        # 1e-16), not to 1e-9 of themselves: a probability of 1.5e-9 was found off by 1.1e-16
        np.testing.assert_allclose(sol.probs, probs, rtol=1e-9, atol=1e-15)


def test_step1_cases():
    # c_1 >= 0: ptilde = 0; c_m <= 0: ptilde = 1; c_hi = 0: the right end of bucket hi
    assert _step1([0.0, -1.0], 0.01)[1][0] == 0.0
    assert _step1([-1.0, -0.5], 0.01)[1][0] == 1.0
    lo, pts, probs, bkt = _step1([-1.0, 0.0, 1.0], 0.01)
    assert lo == 0 and pts[0] == pytest.approx(2 / 3) and probs[0] == 1.0 and bkt[0] == 1
    lo, pts, probs, bkt = _step1([-0.25, 0.75], 0.01)
    assert list(bkt) == [0, 1] and probs[0] == pytest.approx(0.75) and pts[1] - pts[0] == pytest.approx(0.01)
    # mixing the grid points lo/m and (lo+1)/m instead would leave (1 - r) c_hi / m, not delta
    c = np.array([-0.25, 0.75])
    wrong = step1_value(c, [0.5, 1.0], probs, [0, 1])
    assert wrong == pytest.approx(0.25 * 0.75 / 2) and step1_value(c, pts, probs, bkt) <= 0.01


def test_bucket_boundaries_all_m():
    """The points lo/m and lo/m + delta carry buckets lo and lo + 1 for every m up to 10^5, and
    lo/m + delta lies strictly above the boundary in exact arithmetic (so bucket lo + 1 is right)."""
    pts, probs, bkt = np.zeros(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    for m in range(2, 100_001):
        for lo in {0, m // 2 - 1, m - 2}:
            for delta in (1.0 / 10**8, 1.0 / (2 * m)):
                boundary_points(lo, m, delta, 0.5, pts, probs, bkt)
                assert bkt[0] == lo and bkt[1] == lo + 1
                num, den = float(pts[1]).as_integer_ratio()
                assert num * m > (lo + 1) * den  # pts[1] > (lo+1)/m exactly
                assert num * m <= (lo + 2) * den  # pts[1] <= (lo+2)/m: inside bucket lo + 1
                num, den = float(pts[0]).as_integer_ratio()
                assert abs(num * m - (lo + 1) * den) * 2**53 <= den * m * 1.0000001  # lo/m to half an ulp


def test_bucket_recovered_from_float_would_be_wrong():
    """Why the bucket index travels with the point: ceil(p m) on floats misplaces boundary points."""
    bad = 0
    for m in range(2, 2000):
        for lo in range(m - 1):
            if np.ceil(((lo + 1) / m) * m) != lo + 1:
                bad += 1
    assert bad > 0


def test_minimax_small_games():
    assert minimax([[0.0, 1.0], [1.0, 0.0]]).value == pytest.approx(0.5)
    sol = minimax([[0.3, 0.3]])
    assert sol.points == (0,) and sol.value == pytest.approx(0.3)
    sol = minimax([[0.0, 1.0], [0.2, 0.2], [1.0, 0.0]])  # dominated mixture: the flat row wins
    assert sol.points == (1,) and sol.value == pytest.approx(0.2)
    sol = minimax([[1.0, 0.0], [2.0, 0.5]])  # row 0 dominates: pure, adversary plays y = 0
    assert sol.points == (0,) and sol.value == pytest.approx(1.0)
    with pytest.raises(ValueError, match="gains"):
        minimax([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="gains"):
        minimax([[np.nan, 0.0]])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_minimax_matches_lp(K, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(K, 2))
    if seed % 3 == 0:
        A = np.round(A, 1)  # ties between slopes and intercepts
    sol = minimax(A)
    assert sol.value == pytest.approx(minimax_lp(A), abs=1e-9)
    assert len(sol.points) in (1, 2) and sum(sol.probs) == pytest.approx(1.0)
    # the returned mixture guarantees the value against both outcomes
    mix = sum(p * A[j] for j, p in zip(sol.points, sol.probs))
    assert max(mix) <= sol.value + 1e-12
