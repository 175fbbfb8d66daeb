"""Equal-mass bins (strategy="quantile"), bins="auto", and binning by arbitrary edges through
the grid of cells, against the slow references of tests/reference.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcdl as fc
from fastcdl._compiled import buckets as kb
from fastcdl.binning import quantile_edges_of_rounds
from reference import bin_index_ref, quantile_edges_ref, quantile_edges_sorted_ref, table_ref


def _same_table(st_, ref):
    q, n, s, ps, idx = ref
    assert st_.counts.tolist() == n.tolist()
    assert st_.positives.tolist() == s.tolist()
    assert st_.bins.tolist() == idx.tolist()
    # (a weighted sum of subnormal predictions may round to 0 in float64)
    np.testing.assert_allclose(st_.prob_sums, ps, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(st_.values, q, rtol=1e-12, atol=1e-300)


tied = st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5 + 2**-52, 0.7, 0.9, 1.0, 5e-324]), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(tied, st.integers(1, 12), st.randoms(use_true_random=False))
def test_quantile_edges_and_table_match_reference(p, m, rnd):
    p = np.array(p)
    y = np.array([rnd.random() < 0.5 for _ in p])
    edges = quantile_edges_ref(p, m)
    st_ = fc.bucket_stats(y, p, bins=m, strategy="quantile")
    assert st_.edges.tolist() == edges
    _same_table(st_, table_ref(y, p, bins=edges))
    # never more bins than asked; every interior edge is a prediction (5e-324 stands for 0)
    assert len(edges) - 1 <= m
    assert set(edges[1:-1]) <= set(p.tolist()) | {5e-324}


@settings(max_examples=60, deadline=None)
@given(tied, st.integers(1, 9), st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=60, max_size=60))
def test_weighted_quantile_edges_match_reference(p, m, w):
    p = np.array(p)
    w = np.array(w[: p.shape[0]])
    y = np.arange(p.shape[0]) % 3 == 0
    edges = quantile_edges_ref(p, m, w)
    st_ = fc.bucket_stats(y, p, bins=m, strategy="quantile", sample_weight=w)
    assert st_.edges.tolist() == edges
    _same_table(st_, table_ref(y, p, bins=edges, sample_weight=w))


def test_ties_give_fewer_bins_and_never_split_a_value():
    # a tree model: five distinct scores, one of them holding 60% of the rounds
    p = np.repeat([0.05, 0.2, 0.4, 0.6, 0.95], [100, 100, 600, 100, 100])
    y = np.zeros(p.shape[0], dtype=bool)
    st_ = fc.bucket_stats(y, p, bins=10, strategy="quantile")
    assert st_.edges.tolist() == [0.0, 0.05, 0.2, 0.4, 0.6, 1.0]
    assert st_.counts.tolist() == [100, 100, 600, 100, 100]
    assert repr(st_).startswith("BucketStats(5 bins")


def test_zeros_keep_a_bin_of_their_own():
    p = np.r_[np.zeros(50), np.linspace(0.01, 1.0, 50)]
    st_ = fc.bucket_stats(np.zeros(100, bool), p, bins=4, strategy="quantile")
    assert st_.edges[1] == 5e-324
    assert st_.counts[0] == 50 and st_.values[0] == 0.0


@pytest.mark.parametrize("kind", ["uniform", "crowded", "grid", "subnormal"])
def test_large_inputs_match_a_sort(kind):
    """The grid count and gather (no sort) against np.sort's order statistics, over several
    chunks; "crowded" puts every prediction in one cell of the grid."""
    rng = np.random.default_rng(5)
    T = 2 * kb.CHUNK + 1001
    p = {
        "uniform": rng.random(T),
        "crowded": 0.3 + rng.random(T) * 1e-6,
        "grid": np.round(rng.random(T) * 40) / 40,
        "subnormal": rng.random(T) * 1e-300,
    }[kind]
    srt = np.sort(p)
    for m in (1, 7, 215, 5000):
        ranks = (np.arange(1, m + 1) * T + m - 1) // m
        want = fc.binning.edges_from_quantiles(srt[ranks - 1])
        for n_parts in (1, 2, 3):  # the count and gather on the thread pool, in parts
            assert np.array_equal(quantile_edges_of_rounds(p, m, n_parts), want), (m, n_parts)
    y = rng.random(T) < p
    st_ = fc.bucket_stats(y, p, bins=215, strategy="quantile")
    assert st_ == fc.bucket_stats(y, p, bins=st_.edges)
    assert st_ == fc.bucket_stats(y, p, bins=215, strategy="quantile", n_jobs=1)


def _skewed(kind, T, rng):
    """Predictions for the fine counting grid of many quantile ranks: spread, crowded into one
    cell of the finest grid (2^-19 wide), tied on a few values, heaped at 0 and 1, on the grid's cell bounds."""
    if kind == "uniform":
        return rng.random(T)
    if kind == "crowded":  # every prediction in one cell of the finest grid
        return 0.3 + rng.random(T) * 2.0**-22
    if kind == "ties":  # a tree model: 41 scores, one of them holding half the rounds
        p = np.round(rng.random(T) * 40) / 40
        p[: T // 2] = 0.625
        return rng.permutation(p)
    if kind == "zeros_and_ones":
        p = rng.random(T)
        p[: T // 2] = 0.0
        p[T // 2 : T // 2 + T // 4] = 1.0
        p[-5:] = -0.0  # a valid zero too
        return rng.permutation(p)
    if kind == "cell_bounds":  # exactly on, and one ulp around, bounds of cells of 2^20-cell (and 2^19-cell) grids
        c = rng.integers(0, 2**20 + 1, T) / 2.0**20
        return np.clip(c + rng.choice([-1, 0, 0, 1], T) * np.spacing(c), 0.0, 1.0)
    if kind == "two_cells":  # mass in two far cells, a few rounds between
        p = np.where(rng.random(T) < 0.5, 0.1 + rng.random(T) * 1e-9, 0.9 - rng.random(T) * 1e-9)
        p[:7] = rng.random(7)
        return p
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["uniform", "crowded", "ties", "zeros_and_ones", "cell_bounds", "two_cells"])
def test_fine_grid_edges_match_a_sort(kind):
    """Many quantile ranks (a counting grid finer than 2^16 cells) against the order statistics
    of np.sort, written from the definition (tests/reference.py)."""
    rng = np.random.default_rng(11)
    T = 300_007
    p = _skewed(kind, T, rng)
    for m in (1, 2, 1025, 5000, 40_000, T, T + 13):
        assert fc.binning.edge_grid(T, m) == min(max(2**16, 2 ** int(np.ceil(np.log2(64 * m)))), 2**19)
        want = quantile_edges_sorted_ref(p, m)
        for n_parts in (1, 2, 5):
            assert quantile_edges_of_rounds(p, m, n_parts).tolist() == want, (kind, m, n_parts)
    y = rng.random(T) < 0.5
    st_ = fc.bucket_stats(y, p, bins=5000, strategy="quantile")
    assert st_.edges.tolist() == quantile_edges_sorted_ref(p, 5000)
    assert st_ == fc.bucket_stats(y, p, bins=st_.edges)
    assert st_.edges.shape[0] - 1 <= 5000
    if kind in ("ties", "zeros_and_ones"):  # ties give fewer bins than asked
        assert st_.edges.shape[0] - 1 < 5000
    # every interior edge is a prediction (5e-324 stands for 0)
    assert set(st_.edges[1:-1].tolist()) <= set(np.unique(p).tolist()) | {5e-324}


@pytest.mark.parametrize("kind", ["uniform", "ties", "zeros_and_ones", "cell_bounds"])
def test_grid_count_and_gather_in_parts(kind):
    """The parallel count against np.bincount of the cells floor(p G) (the last cell closed),
    and the parallel gather against the serial one, value for value, for 1 to 4 parts."""
    rng = np.random.default_rng(14)
    T = 100_003
    p = _skewed(kind, T, rng)
    G = 1 << 16
    cell = np.minimum(np.floor(np.abs(p) * G), G - 1).astype(np.int64)
    want = np.bincount(cell, minlength=G)
    cells = np.unique(rng.choice(cell, 50))
    offsets = np.r_[0, np.cumsum(want[cells])]
    serial = kb.gather_grid_cells(p, G, cells, offsets)
    for n_parts in (1, 2, 3, 4):
        hist = np.zeros(G, dtype=np.int64)
        parts = np.zeros(n_parts * G, dtype=np.int32)
        assert kb.count_grid_parallel(p, p.view(np.uint64), G, hist, parts)
        assert np.array_equal(hist, want)
        assert np.array_equal(parts.reshape(n_parts, G).sum(axis=0), want)
        assert np.array_equal(kb.gather_grid_cells_parallel(p, G, cells, offsets, parts), serial)
    for k, g in enumerate(cells):  # the serial gather holds each cell's predictions in round order
        assert np.array_equal(serial[offsets[k] : offsets[k + 1]], p[cell == g])


def test_the_sorted_reference_agrees_with_the_exact_one():
    """quantile_edges_sorted_ref (np.sort) against quantile_edges_ref (Fractions) on small cases."""
    rng = np.random.default_rng(12)
    for _ in range(40):
        T = int(rng.integers(1, 60))
        p = rng.choice([0.0, -0.0, 5e-324, 0.1, 0.5, 0.5 + 2**-52, 0.9, 1.0, rng.random()], T)
        for m in (1, 2, 3, 7, T, T + 5):
            assert quantile_edges_sorted_ref(p, m) == quantile_edges_ref(p, m)


def test_the_fine_grid_refuses_bad_predictions():
    rng = np.random.default_rng(13)
    for bad in (np.nan, 1.0 + 2**-52, -5e-324, np.inf, -np.inf, -1.0):
        p = rng.random(2**20 + 77)
        p[2**20 + 5] = bad
        for m in (3, 10**4):
            for n_parts in (1, 2):
                assert quantile_edges_of_rounds(p, m, n_parts) is None
        with pytest.raises(ValueError, match="y_prob"):
            fc.bucket_stats(np.zeros(p.shape[0], bool), p, bins=10**4, strategy="quantile")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40, unique=True),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=80),
)
def test_arbitrary_edges_through_the_grid_match_the_definition(cuts, p):
    edges = np.array([0.0, *sorted(c for c in cuts if 0.0 < c < 1.0), 1.0])
    edges = np.unique(edges)
    # points on and a few ulps around every edge
    pts = np.array(
        p
        + [
            float(x)
            for e in edges
            for x in (
                e,
                np.nextafter(e, 0),
                np.nextafter(e, 2),
                e * (1 + 2.0**-50),
                np.nextafter(e * (1 + 2.0**-50), 2),
            )
            if 0.0 <= x <= 1.0
        ]
    )
    starts, cuts = kb.cell_starts(edges), kb.cell_cuts(edges)
    got = [kb.bin_of_cells(x, edges, starts, cuts) for x in pts]
    assert got == [bin_index_ref(x, edges.tolist()) for x in pts]
    # the unweighted binning loop writes the same search out (fastcdl._compiled.buckets._bin_span_cells)
    y = np.arange(pts.shape[0]) % 2 == 0
    _same_table(fc.bucket_stats(y, pts, bins=edges, n_jobs=1), table_ref(y, pts, bins=edges))


def test_many_edges_in_one_cell():
    edges = np.r_[0.0, 0.5 + np.arange(1, 200) * 1e-9, 1.0]
    rng = np.random.default_rng(0)
    p = np.r_[0.5 + rng.random(2000) * 2.1e-7, rng.random(100)]
    y = np.zeros(p.shape[0], bool)
    _same_table(fc.bucket_stats(y, p, bins=edges), table_ref(y, p, bins=edges))


def test_auto_is_the_cube_root_of_T():
    rng = np.random.default_rng(2)
    for T, m in ((1, 1), (7, 2), (1000, 10), (1001, 10), (91125, 45)):
        p = rng.random(T)
        y = rng.random(T) < p
        assert fc.bucket_stats(y, p, bins="auto").edges.shape[0] - 1 == m
        assert fc.bucket_stats(y, p, bins="auto", strategy="quantile") == fc.bucket_stats(
            y, p, bins=m, strategy="quantile"
        )
    # weights do not change the count of rounds
    assert fc.bucket_stats(y, p, bins="auto", sample_weight=np.full(T, 0.5)).edges.shape[0] - 1 == 45


def test_rebin_of_the_exact_table_equals_binning_the_rounds():
    rng = np.random.default_rng(3)
    p = np.round(rng.random(4000), 3)
    y = rng.random(4000) < p
    exact = fc.bucket_stats(y, p)
    for bins, strategy in (
        (12, "quantile"),
        ("auto", "quantile"),
        (12, "uniform"),
        ("auto", "uniform"),
        (np.array([0.0, 0.3, 0.31, 1.0]), "uniform"),
    ):
        direct = fc.bucket_stats(y, p, bins=bins, strategy=strategy)
        again = exact.rebin(bins, strategy=strategy)
        assert np.array_equal(again.edges, direct.edges)
        assert again.counts.tolist() == direct.counts.tolist()
        assert again.positives.tolist() == direct.positives.tolist()
        np.testing.assert_allclose(again.prob_sums, direct.prob_sums, rtol=1e-12)
    # chunks: merge the exact tables, then rebin (quantile tables of chunks have other edges)
    a, b = fc.bucket_stats(y[:1500], p[:1500]), fc.bucket_stats(y[1500:], p[1500:])
    assert (a + b).rebin(12, strategy="quantile").counts.tolist() == fc.bucket_stats(
        y, p, bins=12, strategy="quantile"
    ).counts.tolist()
    qa = fc.bucket_stats(y[:1500], p[:1500], bins=12, strategy="quantile")
    qb = fc.bucket_stats(y[1500:], p[1500:], bins=12, strategy="quantile")
    if not np.array_equal(qa.edges, qb.edges):
        with pytest.raises(ValueError, match="different bins"):
            qa + qb


@pytest.mark.parametrize(
    "p, edges",
    [
        ([0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 1.0]),  # on an edge: the lower bin; 0 in bin 0, 1 in the last
        ([0.7, 0.8, 0.9], [0.0, 0.25, 0.5, 0.75, 1.0]),  # the first bins empty
        ([0.1, 0.2, 0.95], [0.0, 0.3, 0.31, 0.9, 1.0]),  # empty bins between held ones
        ([0.1, 0.2], [0.0, 1.0]),  # one bin
        ([0.25, 0.5000000000000002, 0.75], [0.0, 0.5, 1.0]),  # within EDGE_SLACK above an edge
        ([0.25, 0.5 * (1 + 2.0**-50), 0.75], [0.0, 0.5, 1.0]),  # on the cut itself: the lower bin
    ],
)
def test_rebin_puts_each_bucket_in_the_bin_its_value_falls_in(p, edges):
    """rebin (one search per cut over the sorted values) against binning the rounds, and each
    bucket's bin from its definition: the number of interior cuts below its value."""
    from fastcdl.bucket_table import bin_cuts

    p = np.array(p)
    y = np.arange(p.shape[0]) % 2
    edges = np.array(edges)
    exact = fc.bucket_stats(y, p)
    again = exact.rebin(edges)
    direct = fc.bucket_stats(y, p, bins=edges)
    assert again.counts.tolist() == direct.counts.tolist() and again.bins.tolist() == direct.bins.tolist()
    assert again.positives.tolist() == direct.positives.tolist()
    inner = bin_cuts(edges)[1:-1]
    want = sorted({int(np.sum(inner < v)) for v in exact.values})
    assert again.bins.tolist() == want


def test_metrics_and_estimators_take_strategy():
    rng = np.random.default_rng(4)
    p = rng.random(3000)
    y = rng.random(3000) < p
    st_ = fc.bucket_stats(y, p, bins="auto", strategy="quantile")
    for f in (
        fc.ece,
        fc.k2,
        fc.cdl,
        fc.vcdl,
        fc.ucal,
        fc.cdl_monotone,
        fc.vcdl_monotone,
        fc.cutoff_ce,
        fc.atb,
        fc.smce,
        fc.mce,
        fc.rmsce,
    ):
        assert f(y, p, bins="auto", strategy="quantile") == f(st_)
    assert fc.cdl_report(y, p, bins=9, strategy="quantile").value == fc.cdl(y, p, bins=9, strategy="quantile")
    b1 = fc.bootstrap("ece", y, p, bins=9, strategy="quantile", n_boot=100, seed=1)
    b2 = fc.bootstrap("ece", fc.bucket_stats(y, p, bins=9, strategy="quantile"), n_boot=100, seed=1)
    assert b1.value == b2.value and np.array_equal(b1.replicates, b2.replicates)
    t = fc.calibration_test(y, p, metric="ece", bins=9, strategy="quantile", n_sim=50, seed=1)
    assert t.statistic == fc.ece(y, p, bins=9, strategy="quantile")


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"bins": None, "strategy": "quantile"}, "strategy='quantile' needs bins"),
        ({"bins": np.array([0.0, 0.5, 1.0]), "strategy": "quantile"}, "chooses its own edges"),
        ({"bins": 10, "strategy": "equal"}, "strategy must be one of uniform, quantile"),
        ({"bins": "many"}, "bins must be a positive integer, 'auto' or an array of edges"),
        ({"bins": 0, "strategy": "quantile"}, "bins must be a positive integer"),
        ({"bins": 2.5}, "bins must be a positive integer, 'auto' or an array of edges"),
    ],
)
def test_bad_binning_is_refused_by_name(kwargs, needle):
    for f in (fc.bucket_stats, fc.ece, fc.cdl_monotone, fc.brier):
        with pytest.raises(ValueError, match=needle.replace("(", r"\(")):
            f([0, 1], [0.2, 0.8], **kwargs)


def test_strategy_with_a_bucket_stats_is_refused():
    st_ = fc.bucket_stats([0, 1], [0.2, 0.8])
    with pytest.raises(ValueError, match="strategy is not accepted with a BucketStats.*rebin"):
        fc.ece(st_, strategy="quantile")
    with pytest.raises(ValueError, match="exact table"):
        fc.bucket_stats([0, 1], [0.2, 0.8], bins=2).rebin(2)
    # a weighted table from weight sums does not know its rounds, nor does a merge with one
    bare = fc.BucketStats.from_table([0.2, 0.8], [1.0, 2.0], [0.0, 2.0])
    with pytest.raises(ValueError, match="bins='auto' needs the number of rounds, which this weighted table"):
        bare.rebin("auto")
    with pytest.raises(ValueError, match="does not know"):
        (bare + fc.bucket_stats([0, 1], [0.2, 0.5], sample_weight=[1.0, 2.0])).rebin("auto", strategy="quantile")
    assert bare.rebin(2).counts.tolist() == [1.0, 2.0]


def _weighted_rounds(T, seed):
    """Tied predictions, weights of which about 30% are 0 (so the rows and the rounds of positive
    weight give different 'auto' bin counts)."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.random(T) < p
    w = np.round(rng.random(T) * 3, 1)
    w[rng.random(T) < 0.3] = 0.0
    return y, p, w


def test_auto_counts_the_rounds_of_positive_weight():
    """bins='auto' with weights is round(T+^(1/3)) for T+ rows of positive weight: rows of weight 0
    change nothing, as if they were absent."""
    y, p, w = _weighted_rounds(1000, 20)
    T_pos = int(np.count_nonzero(w > 0))
    m = fc._validate.auto_bins(T_pos)
    assert m != fc._validate.auto_bins(1000)  # the data tell the two counts apart
    for strategy in ("uniform", "quantile"):
        st_ = fc.bucket_stats(y, p, bins="auto", strategy=strategy, sample_weight=w)
        keep = w > 0
        assert st_ == fc.bucket_stats(y[keep], p[keep], bins="auto", strategy=strategy, sample_weight=w[keep])
        assert st_ == fc.bucket_stats(y, p, bins=m, strategy=strategy, sample_weight=w)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_rebin_auto_of_a_weighted_table_equals_binning_the_rounds(strategy):
    """rebin('auto') of a weighted exact table (and of merged chunk tables) chooses the m of
    bucket_stats(bins='auto') on the raw weighted rounds, and gives its table."""
    y, p, w = _weighted_rounds(1000, 21)
    direct = fc.bucket_stats(y, p, bins="auto", strategy=strategy, sample_weight=w)
    assert direct.edges.shape[0] - 1 <= fc._validate.auto_bins(int(np.count_nonzero(w > 0)))
    exact = fc.bucket_stats(y, p, sample_weight=w)
    cuts = (0, 137, 500, 501, 1000)
    chunks = [fc.bucket_stats(y[a:b], p[a:b], sample_weight=w[a:b]) for a, b in zip(cuts, cuts[1:])]
    merged = chunks[0] + chunks[1] + chunks[2] + chunks[3]
    for table in (exact, merged):
        _same_counts(table.rebin("auto", strategy=strategy), direct)
    if strategy == "uniform":
        assert direct.edges.shape[0] - 1 == fc._validate.auto_bins(int(np.count_nonzero(w > 0)))


def _same_counts(a, b):
    assert np.array_equal(a.edges, b.edges)
    if a.weighted:  # weights are added in another order
        np.testing.assert_allclose(a.counts, b.counts, rtol=1e-12)
        np.testing.assert_allclose(a.positives, b.positives, rtol=1e-12)
    else:
        assert a.counts.tolist() == b.counts.tolist() and a.positives.tolist() == b.positives.tolist()
    np.testing.assert_allclose(a.prob_sums, b.prob_sums, rtol=1e-12)


@pytest.mark.parametrize("bins, strategy", [(7, "quantile"), ("auto", "quantile"), ("auto", "uniform")])
@pytest.mark.parametrize("weighted", [False, True, "some zero"])
def test_chunked_file_reading_rebins_the_exact_table(tmp_path, monkeypatch, bins, strategy, weighted):
    """A file read in chunks of 7 rows gives the table of the whole arrays: quantile edges and
    'auto' are decided once, on the merged exact table, never per chunk."""
    import fastcdl.io
    from fastcdl.io import read_stats

    rng = np.random.default_rng(9)
    T = 203
    p = np.round(rng.random(T), 2)
    y = (rng.random(T) < p).astype(int)
    w = np.round(rng.random(T) * 3, 1) + 0.1
    if weighted == "some zero":  # 153 rounds of positive weight: 'auto' gives 5 bins, not the rows' 6
        w[rng.permutation(T)[:50]] = 0.0
    f = tmp_path / "f.csv"
    f.write_text("y,p,w\n" + "".join(f"{a},{float(b)!r},{float(c)!r}\n" for a, b, c in zip(y, p, w)))
    monkeypatch.setattr(fastcdl.io, "CHUNK_ROWS", 7)
    kw = {"weight_col": "w"} if weighted else {}
    got = read_stats(f, bins=bins, strategy=strategy, **kw)
    _same_counts(got, fc.bucket_stats(y, p, bins=bins, strategy=strategy, sample_weight=w if weighted else None))
    with pytest.raises(ValueError, match="strategy='quantile' needs bins"):
        read_stats(f, strategy="quantile")


def test_dask_quantile_bins_equal_in_memory():
    da = pytest.importorskip("dask.array")
    import dask

    import fastcdl.dask as fd

    rng = np.random.default_rng(10)
    p = np.round(rng.random(5000), 3)
    y = rng.random(5000) < p
    with dask.config.set(scheduler="synchronous"):
        for bins, strategy in ((11, "quantile"), ("auto", "quantile"), ("auto", "uniform")):
            got = fd.bucket_stats(
                da.from_array(y, chunks=700), da.from_array(p, chunks=700), bins=bins, strategy=strategy
            )
            _same_counts(got, fc.bucket_stats(y, p, bins=bins, strategy=strategy))
        # weighted, some weights 0: 'auto' counts the rounds of positive weight on the merged table
        yw, pw, w = _weighted_rounds(5000, 22)
        for bins, strategy in (("auto", "quantile"), ("auto", "uniform")):
            got = fd.bucket_stats(
                da.from_array(yw, chunks=700),
                da.from_array(pw, chunks=700),
                bins=bins,
                strategy=strategy,
                sample_weight=da.from_array(w, chunks=700),
            )
            _same_counts(got, fc.bucket_stats(yw, pw, bins=bins, strategy=strategy, sample_weight=w))
        with pytest.raises(ValueError, match="chooses its own edges"):
            fd.bucket_stats(
                da.from_array(y, chunks=700),
                da.from_array(p, chunks=700),
                bins=np.array([0.0, 0.5, 1.0]),
                strategy="quantile",
            )


def _sort_cases(rng):
    """Arrays that trouble a quicksort: sorted, reversed, organ pipe, all equal, few values,
    sawtooth, median-of-three killers, and random, of sizes around the insertion threshold."""
    for n in (0, 1, 2, 3, 15, 16, 17, 18, 64, 65, 257, 5000):
        r = rng.random(n)
        yield r
        yield np.sort(r)
        yield np.sort(r)[::-1].copy()
        yield np.concatenate([np.sort(r[: n // 2]), np.sort(r[n // 2 :])[::-1]])
        yield np.full(n, 0.5)
        yield rng.integers(0, 3, n).astype(np.float64)
        yield (np.arange(n) % 7).astype(np.float64)
        k = np.arange(n, dtype=np.float64)  # the classic killer of median-of-three pivots
        yield np.where(k % 2 == 0, k, n + k)
        yield np.array([0.0, -0.0] * (n // 2))


def test_intro_sort_and_heap_sort_equal_numpys_sort():
    rng = np.random.default_rng(5)
    for a in _sort_cases(rng):
        for sort in (kb.intro_sort, kb.heap_sort):
            b = a.copy()
            sort(b, 0, b.shape[0])
            assert b.tolist() == np.sort(a).tolist()
        if a.shape[0] > 4:  # a range inside the array; the rest untouched
            b = a.copy()
            kb.intro_sort(b, 2, a.shape[0] - 1)
            assert b[2:-1].tolist() == np.sort(a[2:-1]).tolist() and b[:2].tolist() == a[:2].tolist()
            assert b[-1] == a[-1]


def test_select_finds_every_order_statistic():
    rng = np.random.default_rng(6)
    for a in _sort_cases(rng):
        n = a.shape[0]
        want = np.sort(a)
        for k in sorted({0, n // 3, n // 2, n - 1} & set(range(n))):
            b = a.copy()
            assert kb.select(b, 0, n, k) == want[k]
            assert b[k] == want[k] and sorted(b.tolist()) == want.tolist()  # a permutation
            assert (b[:k] <= want[k]).all() and (b[k + 1 :] >= want[k]).all()


def test_depth_limit_hands_over_to_heapsort():
    assert [kb._depth_limit(n) for n in (1, 2, 3, 4, 1024)] == [2, 4, 4, 6, 22]
    # a killer array sorts within the limit's fallback as well as without it
    n = 4096
    k = np.arange(n, dtype=np.float64)
    a = np.where(k % 2 == 0, k, n + k)
    b = a.copy()
    kb.intro_sort(b, 0, n)
    assert b.tolist() == np.sort(a).tolist()


@pytest.mark.parametrize("size", [10, 65, 200, 3000])
@pytest.mark.parametrize("requests", [1, 3, 5, 40])
def test_order_statistics_match_a_sort(size, requests):
    """Each slot's order statistics against np.sort: slots of at most 64 values (insertion),
    of more than 4 requests (the sort) and of a few (the selection)."""
    rng = np.random.default_rng(size * 100 + requests)
    sizes = [size, 1, size + 7]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buf = rng.integers(0, 50, offsets[-1]).astype(np.float64) / 50  # ties
    slot = np.repeat(np.arange(3), [requests, 1, requests]).astype(np.int64)
    pos = np.concatenate([rng.integers(0, sizes[0], requests), [0], rng.integers(0, sizes[2], requests)])
    want = [np.sort(buf[offsets[k] : offsets[k + 1]])[j] for k, j in zip(slot, pos)]
    assert kb.order_statistics(buf.copy(), offsets, slot, pos.astype(np.int64)).tolist() == want
