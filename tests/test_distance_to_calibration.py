"""ldtc and intce (fastcdl/distance_to_calibration.py) against references written from the
definitions of Blasiok, Gopalan, Hu and Nakkiran (2023).

- LDTC: the dual of the grid program, dense, solved by HiGHS's simplex; a dense primal whose
  plan is mapped to a coarse grid by the splitting argument of the docs (checking the
  argument itself); the grid bound; the relations with smCE, intCE and ECE.
- intCE: every grouping of the buckets into consecutive groups, in Fractions; the random-shift
  version by its piecewise-constant integrand, on relplot's bin convention.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import fastcdl as fc
from fastcdl import distance_to_calibration as dc
from fastcdl._validate import ValidationError

TOL = 1e-7  # HiGHS's tolerances on programs of this size


@st.composite
def small_tables(draw, max_buckets=5, on_grid=False):
    """(q, n, s): distinct sorted predictions (twentieths, or any floats, with 0, 1/2, 1)."""
    m = draw(st.integers(1, max_buckets))
    pool = st.sampled_from([i / 20 for i in range(21)])
    if not on_grid:
        pool = st.one_of(pool, st.floats(0, 1, allow_nan=False))
    q = sorted(set(draw(st.lists(pool, min_size=m, max_size=m))))
    n = [draw(st.integers(1, 5)) for _ in q]
    s = [draw(st.integers(0, k)) for k in n]
    return np.array(q, float), np.array(n, float), np.array(s, float)


def _stats(q, n, s):
    return fc.BucketStats.from_table(q, n.astype(np.int64), s.astype(np.int64))


def _atoms(q, n, s):
    """(q, y, mass) of every (bucket, outcome) of positive mass."""
    T = n.sum()
    out = [(qi, 0, (ni - si) / T) for qi, ni, si in zip(q, n, s) if ni > si]
    out += [(qi, 1, si / T) for qi, ni, si in zip(q, n, s) if si > 0]
    return out


def dual_reference(q, n, s, G):
    """max sum_a mass_a alpha_a + 0 * lam over alpha_a + lam_j (y_a - v_j) <= |q_a - v_j|:
    the dual of the grid program, dense, by the dual simplex."""
    atoms = _atoms(q, n, s)
    A, Gn = len(atoms), len(G)
    rows, b = [], []
    for a, (qa, ya, _) in enumerate(atoms):
        for j, v in enumerate(G):
            row = np.zeros(A + Gn)
            row[a] = 1.0
            row[A + j] = ya - v
            rows.append(row)
            b.append(abs(qa - v))
    c = -np.array([mass for _, _, mass in atoms] + [0.0] * Gn)
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(b), bounds=(None, None), method="highs-ds")
    assert res.status == 0
    return -res.fun


def primal_reference(q, n, s, G):
    """The grid program with the plan x[a, j], dense (levels first, then atoms)."""
    atoms = _atoms(q, n, s)
    A, Gn = len(atoms), len(G)
    idx = lambda a, j: j * A + a  # noqa: E731
    cost = np.zeros(A * Gn)
    Aeq, beq = [], []
    for a, (qa, ya, mass) in enumerate(atoms):
        row = np.zeros(A * Gn)
        for j, v in enumerate(G):
            cost[idx(a, j)] = abs(qa - v)
            row[idx(a, j)] = 1.0
        Aeq.append(row)
        beq.append(mass)
    for j, v in enumerate(G):
        row = np.zeros(A * Gn)
        for a, (_, ya, _) in enumerate(atoms):
            row[idx(a, j)] = ya - v
        Aeq.append(row)
        beq.append(0.0)
    res = linprog(cost, A_eq=np.array(Aeq), b_eq=np.array(beq), bounds=(0, None), method="highs-ds")
    assert res.status == 0
    x = np.maximum(res.x, 0.0)
    return res.fun, x.reshape(Gn, A).T, atoms


def grid_of(q, K):
    return np.unique(np.concatenate([np.arange(K + 1) / K, q, [0.0, 1.0]]))


def ece(q, n, s):
    return float(np.sum(np.abs(q * n - s)) / n.sum())


# ---------------------------------------------------------------------------------------- LDTC


@settings(max_examples=40, derandomize=True)
@given(small_tables(), st.sampled_from([3, 10, 40]))
def test_ldtc_is_the_dual_programs_value(table, K):
    q, n, s = table
    r = fc_ldtc(q, n, s, grid=K)
    assert r.value == pytest.approx(dual_reference(q, n, s, grid_of(q, K)), abs=TOL)
    assert r.method == "lp" and r.moved == 0.0
    assert r.grid_spacing == pytest.approx(np.diff(grid_of(q, K)).max())
    assert r.lower <= r.value <= r.upper and r.error_bound == pytest.approx(r.grid_spacing / 2)


def fc_ldtc(q, n, s, **kw):
    return dc.ldtc(_stats(q, n, s), **kw)


@settings(max_examples=30, derandomize=True)
@given(small_tables(max_buckets=4), st.sampled_from([1, 2, 4, 7]))
def test_grid_bound_and_the_splitting_argument(table, K):
    """LP_G - h/2 <= LP_fine: the fine plan, each level split into its coarse neighbours with
    shares (g' - v)/h and (v - g)/h (of each outcome's mass in proportion), is feasible for the
    coarse grid and costs at most h/2 more."""
    q, n, s = table
    coarse = grid_of(q, K)
    fine = grid_of(q, 120)
    f_val, x, atoms = primal_reference(q, n, s, fine)
    h = np.diff(coarse).max()
    assert fc_ldtc(q, n, s, grid=K).value - h / 2 <= f_val + TOL
    # the argument, step by step
    y = np.array([a[1] for a in atoms])
    qa = np.array([a[0] for a in atoms])
    mass = np.array([a[2] for a in atoms])
    xc = np.zeros((len(atoms), coarse.shape[0]))
    for j, v in enumerate(fine):
        col = x[:, j]
        M = col.sum()
        if M <= 0:
            continue
        k = np.searchsorted(coarse, v)
        if k < coarse.shape[0] and coarse[k] == v:
            xc[:, k] += col
            continue
        g, g2 = coarse[k - 1], coarse[k]
        lam = (v - g) / (g2 - g)
        vbar = (col * y).sum() / M  # = v up to the solver's tolerance
        up1 = g2 * lam / vbar if vbar > 0 else 0.0  # share of the y = 1 mass sent up
        up0 = (1 - g2) * lam / (1 - vbar) if vbar < 1 else 0.0
        assert -1e-9 <= up1 <= 1 + 1e-9 and -1e-9 <= up0 <= 1 + 1e-9
        up = np.where(y == 1, up1, up0)
        xc[:, k] += col * up
        xc[:, k - 1] += col * (1 - up)
        # the mass-weighted move: 2 (v - g)(g' - v) / h <= h / 2 per unit of the level's mass
        move = (col * (up * (g2 - v) + (1 - up) * (v - g))).sum()
        assert move <= M * (g2 - g) / 2 + 1e-9
    assert np.allclose(xc.sum(axis=1), mass, atol=1e-9)
    cal = (xc * (y[:, None] - coarse[None, :])).sum(axis=0)
    assert np.allclose(cal, 0.0, atol=1e-7)
    cost = (xc * np.abs(qa[:, None] - coarse[None, :])).sum()
    assert cost <= f_val + h / 2 + TOL
    assert fc_ldtc(q, n, s, grid=K).value <= cost + TOL


def test_the_grid_matters():
    """With only the predictions, 0 and 1 as levels, the program overshoots; the finer grid's
    value lies in the coarse bracket."""
    q, n, s = np.array([0.45, 0.95]), np.array([3.0, 2.0]), np.array([3.0, 1.0])
    coarse = fc_ldtc(q, n, s, grid=1)
    fine = fc_ldtc(q, n, s, grid=1000)
    assert coarse.value > fine.value + 0.05
    assert coarse.lower <= fine.value <= coarse.upper
    assert fine.value == pytest.approx(dual_reference(q, n, s, grid_of(q, 1000)), abs=TOL)


@settings(max_examples=40, derandomize=True)
@given(small_tables())
def test_relations_with_smce_intce_and_ece(table):
    """smCE <= 2 LDTC and LDTC <= 2 smCE (the paper's constants), LDTC <= intCE <= ECE,
    smCE <= intCE, intCE <= LDTC + 2 sqrt(2 LDTC), intCE <= intCE_shifted."""
    q, n, s = table
    st_ = _stats(q, n, s)
    r = dc.ldtc(st_)
    sm = fc.smce(st_)
    ic = dc.intce(st_)
    ics = dc.intce(st_, method="shifted")
    assert r.grid_spacing <= 1e-3 + 1e-12
    assert sm <= 2 * r.upper + TOL
    assert r.lower <= 2 * sm + TOL
    assert r.lower <= ic + TOL
    assert sm <= ic + 1e-12
    assert ic <= ece(q, n, s) + 1e-12
    assert r.lower <= ece(q, n, s) + TOL
    assert ic <= r.upper + 2 * math.sqrt(2 * r.upper) + TOL
    assert ic <= ics + 1e-12
    assert ics <= min(r.upper * (1 + 2 / e) + e for e in dc.INTCE_WIDTHS) + TOL


@settings(max_examples=25, derandomize=True)
@given(small_tables())
def test_moving_every_bucket_to_its_frequency_is_a_coupling(table):
    """With every frequency on the grid, the program's value is at most ECE."""
    q, n, s = table
    freq = np.unique(s / n)
    assert fc_ldtc(q, n, s, grid=freq).value <= ece(q, n, s) + TOL


@settings(max_examples=25, derandomize=True)
@given(small_tables(), st.data())
def test_calibrated_table_is_at_distance_zero(table, data):
    q, n, _ = table
    s = np.round(q * n)
    q = s / n
    keep = np.unique(q, return_index=True)[1]
    q, n, s = q[keep], n[keep], s[keep]
    r = fc_ldtc(q, n, s)
    assert r.value <= TOL and r.lower == 0.0
    assert dc.intce(_stats(q, n, s)) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=25, derandomize=True)
@given(small_tables())
def test_symmetry_under_relabelling(table):
    q, n, s = table
    r = fc_ldtc(q, n, s)
    rf = fc_ldtc(1 - q[::-1], n[::-1], (n - s)[::-1])
    assert rf.value == pytest.approx(r.value, abs=TOL)
    assert dc.intce(_stats(1 - q[::-1], n[::-1], (n - s)[::-1])) == pytest.approx(dc.intce(_stats(q, n, s)), abs=1e-12)


@settings(max_examples=20, derandomize=True)
@given(small_tables(max_buckets=5), st.sampled_from([2, 3, 5]))
def test_moving_predictions_moves_ldtc_by_at_most_the_distance_moved(table, k):
    """|LDTC(table) - LDTC(rebinned)| <= the mean distance moved (each LP within h/2)."""
    q, n, s = table
    qb, nb, sb, moved = dc._rebin(q, n, s, k)
    assert moved <= 1 / k
    assert moved == pytest.approx(np.dot(n, np.abs(q - _bin_means(q, n, k))) / n.sum(), abs=1e-12)
    K = 400
    a = fc_ldtc(q, n, s, grid=K).value
    b = fc_ldtc(qb, nb, sb, grid=K).value
    h = 1 / K
    assert abs(a - b) <= moved + h / 2 + TOL


def _bin_means(q, n, k):
    """Each prediction's bin mean, bins [j/k, (j+1)/k), the last closed, by loops."""
    out = np.empty_like(q)
    for i, qi in enumerate(q):
        j = min(int(qi * k), k - 1)
        members = [t for t in range(q.shape[0]) if min(int(q[t] * k), k - 1) == j]
        out[i] = sum(q[t] * n[t] for t in members) / sum(n[t] for t in members)
    return out


def test_large_table_is_rebinned_and_says_so():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=600)
    y = (rng.uniform(size=600) < np.clip(p + 0.15 * np.sin(8 * p), 0, 1)).astype(int)
    r = dc.ldtc(y, p)
    assert r.method == f"lp on {dc.LDTC_REBIN_BUCKETS} bins" and r.buckets <= dc.LDTC_REBIN_BUCKETS
    assert 0 < r.moved <= 1 / dc.LDTC_REBIN_BUCKETS
    assert r.variables <= dc.LDTC_MAX_VARIABLES
    assert r.error_bound == pytest.approx(r.grid_spacing / 2 + r.moved)
    sm = fc.smce(y, p)
    assert sm <= 2 * r.upper + TOL and r.lower <= 2 * sm + TOL
    # the program is the rebinned table's: its value and its moved distance, by hand
    q, n, s = (np.asarray(a, float) for a in fc.bucket_stats(y, p).table())
    assert r.moved == pytest.approx(np.dot(n, np.abs(q - _bin_means(q, n, 100))) / n.sum(), abs=1e-12)
    qb, nb, sb, _ = dc._rebin(q, n, s, 100)
    assert r.value == pytest.approx(fc_ldtc(qb, nb, sb).value, abs=TOL)
    # an explicit grid is never rebinned for: too large for 600 buckets, it raises
    with pytest.raises(ValidationError):
        dc.ldtc(y, p, grid=10)


def test_default_grid_fits_the_limit():
    q = np.linspace(0.01, 0.99, 200)
    n = np.full(200, 3.0)
    s = np.round(q * 2)
    r = fc_ldtc(q, n, s)
    assert r.method == "lp" and r.variables <= dc.LDTC_MAX_VARIABLES
    K = dc.LDTC_MAX_VARIABLES // (2 * 200) - 201
    assert r.grid_spacing <= 1 / K + 1e-12


# --------------------------------------------------------------------------------------- edges


def test_edges():
    # one round
    assert dc.ldtc([1], [0.5], grid=10).value == pytest.approx(0.5, abs=TOL)
    assert dc.intce([1], [0.5]) == 0.5
    # predictions at 0, 1/2, 1, all calibrated: distance 0
    r = dc.ldtc([0, 1, 0, 1], [0.0, 1.0, 0.5, 0.5])
    assert r.value <= TOL
    assert dc.intce([0, 1, 0, 1], [0.0, 1.0, 0.5, 0.5]) == 0.0
    # always wrong at the ends: ECE 1, but both predictions may meet at 1/2, calibrated there;
    # intCE pays the width instead
    assert dc.ldtc([1, 0], [0.0, 1.0], grid=10).value == pytest.approx(0.5, abs=TOL)
    assert dc.intce([1, 0], [0.0, 1.0]) == 1.0
    assert fc.smce([1, 0], [0.0, 1.0]) == pytest.approx(0.5)
    # one bucket: LDTC = |q - qhat| (Jensen), intCE = ECE
    r = dc.ldtc([1, 1, 1, 0], [0.25] * 4, grid=20)
    assert r.value == pytest.approx(0.5, abs=TOL)
    assert dc.intce([1, 1, 1, 0], [0.25] * 4) == 0.5


def test_weights_equal_repeated_rounds():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.2, 0.2, 0.7, 0.9, 0.9])
    w = np.array([1, 2, 3, 1, 2])
    yr, pr = np.repeat(y, w), np.repeat(p, w)
    assert dc.ldtc(y, p, sample_weight=w.astype(float), grid=50).value == pytest.approx(
        dc.ldtc(yr, pr, grid=50).value, abs=TOL
    )
    assert dc.intce(y, p, sample_weight=w.astype(float)) == pytest.approx(dc.intce(yr, pr), abs=1e-12)
    assert dc.intce(y, p, sample_weight=w.astype(float), method="shifted") == pytest.approx(
        dc.intce(yr, pr, method="shifted"), abs=1e-12
    )


def test_predict_proba_columns():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.2, 0.2, 0.7, 0.9, 0.9])
    P = np.column_stack([1 - p, p])
    assert dc.ldtc(y, P, grid=20).value == pytest.approx(dc.ldtc(y, p, grid=20).value, abs=TOL)
    assert dc.intce(y, P) == dc.intce(y, p)


# --------------------------------------------------------------------------------------- intCE


def intce_reference(q, n, s):
    """Every grouping of the sorted buckets into consecutive groups (2^(m-1)), in Fractions."""
    q = [Fraction(v) for v in q]
    n = [Fraction(int(v)) for v in n]
    s = [Fraction(int(v)) for v in s]
    m, T = len(q), sum(n)
    best = None
    for cuts in itertools.product([False, True], repeat=m - 1):
        total, start = Fraction(0), 0
        for i in range(m):
            if i == m - 1 or cuts[i]:
                grp = range(start, i + 1)
                total += abs(sum(q[t] * n[t] - s[t] for t in grp)) + (q[i] - q[start]) * sum(n[t] for t in grp)
                start = i + 1
        best = total if best is None else min(best, total)
    return best / T


@settings(max_examples=60, derandomize=True)
@given(small_tables(max_buckets=7))
def test_intce_is_the_least_over_groupings(table):
    q, n, s = table
    assert dc.intce(_stats(q, n, s)) == pytest.approx(float(intce_reference(q, n, s)), abs=1e-12)


def binned_error_relplot_convention(q, n, s, eps, u):
    """(1/T) sum_k |sum over buckets with floor((q + u) / eps) = k of (q n - s)|, by loops."""
    bins = {}
    for qi, ni, si in zip(q, n, s):
        k = int((qi + u) / eps)
        bins[k] = bins.get(k, 0.0) + qi * ni - si
    return sum(abs(v) for v in bins.values()) / n.sum()


def shifted_reference(q, n, s):
    """min over relplot's widths of eps + the integral over u in [0, eps) of the binned error,
    which is constant between the shifts at which a prediction crosses an edge: evaluated at
    the midpoints."""
    best = math.inf
    for eps in dc.INTCE_WIDTHS:
        cuts = sorted({0.0, eps} | {eps - (qi - math.floor(qi / eps) * eps) for qi in q} - {0.0})
        cuts = [c for c in cuts if 0 <= c <= eps]
        if cuts[0] != 0.0:
            cuts = [0.0] + cuts
        e = sum(
            (b - a) * binned_error_relplot_convention(q, n, s, eps, (a + b) / 2)
            for a, b in zip(cuts, cuts[1:])
            if b > a
        )
        best = min(best, e / eps + eps)
    return best


@settings(max_examples=40, derandomize=True)
@given(small_tables(max_buckets=6))
def test_intce_shifted_is_the_expectation_over_the_shift(table):
    q, n, s = table
    assert dc.intce(_stats(q, n, s), method="shifted") == pytest.approx(shifted_reference(q, n, s), abs=1e-9)


def test_reference_uses_relplots_bins():
    relplot = pytest.importorskip("relplot.metrics")
    rng = np.random.default_rng(0)
    f = rng.uniform(size=30)
    y = (rng.uniform(size=30) < f).astype(float)
    for eps, u in [(0.25, 0.1), (0.125, 0.05), (1.0, 0.6)]:
        B = relplot.binning(f, y, bin_size=eps, shift=u)
        ref = binned_error_relplot_convention(f, np.ones(30), y, eps, u)
        assert abs(B).sum() / 30 == pytest.approx(ref, abs=1e-12)


def test_intce_shifted_near_relplot():
    """relplot averages 100 random shifts: agreement within its Monte Carlo error."""
    relplot = pytest.importorskip("relplot.metrics")
    rng = np.random.default_rng(1)
    f = rng.uniform(size=400)
    y = (rng.uniform(size=400) < np.clip(1.2 * f - 0.1, 0, 1)).astype(float)
    np.random.seed(0)
    assert dc.intce(y.astype(int), f, method="shifted") == pytest.approx(relplot.intCE_rand(f, y), abs=0.01)


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "grid", [0, -3, 2.5, True, [0.2, 1.5], [-0.1, 0.5], [0.5, 0.2], [0.3, 0.3], [], [[0.1]], [np.nan], "fine"]
)
def test_bad_grid_names_the_argument(grid):
    with pytest.raises(ValidationError) as e:
        dc.ldtc([0, 1], [0.3, 0.6], grid=grid)
    assert e.value.argument == "grid"


def test_too_large_grid_names_the_argument_and_the_size():
    with pytest.raises(ValueError, match=r"grid: .* variables, more than LDTC_MAX_VARIABLES") as e:
        dc.ldtc([0, 1, 1], [0.3, 0.6, 0.8], grid=10**6)
    assert e.value.argument == "grid"
    assert "fastcdl.smce" in str(e.value)


def test_intce_bad_method_and_too_many_buckets(monkeypatch):
    with pytest.raises(ValidationError) as e:
        dc.intce([0, 1], [0.3, 0.6], method="random")
    assert e.value.argument == "method"
    monkeypatch.setattr(dc, "INTCE_MAX_BUCKETS", 3)
    with pytest.raises(ValidationError) as e:
        dc.intce([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9])
    assert e.value.argument == "bins" and "method='shifted'" in str(e.value)
    assert dc.intce([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9], bins=2) >= 0


def test_bad_rounds_are_refused_by_the_table():
    with pytest.raises(ValidationError) as e:
        dc.ldtc([0, 1], [0.3, 1.6])
    assert e.value.argument == "y_prob"
    with pytest.raises(ValidationError) as e:
        dc.intce([0, 2], [0.3, 0.6])
    assert e.value.argument == "y_true"


def test_classwise_is_the_mean_over_one_vs_rest():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1, 1, 1], size=30)
    y = rng.integers(0, 3, 30)
    per_class = [dc.ldtc((y == j).astype(int), P[:, j], grid=20).value for j in range(3)]
    assert dc.ldtc(y, P, multiclass="classwise", grid=20).mean == pytest.approx(np.mean(per_class), abs=TOL)
    per_class = [dc.intce((y == j).astype(int), P[:, j]) for j in range(3)]
    assert dc.intce(y, P, multiclass="classwise").mean == pytest.approx(np.mean(per_class), abs=1e-12)
