"""cdl_multiclass: the linear program of docs/metrics.md for k outcomes.

Checked against the exact binary CDL (k = 2, and k = 2 embedded in k = 3), against
values derived by hand from the definition, and against bounds that hold for every
proper score with values in [0, 1]:

    (1/2T) sum_i n_i ||q_i - qhat_i||_2^2  <=  CDL  <=  (1/T) sum_i n_i ||q_i - qhat_i||_1.

The lower bound is the decision loss of the quadratic score 1 - ||q - e_y||^2 / 2 (for
k = 2 it is K2); the upper bound holds because the gain of bucket i is
qhat_i . (s_qhat - s_q) <= (qhat_i - q_i) . (s_qhat - s_q) (properness at q_i) and the
score differences lie in [-1, 1] (for k = 2 it is 2 ECE).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcdl as fc
from conftest import rounds
from fastcdl.multiclass import MAX_ROWS

LP_TOL = 1e-8


def _binary_P(p):
    p = np.asarray(p, dtype=np.float64)
    return np.column_stack([1.0 - p, p])


def _buckets(y, P):
    """(distinct rows q_i, counts n_i, empirical distributions qhat_i), by plain loops."""
    k = P.shape[1]
    rows = {}
    for yt, row in zip(y, map(tuple, P)):
        rows.setdefault(row, np.zeros(k))[yt] += 1
    q = np.array(list(rows))
    counts = np.array(list(rows.values()))
    n = counts.sum(axis=1)
    return q, n, counts / n[:, None]


def _bounds(y, P):
    q, n, qhat = _buckets(y, P)
    T = n.sum()
    lower = float(np.sum(n * np.sum((q - qhat) ** 2, axis=1)) / (2 * T))
    upper = float(np.sum(n * np.sum(np.abs(q - qhat), axis=1)) / T)
    return lower, upper


def _cfdl(y, P, U):
    """CFDL of the task U (actions x k): gain of best-responding to qhat instead of q."""
    q, n, qhat = _buckets(y, P)
    gain = 0.0
    for qi, ni, hi in zip(q, n, qhat):
        a_q, a_hat = int(np.argmax(U @ qi)), int(np.argmax(U @ hi))  # ties: lowest action
        gain += ni * (hi @ U[a_hat] - hi @ U[a_q])
    return gain / n.sum()


def _three_class(seed, T=600, shrink=0.5):
    """Predictions on a few distinct rows of the simplex; outcomes from rows pulled toward uniform."""
    rng = np.random.default_rng(seed)
    Q = np.array(
        [[1.0, 0.0, 0.0], [0.5, 0.25, 0.25], [0.2, 0.3, 0.5], [1 / 3, 1 / 3, 1 / 3], [0.0, 0.1, 0.9], [0.6, 0.4, 0.0]]
    )
    P = Q[rng.integers(0, len(Q), T)]
    truth = shrink * P + (1 - shrink) / 3
    y = (rng.random(T)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1)
    return y, P


# -- k = 2 agrees with the exact binary CDL (docs/exact-cdl.md) ------------------------


@given(rounds(max_size=30))
@settings(max_examples=40)
def test_binary_equals_cdl(data):
    y, p = data
    assert fc.cdl_multiclass(y, _binary_P(p)) == pytest.approx(fc.cdl(y, p), abs=LP_TOL)


@pytest.mark.parametrize("seed", range(8))
def test_binary_grid_with_0_half_1(seed):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 200))
    grid = np.r_[0.0, 0.5, 1.0, rng.integers(0, 11, 3) / 10]
    p = rng.choice(grid, T)
    p[: min(T, 3)] = [0.0, 0.5, 1.0][: min(T, 3)]
    y = rng.integers(0, 2, T)
    want = fc.cdl(y, p)
    assert fc.cdl_multiclass(y, _binary_P(p)) == pytest.approx(want, abs=LP_TOL)
    # an outcome that never happens and is never predicted changes nothing
    P3 = np.column_stack([1.0 - p, p, np.zeros(T)])
    assert fc.cdl_multiclass(y, P3) == pytest.approx(want, abs=LP_TOL)


def test_binary_known_value():
    # docs/exact-cdl.md: saying 3/4 when y = 1 and 1/4 when y = 0, half the rounds each, has CDL 1/4
    y = [0, 0, 1, 1]
    p = [0.25, 0.25, 0.75, 0.75]
    assert fc.cdl_multiclass(y, _binary_P(p)) == pytest.approx(0.25, abs=LP_TOL)


# -- k = 3 -----------------------------------------------------------------------------


def test_calibrated_three_class_is_zero():
    # each distinct row is exactly the empirical distribution of the outcomes it is paired with
    blocks = [
        ([0.5, 0.25, 0.25], [0, 0, 1, 2]),
        ([1 / 3, 1 / 3, 1 / 3], [0, 1, 2, 2, 1, 0]),
        ([1.0, 0.0, 0.0], [0, 0, 0]),
        ([0.0, 0.6, 0.4], [1, 2, 1, 2, 1]),
    ]
    P = np.array([row for row, ys in blocks for _ in ys])
    y = np.array([yt for _, ys in blocks for yt in ys])
    assert fc.cdl_multiclass(y, P) == 0.0


def test_adding_calibrated_rounds_dilutes_exactly():
    # calibrated buckets gain nothing under any task, and the extra score vectors do not
    # change the supremum: CDL scales by T / (T + T_calibrated)
    y, P = _three_class(seed=3, T=120)
    cal_P = np.array([[0.5, 0.25, 0.25]] * 4 + [[0.0, 0.6, 0.4]] * 5)
    cal_y = np.array([0, 0, 1, 2] + [1, 2, 1, 2, 1])
    base = fc.cdl_multiclass(y, P)
    both = fc.cdl_multiclass(np.r_[y, cal_y], np.r_[P, cal_P])
    assert base > 0.05
    assert both == pytest.approx(base * len(y) / (len(y) + len(cal_y)), abs=LP_TOL)


@pytest.mark.parametrize("seed", range(4))
def test_miscalibrated_three_class_is_positive_and_within_bounds(seed):
    y, P = _three_class(seed)
    value = fc.cdl_multiclass(y, P)
    lower, upper = _bounds(y, P)
    assert 0.02 < lower <= value + LP_TOL
    assert value <= upper + LP_TOL
    rng = np.random.default_rng(seed)
    for _ in range(20):  # every task's decision loss is at most the CDL
        U = rng.random((int(rng.integers(1, 5)), 3))
        assert _cfdl(y, P, U) <= value + LP_TOL


def test_invariant_to_permuting_rounds_and_relabelling_outcomes():
    y, P = _three_class(seed=5, T=300)
    value = fc.cdl_multiclass(y, P)
    order = np.random.default_rng(0).permutation(len(y))
    assert fc.cdl_multiclass(y[order], P[order]) == pytest.approx(value, abs=1e-12)
    relabel = np.array([2, 0, 1])  # outcome j becomes relabel[j]; P's columns follow
    P2 = np.empty_like(P)
    P2[:, relabel] = P
    assert fc.cdl_multiclass(relabel[y], P2) == pytest.approx(value, abs=LP_TOL)


def test_uniform_forecast_of_a_sure_outcome_by_hand():
    # Always (1/3, 1/3, 1/3), the outcome is always 0: one bucket, q = u, qhat = e_0, so
    # CDL = sup over proper s of s_{e0}(0) - s_u(0), at most 1. The task "bet on an
    # outcome", action j paying 1 when y = j, except action 0 paying 1 - eps, is such a
    # task: at u it plays action 1 (payoff 0 when y = 0), at e_0 action 0 (1 - eps). The
    # supremum over eps is 1.
    y = np.zeros(30, dtype=int)
    P = np.full((30, 3), 1 / 3)
    assert fc.cdl_multiclass(y, P) == pytest.approx(1.0, abs=LP_TOL)


def test_confident_forecast_of_a_sure_outcome_by_hand():
    # Always q = (2/3, 1/6, 1/6), the outcome is always 0: CDL = sup s_{e0}(0) - s_q(0).
    # Properness at q against e_0 reads (2/3) s_q(0) + (s_q(1) + s_q(2)) / 6
    #   >= (2/3) s_e0(0) + (s_e0(1) + s_e0(2)) / 6.
    # Best: s_e0 = (1, 0, 0) and s_q(1) = s_q(2) = 1, so (2/3) s_q(0) + 1/3 >= 2/3, i.e.
    # s_q(0) >= 1/2, and the gain is 1 - 1/2 = 1/2 (s_e1 = (0, 1, 0), s_e2 = (0, 0, 1)
    # keep the point masses proper). The binary view (y = 0 vs not, p = 1/3, qhat = 0)
    # gives the same: 2 fbar(1/2) with f(mu) = mu on (0, 1/3], so fbar(1/2) = 1/4.
    y = np.zeros(12, dtype=int)
    P = np.tile([2 / 3, 1 / 6, 1 / 6], (12, 1))
    assert fc.cdl_multiclass(y, P) == pytest.approx(0.5, abs=LP_TOL)
    assert fc.cdl(np.zeros(12), np.full(12, 1 / 3)) == pytest.approx(0.5, abs=1e-15)


def test_accepts_bool_and_float_labels_and_integer_P():
    P = np.array([[1, 0], [0, 1], [1, 0]])
    assert fc.cdl_multiclass(np.array([False, True, True]), P) == pytest.approx(
        fc.cdl([0, 1, 1], [0.0, 1.0, 0.0]), abs=LP_TOL
    )
    assert fc.cdl_multiclass([0.0, 1.0, 1.0], P) == fc.cdl_multiclass([0, 1, 1], P)


# -- bad input --------------------------------------------------------------------------

GOOD_P = [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]


@pytest.mark.parametrize(
    "y, P, needle",
    [
        ([0, 3], GOOD_P, "labels 0..2"),
        ([0, -1], GOOD_P, "labels 0..2"),
        ([0, 0.5], GOOD_P, "integer labels"),
        (["a", "b"], GOOD_P, "integer labels"),
        ([0, np.nan], GOOD_P, "integer labels"),
        ([0, 1], [[0.5, 0.6, 0.0], [0.2, 0.3, 0.5]], "sum to 1"),
        ([0, 1], [[0.5, 0.5, 0.0], [0.2, 0.3, 0.49]], "row 1 sums to"),
        ([0, 1], [[1.5, -0.5, 0.0], [0.2, 0.3, 0.5]], "[0, 1]"),
        ([0, 1], [[0.5, 0.5, 0.0], [np.nan, 0.5, 0.5]], "NaN"),
        ([0, 1], [[0.5, 0.5, 0.0], [np.inf, 0.5, 0.5]], "infinite"),
        ([0, 1, 1], GOOD_P, "different numbers of rounds"),
        ([[0, 1]], GOOD_P, "y_true must be 1-D"),
        ([0, 1], [0.5, 0.5], "2-D"),
        ([], np.zeros((0, 3)), "empty"),
        ([0, 0], [[1.0], [1.0]], "at least two columns"),
        ([0, 1], [["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_input_names_the_problem(y, P, needle):
    with pytest.raises(ValueError) as e:
        fc.cdl_multiclass(y, P)
    assert needle in str(e.value)


def test_too_many_distinct_rows_is_refused_quickly():
    # MAX_ROWS + 1 distinct rows: refused before any LP is built
    p = np.arange(MAX_ROWS + 1) / MAX_ROWS
    y = np.zeros(p.shape[0], dtype=int)
    with pytest.raises(ValueError, match=rf"{MAX_ROWS + 1} distinct rows, more than max_rows={MAX_ROWS}"):
        fc.cdl_multiclass(y, _binary_P(p))
    # few distinct rows but many score vectors (rows, their frequencies, point masses)
    with pytest.raises(ValueError, match="score vectors"):
        fc.cdl_multiclass([0, 1, 0, 1], _binary_P([0.3, 0.3, 0.6, 0.6]), max_rows=4)
    with pytest.raises(ValueError, match="max_rows must be a positive integer"):
        fc.cdl_multiclass([0], [[1.0, 0.0]], max_rows=0)
