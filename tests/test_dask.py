"""fastcdl.dask: chunked reduction of dask arrays and Parquet datasets on a distributed cluster.

The reduced table must equal fastcdl.bucket_stats of the concatenated numpy arrays (and
that one is checked against tests/reference.py elsewhere). The data repeat a few
prediction values (k/10, and 0, 1/2, 1) across many chunks and files, so every merge
adds up buckets that several chunks share.
"""

import subprocess
import sys

import numpy as np
import pytest

import fastcdl as fc

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastcdl.dask as fd  # noqa: E402

T = 3000
CHUNKS = (400, 1, 999, 0, 600, 1000)  # uneven, with a one-row and an empty chunk
EDGES = np.array([0.0, 0.05, 0.3, 0.5, 0.51, 0.9, 1.0])  # 0.3, 0.5 and 0.9 sit on edges
BINS = [None, 15, EDGES]
BIN_IDS = ["exact", "bins=15", "edges"]


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, scheduler_port=0, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _data(seed=0, grid=10):
    rng = np.random.default_rng(seed)
    p = rng.integers(0, grid + 1, T) / grid
    # y = 1 with chance p pulled toward 1/2: miscalibrated, so every metric is positive
    y = (rng.random(T) < 0.5 + 0.6 * (p - 0.5)).astype(np.int64)
    w_int = rng.integers(0, 4, T).astype(np.float64)  # integer-valued: float sums are exact
    w_float = rng.random(T) * 2.0
    return y, p, w_int, w_float


def _dask(x, chunks=CHUNKS):
    return da.from_array(x, chunks=(chunks,))


def _assert_same(got, want, exact_floats):
    """Counts, positives, bins and edges equal; float sums equal, or within rounding."""
    assert got.n_buckets == want.n_buckets
    for name in ("counts", "positives", "bins", "edges"):
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    if exact_floats:
        assert got == want
    else:
        np.testing.assert_allclose(got.values, want.values, rtol=1e-13, atol=0)
        np.testing.assert_allclose(got.prob_sums, want.prob_sums, rtol=1e-13, atol=0)


def _assert_same_cdl(stats, want, exact):
    """CDL of the reduced table: identical for identical tables, else within rounding."""
    assert want > 0.01  # the data are miscalibrated, so the comparison means something
    if exact:
        assert fc.cdl(stats) == want
    else:
        assert fc.cdl(stats) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("bins", BINS, ids=BIN_IDS)
def test_equals_in_memory_unweighted(client, bins):
    y, p, _, _ = _data()
    got = fd.bucket_stats(_dask(y), _dask(p), bins=bins)
    want = fc.bucket_stats(y, p, bins=bins)
    # exact buckets: q_i n_i is recomputed on merge, so the whole table is identical;
    # binned: prediction sums of k/10 are rounded and added in another order
    _assert_same(got, want, exact_floats=bins is None)
    assert got.counts.dtype == np.int64
    assert got.total == T
    _assert_same_cdl(got, fc.cdl(y, p, bins=bins), exact=bins is None)
    if bins is None:
        assert got.n_buckets == 11 and got.counts.min() > len(CHUNKS)  # each value in many chunks


@pytest.mark.parametrize("bins", BINS, ids=BIN_IDS)
def test_dyadic_predictions_merge_exactly_in_every_mode(client, bins):
    # with predictions k/16 every float sum is exact, so even binned tables are identical
    y, p, w_int, _ = _data(seed=1, grid=16)
    assert fd.bucket_stats(_dask(y), _dask(p), bins=bins) == fc.bucket_stats(y, p, bins=bins)
    got = fd.bucket_stats(_dask(y), _dask(p), bins=bins, sample_weight=_dask(w_int))
    assert got == fc.bucket_stats(y, p, bins=bins, sample_weight=w_int)


@pytest.mark.parametrize("bins", BINS, ids=BIN_IDS)
def test_equals_in_memory_weighted(client, bins):
    y, p, w_int, w_float = _data(seed=2)
    got = fd.bucket_stats(_dask(y), _dask(p), bins=bins, sample_weight=_dask(w_int))
    want = fc.bucket_stats(y, p, bins=bins, sample_weight=w_int)
    _assert_same(got, want, exact_floats=bins is None)  # integer-valued weights: exact sums
    assert fc.cdl(got) == pytest.approx(fc.cdl(y, p, bins=bins, sample_weight=w_int), abs=1e-14)

    got = fd.bucket_stats(_dask(y), _dask(p), bins=bins, sample_weight=_dask(w_float))
    want = fc.bucket_stats(y, p, bins=bins, sample_weight=w_float)
    assert got.n_buckets == want.n_buckets
    # float weights are summed in another order: equal up to rounding
    for name in ("values", "counts", "positives", "prob_sums"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-12, err_msg=name)
    assert fc.cdl(got) == pytest.approx(fc.cdl(y, p, bins=bins, sample_weight=w_float), abs=1e-12)


def test_misaligned_chunks_numpy_inputs_and_zero_weight_chunks(client):
    y, p, w_int, _ = _data(seed=3)
    w = w_int.copy()
    w[:500] = 0.0  # the whole first chunk of p carries no weight
    got = fd.bucket_stats(da.from_array(y, chunks=700), _dask(p), sample_weight=da.from_array(w, chunks=333))
    assert got == fc.bucket_stats(y, p, sample_weight=w)
    assert fd.bucket_stats(y, _dask(p)) == fc.bucket_stats(y, p)  # numpy y is chunked like p
    assert fd.bucket_stats(list(y[:10]), list(p[:10])) == fc.bucket_stats(y[:10], p[:10])


def test_unknown_chunk_sizes_from_a_dataframe(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    y, p, _, _ = _data(seed=4)
    df = dd.from_pandas(pd.DataFrame({"y": y, "p": p}), npartitions=5)
    yd, pdk = df["y"].to_dask_array(), df["p"].to_dask_array()
    assert np.isnan(pdk.shape[0])
    assert fd.bucket_stats(yd, pdk) == fc.bucket_stats(y, p)
    assert fd.bucket_stats(df["y"], df["p"]) == fc.bucket_stats(y, p)  # the columns themselves
    df_bad = dd.from_pandas(pd.DataFrame({"y": y, "p": np.where(np.arange(T) == 2500, 1.5, p)}), npartitions=5)
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]; found .* of chunk 4"):
        fd.bucket_stats(df_bad["y"], df_bad["p"])


def test_runs_on_the_active_client(client):
    y, p, _, _ = _data(seed=5)
    with distributed.get_task_stream(client) as ts:
        fd.bucket_stats(_dask(y), _dask(p))
    names = {t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in ts.data}
    assert any("_block_stats" in str(k) for k in names)
    assert any("_merge" in str(k) for k in names)


# -- bad input ------------------------------------------------------------------------


def _chunked(x):
    return da.from_array(x, chunks=((1000, 1000, 1000),))


@pytest.mark.parametrize(
    "where, value, needle",
    [
        ("p", np.nan, "y_prob contains NaN, first at index 2345 (0-based)"),
        ("p", 1.5, "y_prob must lie in [0, 1]; found"),
        ("p", -0.25, "at index 2345 (0-based)"),
        ("p", np.inf, "y_prob contains infinite values, first at index 2345 (0-based)"),
        ("y", 2, "y_true must contain only 0 and 1"),
        ("w", -1.0, "sample_weight must be non-negative"),
    ],
)
def test_bad_value_in_one_partition(client, where, value, needle):
    y, p, w, _ = _data(seed=6)
    arrays = {"y": y.copy(), "p": p.copy(), "w": w.copy()}
    arrays[where][2345] = value  # in the third chunk: the index is of the whole array
    with pytest.raises(ValueError) as e:
        fd.bucket_stats(_chunked(arrays["y"]), _chunked(arrays["p"]), sample_weight=_chunked(arrays["w"]))
    assert needle in str(e.value)
    assert "2345" in str(e.value)


def test_bad_shapes_bins_and_empty(client):
    y, p, _, _ = _data()
    with pytest.raises(ValueError, match="different lengths"):
        fd.bucket_stats(_dask(y)[:-1], _dask(p))
    with pytest.raises(ValueError, match="sample_weight and y_prob have different lengths"):
        fd.bucket_stats(_dask(y), _dask(p), sample_weight=da.ones(5, chunks=2))
    with pytest.raises(ValueError, match="1-D"):
        fd.bucket_stats(da.zeros((4, 2), chunks=2), da.zeros((4, 2), chunks=2))
    with pytest.raises(ValueError, match="empty"):
        fd.bucket_stats(da.zeros(0, chunks=1), da.zeros(0, chunks=1))
    with pytest.raises(ValueError, match="bins must be a positive integer"):
        fd.bucket_stats(_dask(y), _dask(p), bins=0)
    with pytest.raises(ValueError, match="strictly increasing"):
        fd.bucket_stats(_dask(y), _dask(p), bins=[0.0, 0.5, 0.5, 1.0])
    with pytest.raises(ValueError, match="sample_weight sums to zero"):
        fd.bucket_stats(_dask(y), _dask(p), sample_weight=da.zeros(T, chunks=500))


# -- Parquet datasets -----------------------------------------------------------------


def _write_dataset(folder, y, p, w, sizes=(700, 1, 1299, 1000)):
    folder.mkdir()
    start = 0
    for i, n in enumerate(sizes):
        sl = slice(start, start + n)
        pq.write_table(pa.table({"y": y[sl], "p": p[sl], "w": w[sl]}), folder / f"part-{i}.parquet")
        start += n
    assert start == len(p)
    (folder / "_SUCCESS").write_text("")  # marker files are not data
    return folder


@pytest.mark.parametrize("bins", BINS, ids=BIN_IDS)
def test_parquet_dataset_equals_in_memory(client, tmp_path, bins):
    y, p, w_int, _ = _data(seed=7)
    folder = _write_dataset(tmp_path / "ds", y, p, w_int)
    got = fd.bucket_stats_parquet(folder, bins=bins)
    _assert_same(got, fc.bucket_stats(y, p, bins=bins), exact_floats=bins is None)
    _assert_same_cdl(got, fc.cdl(y, p, bins=bins), exact=bins is None)
    got = fd.bucket_stats_parquet(folder, weight_col="w", bins=bins)
    _assert_same(got, fc.bucket_stats(y, p, bins=bins, sample_weight=w_int), exact_floats=bins is None)


def test_parquet_single_file_and_renamed_columns(client, tmp_path):
    y, p, _, _ = _data(seed=8)
    pq.write_table(pa.table({"rain": y.astype(bool), "forecast": p}), tmp_path / "one.parquet", row_group_size=256)
    got = fd.bucket_stats_parquet(tmp_path / "one.parquet", y_col="rain", p_col="forecast")
    assert got == fc.bucket_stats(y, p)


@pytest.mark.parametrize(
    "column, value, needle",
    [
        ("p", np.nan, "part-2.parquet: column 'p' contains NaN, first at row 5 (0-based)"),
        ("p", 1.5, "part-2.parquet: column 'p' must lie in [0, 1]; found 1.5 at row 5 (0-based)"),
        ("y", 2, "part-2.parquet: column 'y' must contain only 0 and 1"),
    ],
)
def test_parquet_bad_value_names_file_column_and_row(client, tmp_path, column, value, needle):
    y, p, w, _ = _data(seed=9)
    y, p = y.astype(np.float64), p.copy()
    (p if column == "p" else y)[700 + 1 + 5] = value  # row 5 of the third file
    folder = _write_dataset(tmp_path / "ds", y, p, w)
    with pytest.raises(ValueError) as e:
        fd.bucket_stats_parquet(folder)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_parquet_missing_column_path_and_no_rows(client, tmp_path):
    y, p, w, _ = _data()
    folder = _write_dataset(tmp_path / "ds", y, p, w)
    with pytest.raises(ValueError, match=r"part-\d\.parquet: missing column\(s\) \['q'\]"):
        fd.bucket_stats_parquet(folder, p_col="q")
    with pytest.raises(ValueError, match="cannot read: No such file"):
        fd.bucket_stats_parquet(tmp_path / "nope")
    (tmp_path / "void").mkdir()
    with pytest.raises(ValueError, match="no Parquet files"):
        fd.bucket_stats_parquet(tmp_path / "void")
    pq.write_table(pa.table({"y": pa.array([], pa.int64()), "p": pa.array([], pa.float64())}), tmp_path / "e.parquet")
    with pytest.raises(ValueError, match="no rows"):
        fd.bucket_stats_parquet(tmp_path / "e.parquet")
    with pytest.raises(ValueError, match="bins must be a positive integer"):
        fd.bucket_stats_parquet(folder, bins=-3)


def test_import_fastcdl_does_not_import_dask():
    code = "import sys, fastcdl; fastcdl.cdl([0, 1], [0.5, 0.5]); assert 'dask' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
