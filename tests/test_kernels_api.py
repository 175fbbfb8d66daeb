"""fastcdl.kernels: every public kernel equals the Python API bit for bit, called from Python
with arrays and from a user's own njit module (tests/user_kernels.py), including in a fresh
process with an empty numba cache (compiled from nothing, then loaded from the cache)."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import given

import fastcdl as fc
import user_kernels as U
from conftest import float_tables, tables
from fastcdl import kernels as K
from fastcdl import sample as fs
from fastcdl._compiled import envelope as _env
from fastcdl._compiled.rng import seed_states
from fastcdl._compiled._jit import readonly
from fastcdl._compiled.sort import argsort_stable, merge_distinct, pairwise_sum, sort_pairs, sort_pairs_small
from fastcdl._compiled.tablecdl import table_cdl
from fastcdl.exact import vcdl_kink_of
from fastcdl.online import minimax, simulate

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
MUS = np.array([0.0, 0.5, 1.0, 0.25, 0.125, 0.3, 0.7, 0.9999, 1e-9])


def _same(a, b):
    """Equal as floats, bit for bit (NaN equal to NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _reference(q, n, s, mus=MUS):
    """The Python API's numbers for the table (q, n, s), in the order of U.every_metric."""
    stats = fc.BucketStats.from_table(q, n, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a CertificateWarning changes no value
        report = fc.cdl_report(stats)
    kinks = report.kinks if report.kinks.shape[0] == 2 else np.array([0.5, 0.5])
    scalars = np.array(
        [
            fc.cdl(stats),
            fc.vcdl(stats),
            fc.ece(stats),
            fc.k2(stats),
            fc.ucal(stats),
            fs.cdl_monotone(stats),
            fs.vcdl_monotone(stats),
            fs.cutoff_ce(stats),
            fs.atb(stats),
            fs.smce(stats),
            report.value,
            kinks[0],
            kinks[1],
        ]
    )
    tq, tn, ts = stats.table()
    f = _env.v_left(tq, tn, ts, mus)  # what decision_loss_curve reads, on the table's own arrays
    return scalars, f, fc.decision_loss_curve(stats, kinks=mus)[1]


def _python_calls(q, n, s, mus=MUS):
    """The same numbers from the kernels called from Python with arrays (the fast path)."""
    value, mu1, mu2 = K.cdl_kinks(q, n, s)
    scalars = np.array(
        [
            K.cdl_of_table(q, n, s),
            K.vcdl_of_table(q, n, s),
            K.ece_of_table(q, n, s),
            K.k2_of_table(q, n, s),
            K.ucal_of_table(q, n, s),
            K.cdl_monotone_of_table(q, n, s),
            K.vcdl_monotone_of_table(q, n, s),
            K.cutoff_ce_of_table(q, n, s),
            K.atb_of_table(q, n, s),
            K.smce_of_table(q, n, s),
            value,
            mu1,
            mu2,
        ]
    )
    return scalars, K.v_curve(q, n, s, mus), K.decision_loss_curve_of_table(q, n, s, mus)


def _check_table(q, n, s):
    order = np.argsort(q, kind="stable")  # the contract: q increasing (strategies draw any order)
    q, n, s = q[order], n[order], s[order]
    with warnings.catch_warnings():  # random tables with one-round buckets: the values are compared, not judged
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        ref = _reference(q, n, s)
        python = _python_calls(q, n, s)
    for got in (python, U.every_metric(q, n, s, MUS)):
        for a, b in zip(got, ref):
            assert _same(a, b), (a, b)


def _random_table(rng, m, kind):
    """Tables with many ties: q on a grid that frequencies hit, or random; counts int or float."""
    if kind == "grid":
        q = np.unique(rng.integers(0, 17, m)) / 16
        n = rng.integers(1, 17, q.shape[0])
    elif kind == "one-round":  # continuous scores: every bucket one round, float counts as a table has
        q = np.unique(np.concatenate([rng.random(m), rng.choice([0.0, 0.5, 1.0], 2)]))
        return q, np.ones(q.shape[0]), (rng.random(q.shape[0]) < q) * 1.0
    else:
        q = np.unique(np.concatenate([rng.random(m), rng.choice([0.0, 0.5, 1.0], 2)]))
        n = rng.integers(1, 100, q.shape[0])
    s = rng.binomial(n, np.clip(q + rng.normal(0, 0.1, q.shape[0]), 0, 1))
    if kind == "float":
        w = rng.random(q.shape[0]) * 3 + 0.01
        n, s = n * w, s * w
    return q, n, s


# -- metrics ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["grid", "random", "float"])
def test_metrics_equal_the_python_api_on_random_tables(kind):
    rng = np.random.default_rng(7)
    for m in (1, 2, 3, 5, 9, 17, 40, 130, 300):
        for _ in range(4):
            _check_table(*_random_table(rng, m, kind))


@given(tables(max_buckets=12))
def test_metrics_equal_the_python_api_on_tables_with_ties(t):
    _check_table(*t)


@given(float_tables(weighted=True))
def test_metrics_equal_the_python_api_with_float_counts(t):
    _check_table(*t)


def test_large_tables_pairwise_totals_and_unsorted_frequencies():
    """Beyond numpy's 128-element summation blocks, and frequencies in random order (the
    sort's merge path), with float counts whose total rounds."""
    rng = np.random.default_rng(3)
    for m in (1000, 20000):
        q = np.sort(rng.random(m))
        n = rng.random(m) * 1e3 + 1e-3
        s = n * rng.random(m)
        ref = fc.BucketStats.from_table(q, n, s)
        assert _same(K.cdl_of_table(q, n, s), fc.cdl(ref)) and _same(K.vcdl_of_table(q, n, s), fc.vcdl(ref))
        assert _same(K.ucal_of_table(q, n, s), fc.ucal(ref)) and _same(K.smce_of_table(q, n, s), fs.smce(ref))


def test_cdl_and_vcdl_equal_the_curve_of_cdl_report():
    """fastcdl.cdl and fastcdl.vcdl call the fused kernel (fastcdl._compiled.tablecdl); the
    sweep over the whole curve (fastcdl._compiled.envelope.cdl_curve, which cdl_report reads) is
    computed independently and must give the same floats, on tables with ties, grid
    frequencies, float counts, one-round buckets (numpy's sort below 2^21 buckets) and the sizes
    where the kernel's sort changes method."""
    rng = np.random.default_rng(11)
    for m in (1, 2, 40, 511, 512, 3000, 100_000):
        for kind in ("grid", "random", "float", "one-round"):
            if kind == "grid" and m > 3000:
                continue
            q, n, s = _random_table(rng, m, kind)
            table = fc.BucketStats.from_table(q, n, s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = fc.cdl_report(table)
                got = fc.cdl(table), fc.vcdl(table), vcdl_kink_of(table)
            assert _same(got[0], report.value) and _same(got[1], report.vcdl), (m, kind, got, report)
            assert _same(got[2], report.vcdl_kink), (m, kind, got, report)  # the first breakpoint at the max


def test_ucal_from_numpy_equals_the_kernel():
    """fastcdl.ucal's numpy front (small tables, one-round tables) gives the kernel's float bit
    for bit: the same ramps, sorts, breakpoints (with -0.0 read as 0.0), T and count of ones."""
    rng = np.random.default_rng(12)
    for m in (1, 2, 40, 511, 512, 3000, 100_000):
        for kind in ("grid", "random", "float", "one-round"):
            if kind == "grid" and m > 3000:
                continue
            q, n, s = (a.astype(np.float64) for a in _random_table(rng, m, kind))
            if q[0] == 0.0:
                q[0] = -0.0
            assert _same(_env.ucal_from_table(q, n, s), _env.ucal_of_table(q, n, s)), (m, kind)


def test_the_fused_kernels_vcdl_kink_skips_empty_buckets_as_the_curve_does():
    """Empty buckets (a binned table's empty bins) are no breakpoints of the curve: the fused
    kernel's VCDL kink is cdl_report's on the table without them, and NaN without rounds."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        m = int(rng.integers(2, 22))
        q = np.sort(rng.choice(np.linspace(0, 1, 21), m, replace=False))
        n = rng.integers(0, 4, m).astype(float)
        s = np.floor(n * rng.random(m))
        keep = n > 0
        if not keep.any():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = fc.cdl_report(fc.BucketStats.from_table(q[keep], n[keep], s[keep])).vcdl_kink
        assert _same(vcdl_kink_of(fc.BucketStats.from_table(q, n, s)), want), (q, n, s)
    assert np.isnan(table_cdl(q, np.zeros(m), np.zeros(m), True)[5])


def test_empty_buckets_are_skipped_and_an_empty_table_is_nan():
    q = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    n = np.array([0, 3, 0, 5, 0])
    s = np.array([0, 3, 0, 1, 0])
    keep = n > 0
    for got, want in zip(_python_calls(q, n, s), _python_calls(q[keep], n[keep], s[keep])):
        assert _same(got, want)
    _check_table(q[keep], n[keep], s[keep])
    empty = np.zeros(3, dtype=np.int64)
    scalars, f, cfdl = _python_calls(q[:3], empty, empty)
    assert np.isnan(scalars).all() and np.isnan(f).all() and np.isnan(cfdl).all()


def test_argument_types_from_python():
    """int32 or float counts, read-only arrays, strided views: the same values."""
    q, n, s = _random_table(np.random.default_rng(1), 30, "grid")
    want = K.cdl_of_table(q, n, s)
    ro = [a.copy() for a in (q, n, s)]
    for a in ro:
        a.setflags(write=False)
    wide = [np.repeat(a, 2)[::2] for a in (q, n, s)]
    for args in ((q, n.astype(np.int32), s.astype(np.int32)), (q, n * 1.0, s * 1.0), ro, wide):
        assert K.cdl_of_table(*args) == want


def test_the_docstring_example_and_the_papers_example():
    q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    assert (K.cdl_of_table(q, n, s), K.ece_of_table(q, n, s), K.vcdl_of_table(q, n, s)) == (0.25, 0.25, 1 / 6)
    q, n, s = np.array([0.25, 0.75]), np.array([1, 1]), np.array([0, 1])
    assert K.ucal_of_table(q, n, s) == 0.0 and K.cdl_of_table(q, n, s) == 0.25  # docs/exact-cdl.md, Exact UCal


# -- the sorts behind them ----------------------------------------------------------------


def test_sorts_and_sums_equal_numpy():
    rng = np.random.default_rng(5)
    for trial in range(300):
        size = int(rng.integers(0, 400)) if trial % 10 else int(rng.integers(400, 5000))
        x = rng.integers(0, max(1, size // 4), size) / 7.0 if trial % 2 else rng.random(size)
        if trial % 5 == 0:
            x = np.sort(x)[::-1].copy()
        elif trial % 7 == 0:  # nearly sorted: the insertion path
            x = np.sort(x) + rng.normal(0, 1e-3, size)
        if trial % 11 == 0:  # negative values, infinities and both zeros (the radix sort's key map)
            x = np.concatenate([x - 0.5, [0.0, -0.0, np.inf, -np.inf, -0.0]])[rng.permutation(size + 5)]
        x = readonly(x)  # as the kernels that call them type it (their read_only arguments)
        keys, order = sort_pairs(x)
        want = np.argsort(x, kind="stable")
        assert np.array_equal(order, want) and np.array_equal(keys, x[want])
        assert np.array_equal(argsort_stable(x), want)
        keys, order = sort_pairs_small(x)  # the merge sort, also beyond the radix sort's threshold
        assert np.array_equal(order, want) and np.array_equal(keys, x[want])
        a = np.sort(rng.integers(0, 20, int(rng.integers(0, 30))) / 19.0)
        b = np.sort(rng.integers(0, 20, int(rng.integers(0, 30))) / 19.0)
        if a.shape[0] and trial % 3 == 0:
            a[0] = -0.0
        u, got = np.unique(np.concatenate([a, b]) + 0.0), merge_distinct(readonly(a), readonly(b))
        assert _same(got, u)
        w = rng.random(size) * 10.0 ** rng.uniform(-3, 3, size)
        assert pairwise_sum(w) == w.sum()
        c = rng.integers(0, 2**40, size)
        assert pairwise_sum(c) == c.astype(np.float64).sum()


# -- incremental tables -------------------------------------------------------------------


def _rounds(rng, T, values=None):
    p = rng.integers(0, 25, T) / 24 if values is None else rng.choice(values, T)
    y = (rng.random(T) < p).astype(np.int64)
    return p, y


def test_stream_table_equals_bucket_stats_and_reads_cdl_in_the_loop():
    rng = np.random.default_rng(2)
    p, y = _rounds(rng, 20000)
    p[:5] = -0.0  # the prediction 0
    q, n, s, reads, eces = U.stream_cdl(p, y, 1000)
    st = fc.bucket_stats(y, np.abs(p))
    assert np.array_equal(q, st.values) and not np.signbit(q).any()
    assert np.array_equal(n, st.counts) and np.array_equal(s, st.positives)
    for r in range(20):
        part = fc.bucket_stats(y[: (r + 1) * 1000], np.abs(p[: (r + 1) * 1000]))
        assert reads[r] == fc.cdl(part) and eces[r] == fc.ece(part)


def test_stream_tables_weighted_and_merged():
    rng = np.random.default_rng(4)
    p, y = _rounds(rng, 3000, values=rng.random(300))
    w = rng.random(3000) * 2
    w[::7] = 0.0  # a round of weight 0 makes no bucket
    q, n, s = U.stream_weighted(p, y, w)
    st = fc.bucket_stats(y, p, sample_weight=w)
    assert _same(q, st.values) and _same(n, st.counts) and _same(s, st.positives)
    for cut in (0, 1, 1500, 3000):
        q, n, s = U.stream_merged(p, y, cut)
        st = (
            fc.bucket_stats(y[:cut], p[:cut]) + fc.bucket_stats(y[cut:], p[cut:])
            if 0 < cut < 3000
            else fc.bucket_stats(y, p)
        )
        assert np.array_equal(q, st.values) and np.array_equal(n, st.counts) and np.array_equal(s, st.positives)


def test_binned_tables_equal_bucket_stats():
    rng = np.random.default_rng(6)
    p = np.concatenate([rng.random(4000), np.arange(16) / 15, [0.0, 1.0]])  # points on the edges
    y = (rng.random(p.shape[0]) < p).astype(np.int64)
    q, n, s = U.binned_stream(p, y, 15, 2000)
    st = fc.bucket_stats(y, p, bins=15)
    assert np.array_equal(n, st.counts) and np.array_equal(s, st.positives)
    halves = fc.bucket_stats(y[:2000], p[:2000], bins=15) + fc.bucket_stats(y[2000:], p[2000:], bins=15)
    assert _same(q, halves.values)  # merged as BucketStats merges: the same sums of p
    q, n, s = U.binned_stream(p, y, 15, p.shape[0])
    assert _same(q, st.values) and K.cdl_of_table(q, n, s) == fc.cdl(st)
    grid = np.concatenate([np.arange(0, 1.0001, 0.1), np.arange(11) / 10, rng.random(100)])  # a few ulps off edges
    gy = (rng.random(grid.shape[0]) < 0.5).astype(np.int64)
    q, n, s = U.binned_stream(grid, gy, 10, grid.shape[0])
    st = fc.bucket_stats(gy, grid, bins=10)
    assert _same(q, st.values) and np.array_equal(n, st.counts) and np.array_equal(s, st.positives)
    edges = np.array([0.0, 0.1, 0.35, 0.5, 0.9, 1.0])
    w = rng.random(p.shape[0])
    q, n, s = U.binned_weighted(p, y, w, edges)
    st = fc.bucket_stats(y, p, bins=edges, sample_weight=w)
    assert _same(q, st.values) and _same(n, st.counts) and _same(s, st.positives)


def test_a_grown_table_is_stale():
    tab = K.table_new(1)
    new = K.table_add(tab, 0.5, 1)
    assert new is not None and K.table_view(new)[1].tolist() == [1]
    grown = K.table_add(new, 0.25, 0)
    assert K.table_view(grown)[0].tolist() == [0.25, 0.5]
    with pytest.raises(ValueError, match="stale"):
        K.table_add(new, 0.75, 1)


# -- online building blocks -----------------------------------------------------------------


def test_algorithm1_from_the_blocks_equals_simulate():
    for T, m, seed, p in ((3000, 12, 4, 0.3), (5000, 30, 9, 0.5)):
        res = simulate("cdl", "bernoulli", horizon=T, seed=seed, forecaster_params={"m": m}, adversary_params={"p": p})
        rng, arng = seed_states(seed)
        n, s, capped = U.algorithm1(T, m, res.params["forecaster"]["delta"], rng, arng, p)
        keep = n > 0
        assert np.array_equal(n[keep], res.stats.counts) and np.array_equal(s[keep], res.stats.positives)
        assert capped == 0


def test_oracle_state_and_weights():
    from fastcdl.online.forecasters import cdl

    st = K.msmwc_init(7, 1000)
    ref, _ = cdl.init(1000, {"m": 7, "oracle": "sparse", "delta": 1e-3})
    for field in ("G", "Q", "eta", "logpi", "off", "S", "terms"):
        assert np.array_equal(getattr(st, field), getattr(ref, field)), field
    rng = np.random.default_rng(0)
    b = rng.integers(0, 20, 500)
    g = rng.random(500) - 0.4
    sparse, dense = U.oracle_weights(20, 5000, b, g)
    assert np.all(np.sign(sparse) == np.sign(dense))
    assert np.allclose(sparse, dense, rtol=1e-9, atol=0)


def test_step1_and_minimax():
    lo, pts, probs, bkt = U.step1_explicit(np.array([-0.3, -0.1, 0.2, 0.5]), 0.01)
    assert lo == 1 and bkt.tolist() == [1, 2] and pts[0] == 0.5 and pts[1] == 0.51
    assert probs[0] == pytest.approx(2 / 3) and probs[0] + probs[1] == 1.0
    lo, pts, probs, bkt = U.step1_explicit(np.array([0.1, 0.2]), 0.01)
    assert lo == -1 and pts.tolist() == [0.0, 0.0] and probs.tolist() == [1.0, 0.0]
    A = np.array([[0.0, 1.0], [1.0, 0.0], [0.4, 0.45]])
    value, lam, idx, prob = U.solve_game(A)
    sol = minimax(A)
    assert value == sol.value and lam == sol.lam
    assert tuple(idx[: len(sol.points)]) == sol.points and tuple(prob[: len(sol.probs)]) == sol.probs


@pytest.mark.parametrize("name,loop", [("kt", U.run_kt), ("foster", U.run_foster)])
def test_builtin_forecasters_in_a_users_loop_equal_simulate(name, loop):
    T, seed = 3000, 8
    state, table, out, hist, rng = K.forecaster_setup(name, T, seed=seed, m=11)
    hist = loop(T, state, table, out, hist, rng, seed_states(seed)[1], 0.4)
    res = simulate(name, "bernoulli", horizon=T, seed=seed, forecaster_params={"m": 11}, adversary_params={"p": 0.4})
    keep = table.n > 0
    assert hist.t == T and np.array_equal(table.n[keep], res.stats.counts)
    assert np.array_equal(table.s[keep], res.stats.positives)


# -- the module itself ----------------------------------------------------------------------


def test_public_names_are_documented_and_compiled_lazily():
    doc = (ROOT / "docs" / "kernels.md").read_text()
    assert isinstance(K.KERNELS_VERSION, int) and f"KERNELS_VERSION = {K.KERNELS_VERSION}" in doc
    for name in K.__all__:
        obj = getattr(K, name)
        assert f"`{name}" in doc or f"{name}(" in doc, name
        if isinstance(obj, numba.core.registry.CPUDispatcher):
            assert obj.py_func.__doc__, name


def test_njit_keeps_the_users_cache_in_step_with_fastcdls_kernels(tmp_path, monkeypatch):
    """K.njit stamps the user's cache folder with fastcdl's kernel hash and empties it when the
    hash differs (a plain njit(cache=True) would keep machine code built on old kernels)."""
    import importlib

    from fastcdl._compiled import _jit

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("FASTCDL_CACHE", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "mine.py").write_text(
        "from fastcdl import kernels as K\n\n\n@K.njit\ndef f(q, n, s):\n    return K.ece_of_table(q, n, s)\n"
    )
    import mine

    folder = Path(mine.f._cache._cache_path)
    stamp = folder / _jit.STAMP
    assert stamp.read_text().strip() == _jit.sources_hash()
    (folder / "mine.f-5.py311.nbi").write_text("an entry built against other kernels")
    stamp.write_text("another hash\n")
    _jit._checked.discard(str(folder))
    importlib.reload(mine)  # decorating again checks the stamp
    assert not (folder / "mine.f-5.py311.nbi").exists()
    assert stamp.read_text().strip() == _jit.sources_hash()
    assert mine.f(np.array([0.5]), np.array([2]), np.array([2])) == 0.5


def test_import_fastcdl_does_not_import_the_kernels_module():
    code = (
        "import sys, fastcdl\n"
        "assert 'fastcdl.kernels' not in sys.modules\n"
        "import fastcdl.kernels as K\n"
        "assert K.cdl_of_table.signatures == [] and K.table_add.signatures == []\n"
    )  # nothing compiled at import
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


# -- the user's module in a fresh process, empty cache ---------------------------------------

SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, {here!r})
import user_kernels as U
from fastcdl._compiled.rng import seed_states
rng = np.random.default_rng(11)
p = rng.integers(0, 33, 6000) / 32
y = (rng.random(6000) < p).astype(np.int64)
q, n, s, reads, eces = U.stream_cdl(p, y, 1500)
scalars, f, cfdl = U.every_metric(q, n, s, np.array({mus}))
r, a = seed_states(4)
an, as_, capped = U.algorithm1(2000, 10, 1.0 / 2000, r, a, 0.3)
print(json.dumps({{"q": q.tolist(), "n": n.tolist(), "s": s.tolist(), "reads": [x.hex() for x in reads],
                  "scalars": [x.hex() for x in scalars], "f": [x.hex() for x in f],
                  "cfdl": [x.hex() for x in cfdl], "alg1": [an.tolist(), as_.tolist()]}}))
"""


def test_user_module_compiles_from_an_empty_cache_and_loads_from_it(tmp_path):
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "FASTCDL_CACHE": "1"}
    code = SCRIPT.format(here=str(HERE), mus=MUS.tolist())
    outs = []
    for _ in range(2):  # first: everything compiles; second: user's and fastcdl's kernels load
        r = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200
        )
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append(json.loads(r.stdout))
        if not outs[1:]:
            assert any(cache.rglob("user_kernels.every_metric-*.nbi")) and any(cache.rglob("tablecdl.table_cdl-*.nbi"))
    assert outs[0] == outs[1]
    out = outs[0]
    q, n, s = np.array(out["q"]), np.array(out["n"]), np.array(out["s"])
    rng = np.random.default_rng(11)
    p = rng.integers(0, 33, 6000) / 32
    y = (rng.random(6000) < p).astype(np.int64)
    st = fc.bucket_stats(y, p)
    assert np.array_equal(q, st.values) and np.array_equal(n, st.counts) and np.array_equal(s, st.positives)
    assert [float.fromhex(x) for x in out["reads"]] == [
        fc.cdl(fc.bucket_stats(y[:k], p[:k])) for k in (1500, 3000, 4500, 6000)
    ]
    ref = _reference(q, n, s)
    got = [np.array([float.fromhex(x) for x in out[k]]) for k in ("scalars", "f", "cfdl")]
    for a, b in zip(got, ref):
        assert _same(a, b)
    res = simulate("cdl", "bernoulli", horizon=2000, seed=4, forecaster_params={"m": 10}, adversary_params={"p": 0.3})
    an = np.array(out["alg1"][0])
    assert np.array_equal(an[an > 0], res.stats.counts)
