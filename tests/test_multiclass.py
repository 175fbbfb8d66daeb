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
        ([0, 1], [[0.5, 0.5, 0.0], [0.2, 0.3, 0.49]], "row 1 (0-based) sums to"),
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
    with pytest.raises(ValueError, match="3 distinct rows, more than max_rows=2"):
        fc.cdl_multiclass([0, 1, 0], _binary_P([0.3, 0.6, 0.7]), max_rows=2)
    with pytest.raises(ValueError, match="max_rows must be a positive integer"):
        fc.cdl_multiclass([0], [[1.0, 0.0]], max_rows=0)


# -- the constraint-generation LP equals the first formulation (all pairs, point masses) --


def _random_case(seed, k, m, per):
    rng = np.random.default_rng(seed)
    Q = np.round(rng.dirichlet(np.full(k, 0.7), size=m), 2)
    Q[:, -1] = 0.0
    Q[:, -1] = 1.0 - Q.sum(axis=1)
    Q = Q[(Q >= 0).all(axis=1)]
    P = Q[rng.integers(0, Q.shape[0], per * m)]
    truth = 0.6 * P + 0.4 / k
    y = np.minimum((rng.random(P.shape[0])[:, None] > np.cumsum(truth, axis=1)).sum(axis=1), k - 1)
    return y, P


@pytest.mark.parametrize(
    "seed, k, m, per", [(0, 3, 6, 10), (1, 4, 12, 5), (2, 5, 25, 8), (3, 10, 30, 20), (4, 3, 40, 1), (5, 6, 20, 3)]
)
def test_equals_the_first_formulation(seed, k, m, per):
    from fastcdl.multiclass import _cdl_lp_all_pairs

    y, P = _random_case(seed, k, m, per)
    new = fc.cdl_multiclass(y, P)
    old = _cdl_lp_all_pairs(y, P)
    assert new > 0.01
    assert abs(new - old) <= LP_TOL  # two LPs (HiGHS) on constraint sets picked through BLAS


def test_first_formulation_on_the_hand_examples():
    from fastcdl.multiclass import _cdl_lp_all_pairs

    y = np.zeros(12, dtype=int)
    P = np.tile([2 / 3, 1 / 6, 1 / 6], (12, 1))
    assert _cdl_lp_all_pairs(y, P) == pytest.approx(0.5, abs=LP_TOL)
    assert fc.cdl_multiclass(y, P) == pytest.approx(0.5, abs=LP_TOL)


# -- float32 rows --------------------------------------------------------------------------


def _softmax32(rng, T, k):
    z = rng.normal(size=(T, k)).astype(np.float32) * 2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)  # float32 rows, sums off by a few 1e-8


def test_float32_softmax_rows_are_accepted():
    rng = np.random.default_rng(0)
    P = _softmax32(rng, 5000, 10)
    assert P.dtype == np.float32
    dev = np.abs(P.sum(axis=1, dtype=np.float64) - 1)
    assert dev.max() > 1e-9  # what the float64 tolerance refused
    y = rng.integers(0, 10, 5000)
    for mc in ("top-label", "classwise"):
        assert 0 <= float(fc.ece(y, P, multiclass=mc, bins=15)) < 1
    # converted to float64 later, the rows keep float32's tolerance
    assert fc.ece(y, P.astype(np.float64), multiclass="top-label", bins=15) == fc.ece(
        y, P, multiclass="top-label", bins=15
    )
    # the exact LP on rounded float32 rows
    R = np.round(P[:300].astype(np.float64), 1).astype(np.float32)
    R[:, 0] = 0
    R[:, 0] = 1 - R.sum(axis=1)
    R = R[(R >= 0).all(axis=1)]
    assert 0 <= fc.cdl_multiclass(y[: R.shape[0]], R) <= 1


def test_rows_beyond_float32_precision_name_row_and_fix():
    P = np.full((4, 10), 0.1, dtype=np.float32)
    P[2, 3] += 1e-4
    with pytest.raises(ValueError) as e:
        fc.cdl_multiclass([0, 1, 2, 3], P)
    msg = str(e.value)
    assert "row 2 (0-based) sums to" in msg and "float32" in msg and "k = 10" in msg
    assert "P / P.sum(axis=1, keepdims=True)" in msg
    with pytest.raises(ValueError, match="y_prob / y_prob.sum"):
        fc.ece([0, 1, 2, 3], P, multiclass="top-label")
    # float64 rows keep the 1e-9 tolerance
    P64 = np.full((2, 3), 1 / 3)
    P64[1, 0] += 1e-7
    with pytest.raises(ValueError, match=r"float64 rows with k = 3.*row 1 \(0-based\) sums to"):
        fc.cdl_multiclass([0, 1], P64)


# -- top-label and class-wise reductions of the binary metrics ----------------------------

from fractions import Fraction  # noqa: E402


# These tests compare the reductions with the binary metrics on small samples whose
# buckets mostly hold one round; that the exact metrics warn on such tables (SampleSizeWarning) is tested in
# tests/test_sample_size_warning.py, not here.
pytestmark = pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")

METRICS = ["ece", "k2", "cdl", "vcdl", "ucal"]


def _digits_like(seed=0, T=3000, k=10):
    rng = np.random.default_rng(seed)
    P = _softmax32(rng, T, k)
    truth = 0.7 * P.astype(np.float64) + 0.3 / k
    y = np.minimum((rng.random(T)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1), k - 1)
    return y, P


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("bins", [None, 15])
def test_top_label_is_the_binary_metric_of_confidence_and_correctness(name, bins):
    y, P = _digits_like()
    f = getattr(fc, name)
    conf = P.max(axis=1).astype(np.float64)
    correct = (y == np.argmax(P, axis=1)).astype(int)
    assert f(y, P, multiclass="top-label", bins=bins) == f(correct, conf, bins=bins)


@pytest.mark.parametrize("name", METRICS)
def test_classwise_is_one_binary_problem_per_class(name):
    y, P = _digits_like(seed=1, k=4)
    f = getattr(fc, name)
    r = f(y, P, multiclass="classwise", bins=10)
    assert isinstance(r, fc.ClasswiseResult)
    want = np.array([f((y == j).astype(int), P[:, j].astype(np.float64), bins=10) for j in range(4)])
    assert np.array_equal(r.per_class, want)
    assert np.allclose(r.weights, 0.25)
    assert float(r) == pytest.approx(want.mean(), abs=1e-15)


def test_top_label_ties_go_to_the_lowest_index():
    P = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.5, 0.5, 0.0]])
    y = np.array([1, 1, 0])
    # predicted classes 0, 1, 0: right only in the last two rounds
    assert fc.ece(y, P, multiclass="top-label") == fc.ece([0, 1, 1], [0.4, 0.4, 0.5])


def test_reports_curves_tables_and_tasks_reduce_too():
    y, P = _digits_like(seed=2, k=3)
    conf = P.max(axis=1).astype(np.float64)
    correct = (y == np.argmax(P, axis=1)).astype(int)
    assert fc.cdl_report(y, P, multiclass="top-label", bins=10).value == fc.cdl(correct, conf, bins=10)
    rep = fc.cdl_report(y, P, multiclass="classwise", bins=10)
    assert len(rep.per_class) == 3 and rep.mean == pytest.approx(np.mean([r.value for r in rep.per_class]))
    st = fc.bucket_stats(y, P, multiclass="top-label", bins=10)
    assert st == fc.bucket_stats(correct, conf, bins=10)
    tables = fc.bucket_stats(y, P, multiclass="classwise", bins=10).per_class
    assert [t.total for t in tables] == [len(y)] * 3
    kinks, curves = fc.decision_loss_curve(y, P, multiclass="classwise", bins=10)
    assert curves.per_class.shape == (3, kinks.shape[0])
    for j in range(3):
        want = fc.decision_loss_curve((y == j).astype(int), P[:, j].astype(np.float64), bins=10, kinks=kinks)[1]
        assert np.array_equal(curves.per_class[j], want)
    assert np.allclose(curves.mean, curves.per_class.mean(axis=0))
    u = [[1.0, 0.0], [0.3, 0.9]]
    assert fc.cfdl(y, P, multiclass="top-label", payoff=u) == fc.cfdl(correct, conf, payoff=u)
    assert fc.swap_regret(y, P, multiclass="top-label", payoff=u) == fc.swap_regret(correct, conf, payoff=u)
    w = np.arange(len(y)) % 3
    assert fc.ece(y, P, multiclass="top-label", sample_weight=w) == fc.ece(correct, conf, sample_weight=w)


def test_a_probability_of_y_equal_1_reduces_as_two_classes():
    rng = np.random.default_rng(3)
    p = rng.integers(0, 11, 400) / 10
    y = (rng.random(400) < p).astype(int)
    P = np.column_stack([1 - p, p])
    for mc in ("top-label", "classwise"):
        assert float(fc.cdl(y, p, multiclass=mc)) == float(fc.cdl(y, P, multiclass=mc))


def test_multiclass_options_are_checked():
    y, P = _digits_like(seed=4, T=50, k=3)
    with pytest.raises(ValueError, match="multiclass must be one of top-label, classwise; got 'top'"):
        fc.ece(y, P, multiclass="top")
    with pytest.raises(ValueError, match="pass multiclass='top-label'"):
        fc.cdl(y, P)
    with pytest.raises(ValueError, match="pos_label applies to binary problems"):
        fc.ece(y, P, multiclass="top-label", pos_label=1)
    with pytest.raises(ValueError, match="multiclass does not apply to a BucketStats"):
        fc.ece(fc.bucket_stats([0, 1], [0.2, 0.3]), multiclass="top-label")
    with pytest.raises(ValueError, match="y_true must contain labels 0..2"):
        fc.ece(y + 1, P, multiclass="classwise")


# -- pos_label and predict_proba outputs ---------------------------------------------------


def test_pos_label_and_predict_proba_columns():
    rng = np.random.default_rng(5)
    p = rng.integers(1, 10, 300) / 10
    y01 = (rng.random(300) < p).astype(int)
    want = fc.cdl(y01, p)
    labels = np.where(y01 == 1, "spam", "ham")
    assert fc.cdl(labels, p, pos_label="spam") == want
    assert fc.cdl(np.where(y01 == 1, 1, -1), p, pos_label=1) == want
    P = np.column_stack([1 - p, p])
    assert fc.cdl(y01, P) == want  # (n, 2): column 1
    assert fc.cdl(y01, p[:, None]) == want  # (n, 1)
    # sorted labels ham < spam: spam's column is 1; with pos_label="ham" column 0
    assert fc.cdl(labels, P, pos_label="spam") == want
    assert fc.cdl(labels, P, pos_label="ham") == fc.cdl(1 - y01, 1 - p)
    with pytest.raises(ValueError, match="pos_label must be one of the labels of y_true"):
        fc.cdl(labels, p, pos_label="eggs")
    with pytest.raises(ValueError, match="y_true holds 3 labels"):
        fc.cdl(["a", "b", "c"], [0.1, 0.2, 0.3], pos_label="a")
    with pytest.raises(ValueError, match="for labels other than 0 and 1 pass pos_label"):
        fc.cdl(labels, p)
    with pytest.raises(ValueError, match="each row of y_prob must sum to 1"):
        fc.cdl(y01, np.column_stack([p, p]))


# -- tasks over k outcomes: swap regret and its report ------------------------------------


def _swap_ref(y, P, U, w=None):
    """Plain Python with Fractions: exact best responses, ties to the lowest index."""
    A = len(U)
    w = [1] * len(y) if w is None else list(w)
    rows = {a: [] for a in range(A)}
    for yt, pt, wt in zip(y, P, w):
        vals = [sum(Fraction(float(px)) * Fraction(float(ua)) for px, ua in zip(pt, U[a])) for a in range(A)]
        a = max(range(A), key=lambda i: (vals[i], -i))
        rows[a].append((yt, wt))
    total = Fraction(0)
    for a, rs in rows.items():
        best = max(
            sum(Fraction(float(wt)) * (Fraction(float(U[b][yt])) - Fraction(float(U[a][yt]))) for yt, wt in rs)
            for b in range(A)
        )
        total += max(best, 0)
    return float(total / sum(Fraction(float(x)) for x in w))


@pytest.mark.parametrize("seed", range(6))
def test_swap_regret_over_k_outcomes_matches_reference(seed):
    rng = np.random.default_rng(seed)
    k, A, T = int(rng.integers(3, 6)), int(rng.integers(1, 6)), 200
    # dyadic rows and payoffs: many exact ties between actions
    P = rng.integers(0, 5, (T, k)).astype(np.float64)
    P[:, 0] += 1
    P = P / 2 ** np.ceil(np.log2(P.sum(axis=1)))[:, None]
    P[:, 0] += 1 - P.sum(axis=1)
    U = rng.integers(0, 5, (A, k)) / 4
    y = rng.integers(0, k, T)
    w = rng.integers(0, 4, T) / 2
    assert fc.swap_regret(y, P, payoff=U) == pytest.approx(_swap_ref(y, P, U), abs=1e-12)
    assert fc.swap_regret(y, P, payoff=U, sample_weight=w) == pytest.approx(_swap_ref(y, P, U, w), abs=1e-12)


def test_swap_report_fields_and_bounds():
    y, P = _random_case(6, 4, 12, 10)
    rng = np.random.default_rng(6)
    U = rng.random((5, 4))
    r = fc.swap_report(y, P, payoff=U)
    assert r.counts.sum() == len(y)
    assert r.value == pytest.approx(r.gain.sum()) and r.value == fc.swap_regret(y, P, payoff=U)
    used = r.counts > 0
    assert np.allclose(r.bias[used], r.mean_prediction[used] - r.frequency[used])
    assert np.allclose(r.frequency[used].sum(axis=1), 1) and np.allclose(r.mean_prediction[used].sum(axis=1), 1)
    for a in range(5):
        if r.gain[a] == 0:
            assert r.swap_to[a] == a
    # swap regret of any task <= its decision loss <= CDL (docs/metrics.md)
    assert r.value <= fc.cdl_multiclass(y, P) + LP_TOL


def test_two_outcome_tasks_agree_with_the_binary_swap_regret():
    rng = np.random.default_rng(7)
    p = rng.integers(0, 21, 500) / 20
    y = (rng.random(500) < p).astype(int)
    U = rng.random((4, 2))
    want = fc.swap_regret(y, p, payoff=U)
    r = fc.swap_report(y, p, payoff=U)
    assert r.value == pytest.approx(want, abs=1e-15)
    assert fc.swap_report(fc.bucket_stats(y, p), payoff=U).value == pytest.approx(want, abs=1e-15)
    # as k = 2 distributions, away from the tie points of U
    off = np.ones(500, bool)
    P = np.column_stack([1 - p, p])
    U3 = np.column_stack([U, np.zeros(4)])  # a third outcome that never happens
    P3 = np.column_stack([P, np.zeros(500)])
    assert fc.swap_regret(y[off], P3[off], payoff=U3) == pytest.approx(want, abs=1e-12)


def test_swap_report_checks_the_task():
    y, P = _random_case(8, 3, 5, 4)
    with pytest.raises(ValueError, match=r"payoff must have shape \(n_actions, 3\)"):
        fc.swap_report(y, P, payoff=np.ones((2, 4)))
    with pytest.raises(ValueError, match="payoff entries must lie in"):
        fc.swap_regret(y, P, payoff=[[0, 2, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match="bins does not apply to a task over k outcomes"):
        fc.swap_regret(y, P, payoff=np.eye(3), bins=10)


@pytest.mark.parametrize("name", ["cdl_monotone", "vcdl_monotone", "cutoff_ce", "atb", "smce", "mce", "rmsce", "brier"])
def test_sample_estimators_reduce_too(name):
    y, P = _digits_like(seed=9, T=1500, k=3)
    f = getattr(fc, name)
    conf = P.max(axis=1).astype(np.float64)
    correct = (y == np.argmax(P, axis=1)).astype(int)
    assert f(y, P, multiclass="top-label") == f(correct, conf)
    r = f(y, P, multiclass="classwise")
    assert r.per_class.tolist() == [f((y == j).astype(int), P[:, j].astype(np.float64)) for j in range(3)]
    assert f(np.where(correct == 1, "yes", "no"), conf, pos_label="yes") == f(correct, conf)
