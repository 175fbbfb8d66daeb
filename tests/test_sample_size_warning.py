"""SampleSizeWarning: the exact metrics warn on tables whose rounds mostly sit in buckets of one
round (continuous scores), name what fits, still return the value, and stay quiet on grids."""

import warnings

import numpy as np
import pytest

import fastcdl as fc

EXACT = {
    "cdl": fc.cdl,
    "vcdl": fc.vcdl,
    "ece": fc.ece,
    "k2": fc.k2,
    "ucal": fc.ucal,
    "mce": fc.mce,
    "rmsce": fc.rmsce,
    "cdl_report": fc.cdl_report,
    "cfdl": lambda *a, **k: fc.cfdl(*a, kink=0.4, **k),
    "decision_loss_curve": lambda *a, **k: fc.decision_loss_curve(*a, kinks=[0.3, 0.5], **k),
}
# what does not warn: estimators that fit samples, and numbers that do not judge buckets
QUIET = (
    fc.cdl_monotone,
    fc.vcdl_monotone,
    fc.cutoff_ce,
    fc.smce,
    fc.atb,
    fc.brier,
    lambda *a, **k: fc.swap_regret(*a, payoff=[[1, 0], [0, 1]], **k),
)


def _continuous(T=400, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(T)
    return rng.random(T) < p, p


def _value(r):
    return r.value if hasattr(r, "value") else r[1] if isinstance(r, tuple) else r


@pytest.mark.parametrize("name", list(EXACT))
def test_exact_metrics_warn_on_continuous_scores_and_still_return_the_value(name):
    y, p = _continuous()
    with pytest.warns(fc.SampleSizeWarning) as rec:
        got = EXACT[name](y, p)
    msg = str(rec[0].message)
    assert "100% of the 400 rounds sit in buckets of one round" in msg
    assert "cdl_monotone" in msg and "bins=" in msg and name in msg
    assert rec[0].filename == __file__  # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        again = EXACT[name](fc.bucket_stats(y, p))  # a BucketStats warns too, same value
    np.testing.assert_array_equal(_value(got), _value(again))


@pytest.mark.parametrize("name", list(EXACT))
def test_no_warning_on_grid_data_binned_or_weighted_tables(name):
    rng = np.random.default_rng(1)
    p = rng.integers(0, 11, 400) / 10  # an 11-value grid: every bucket holds many rounds
    y = rng.random(400) < p
    y_c, p_c = _continuous()
    with warnings.catch_warnings():
        warnings.simplefilter("error", fc.SampleSizeWarning)
        EXACT[name](y, p)
        EXACT[name](y_c, p_c, bins=15)
        EXACT[name](y_c, p_c, bins="auto", strategy="quantile")
        w = np.random.default_rng(2).random(400) + 0.5
        EXACT[name](y, p, sample_weight=w)  # weighted grid data: buckets of many rounds
        EXACT[name](y_c, p_c, bins=15, sample_weight=w)  # a weighted binned sample
        EXACT[name](y_c, p_c, bins="auto", strategy="quantile", sample_weight=w)


@pytest.mark.parametrize("name", list(EXACT))
def test_weighted_continuous_scores_warn_on_their_weight(name):
    y, p = _continuous()
    w = np.random.default_rng(4).random(400) + 0.5
    with pytest.warns(fc.SampleSizeWarning) as rec:
        EXACT[name](y, p, sample_weight=w)
    msg = str(rec[0].message)
    assert "100% of the weight of the 400 rounds sit in buckets of one round" in msg and name in msg
    assert rec[0].filename == __file__
    with pytest.warns(fc.SampleSizeWarning, match="100% of the weight"):  # a weighted BucketStats too
        EXACT[name](fc.bucket_stats(y, p, sample_weight=w))


def test_threshold_is_half_of_the_rounds():
    # 5 single-round buckets and one of 5 rounds: exactly half -> warns
    p = np.r_[[0.1, 0.2, 0.3, 0.4, 0.6], [0.9] * 5]
    y = np.r_[[0, 1, 0, 1, 1], [1] * 5]
    with pytest.warns(fc.SampleSizeWarning, match="50% of the 10 rounds"):
        fc.cdl(y, p)
    with warnings.catch_warnings():  # one more round in the big bucket: 5 of 11 -> quiet
        warnings.simplefilter("error", fc.SampleSizeWarning)
        fc.cdl(np.r_[y, 1], np.r_[p, 0.9])


@pytest.mark.parametrize("f", QUIET)
def test_sample_estimators_do_not_warn(f):
    y, p = _continuous()
    with warnings.catch_warnings():
        warnings.simplefilter("error", fc.SampleSizeWarning)
        f(y, p)


def test_trial_metrics_and_online_runs_do_not_warn():
    """Rate experiments measure the exact CDL of the sequence: no warning, same values."""
    from fastcdl.trial_measures import compute_all

    y, p = _continuous()
    st = fc.bucket_stats(y, p)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fc.SampleSizeWarning)
        cols = compute_all(st)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        assert cols["cdl"] == fc.cdl(st) and cols["ece"] == fc.ece(st) and cols["vcdl"] == fc.vcdl(st)
    with pytest.warns(fc.SampleSizeWarning):  # the switch is off again after the block
        fc.cdl(st)


def test_classwise_reductions_warn_per_class():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(3), 300)
    y = rng.integers(0, 3, 300)
    with pytest.warns(fc.SampleSizeWarning):
        fc.ece(y, P, multiclass="classwise")


def test_resampling_warns_once_for_the_table_not_for_each_replicate():
    y, p = _continuous()
    with pytest.warns(fc.SampleSizeWarning) as rec:
        fc.bootstrap(fc.cdl, y, p, n_boot=100, seed=0, method="bca")
    assert len(rec) == 1
    with pytest.warns(fc.SampleSizeWarning) as rec:
        fc.calibration_test(y, p, metric="ece", n_sim=20, seed=0)
    assert len(rec) == 1


def _share_ref(p, w):
    """The weight share of buckets holding one round of positive weight, from the rows (a dict)."""
    rows, weight = {}, {}
    for pt, wt in zip(np.asarray(p, float).tolist(), np.asarray(w, float).tolist()):
        pt += 0.0
        rows[pt] = rows.get(pt, 0) + (wt > 0)
        weight[pt] = weight.get(pt, 0.0) + wt
    total = sum(weight.values())
    return sum(weight[v] for v in rows if rows[v] == 1) / total


def _warns(f, *a, **k):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", fc.SampleSizeWarning)
        f(*a, **k)
    return any(issubclass(r.category, fc.SampleSizeWarning) for r in rec)


@pytest.mark.parametrize(
    "p, w, warns",
    [
        # half of the weight in two single rounds, half in a bucket of two rounds: warns at exactly 1/2
        ([0.1, 0.2, 0.9, 0.9], [1.0, 1.0, 1.0, 1.0], True),
        ([0.1, 0.2, 0.9, 0.9], [1.0, 1.0, 1.0, 1.5], False),
        # most rounds alone but little of the weight: the weight decides, quiet
        ([0.01 * i for i in range(1, 11)] + [0.9, 0.9], [0.1] * 10 + [5.0, 5.0], False),
        # few rounds alone but most of the weight: warns
        ([0.1, 0.2, 0.3] + [0.9] * 20, [10.0] * 3 + [0.1] * 20, True),
        # a zero weight is not a round: 0.3 holds one round of positive weight
        ([0.3, 0.3, 0.7, 0.7, 0.7], [2.0, 0.0, 1.0, 0.0, 0.5], True),
        ([0.3, 0.3, 0.7, 0.7, 0.7], [2.0, 1e-300, 1.0, 0.0, 0.5], False),
        # -0.0 and 0.0 are one prediction
        ([-0.0, 0.0, 0.5], [1.0, 1.0, 1.5], False),
    ],
)
def test_weighted_share_edge_cases(p, w, warns):
    y = np.arange(len(p)) % 2
    st = fc.bucket_stats(y, p, sample_weight=w)
    assert fc.exact.one_round_share(st) == pytest.approx(_share_ref(p, w), rel=1e-15)
    assert (_share_ref(p, w) >= 0.5) == warns
    assert _warns(fc.cdl, y, p, sample_weight=w) == warns
    assert _warns(fc.ece, st) == warns


def test_equal_weights_share_the_unweighted_rule():
    rng = np.random.default_rng(5)
    for p in (rng.random(50), rng.integers(0, 5, 50) / 4, np.r_[rng.random(25), np.full(25, 0.5)]):
        y = rng.random(50) < 0.5
        plain = fc.exact.one_round_share(fc.bucket_stats(y, p))
        assert fc.exact.one_round_share(fc.bucket_stats(y, p, sample_weight=np.full(50, 0.25))) == plain
        assert _warns(fc.cdl, y, p, sample_weight=np.full(50, 3.0)) == (plain >= 0.5)


def test_merged_weighted_tables_count_their_rounds():
    """Merging adds the rounds per bucket: a score seen once in each of two chunks is a bucket of
    two rounds, so each chunk warns alone and the merged table does not."""
    rng = np.random.default_rng(6)
    p = rng.random(300)
    wa, wb = rng.random(300) + 0.1, rng.random(300) + 0.1
    a = fc.bucket_stats(rng.random(300) < p, p, sample_weight=wa)
    b = fc.bucket_stats(rng.random(300) < p, p, sample_weight=wb)
    assert _warns(fc.cdl, a) and _warns(fc.cdl, b)
    both = a + b
    assert both.rounds.tolist() == [2] * 300
    assert not _warns(fc.cdl, both)
    # with an unweighted table: its counts are its rounds
    c = fc.bucket_stats(np.zeros(300, bool), p)
    assert (a + c).rounds.tolist() == [2] * 300 and not _warns(fc.cdl, a + c)
    # merging equals building from the concatenated rounds
    whole = fc.bucket_stats(np.r_[np.zeros(300), np.ones(300)], np.r_[p, p], sample_weight=np.r_[wa, wb])
    assert whole.rounds.tolist() == both.rounds.tolist()


def test_weighted_table_without_rounds_is_not_checked():
    """BucketStats.from_table with weights holds weight sums only: the rounds are unknown."""
    st = fc.BucketStats.from_table([0.1, 0.4, 0.8], [0.5, 1.5, 2.0], [0.0, 1.5, 0.5])
    assert st.rounds is None and np.isnan(fc.exact.one_round_share(st))
    assert not _warns(fc.cdl, st)
    rounds = fc.bucket_stats([0, 1, 1], [0.1, 0.4, 0.8], sample_weight=[0.5, 1.5, 2.0])
    assert not (st + rounds).rounds_known and not _warns(fc.cdl, st + rounds)


def test_weighted_chunked_file_keeps_its_rounds(tmp_path, monkeypatch):
    import fastcdl.io
    from fastcdl.io import read_stats

    rng = np.random.default_rng(7)
    p = np.r_[rng.random(60), np.full(40, 0.5)]
    w = rng.random(100) + 0.2
    y = (rng.random(100) < p).astype(int)
    f = tmp_path / "w.csv"
    f.write_text("y,p,w\n" + "".join(f"{a},{float(b)!r},{float(c)!r}\n" for a, b, c in zip(y, p, w)))
    monkeypatch.setattr(fastcdl.io, "CHUNK_ROWS", 7)
    st = read_stats(f, weight_col="w")
    assert st.rounds.tolist() == fc.bucket_stats(y, p, sample_weight=w).rounds.tolist()
    assert fc.exact.one_round_share(st) == pytest.approx(_share_ref(p, w), rel=1e-12)


def test_weighted_file_gets_the_advice(tmp_path, capsys):
    from fastcdl.cli import main

    rng = np.random.default_rng(8)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    w = rng.random(500) + 0.5
    f = tmp_path / "w.csv"
    f.write_text("y,p,w\n" + "".join(f"{a},{float(b)!r},{float(c)!r}\n" for a, b, c in zip(y, p, w)))
    assert main(["metrics", str(f), "--weight-col", "w"]) == 0
    text = capsys.readouterr().out
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "100% of the weight of the rounds sits in buckets of one round" in notes[0]
    assert "sample estimators" in text
    g = tmp_path / "g.csv"
    q = rng.integers(0, 11, 500) / 10
    g.write_text("y,p,w\n" + "".join(f"{a},{float(b)!r},{float(c)!r}\n" for a, b, c in zip(y, q, w)))
    assert main(["metrics", str(g), "--weight-col", "w"]) == 0
    assert "note:" not in capsys.readouterr().out


def _dirichlet(T, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), T)
    return np.array([rng.choice(3, p=row) for row in P]), P


def test_cdl_multiclass_warns_on_distinct_rows():
    y, P = _dirichlet(60, 9)
    with pytest.warns(fc.SampleSizeWarning) as rec:
        value = fc.cdl_multiclass(y, P)
    msg = str(rec[0].message)
    assert "cdl_multiclass: 100% of the 60 rounds sit in buckets of one round" in msg
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        assert fc.cdl_multiclass(y, P) == value  # the value is still returned
    w = np.random.default_rng(10).random(60) + 0.5
    with pytest.warns(fc.SampleSizeWarning, match="100% of the weight of the 60 rounds"):
        fc.cdl_multiclass(y, P, sample_weight=w)


def test_cdl_multiclass_rule_on_rows():
    rng = np.random.default_rng(11)
    rows = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [1 / 3, 1 / 3, 1 / 3]])
    P = rows[rng.integers(0, 3, 90)]  # three rows, each of many rounds
    y = rng.integers(0, 3, 90)
    assert not _warns(fc.cdl_multiclass, y, P)
    # 3 rows of one round and one row of 3 rounds: exactly half of the rounds alone -> warns
    P2 = np.r_[rows, np.tile([[0.1, 0.1, 0.8]], (3, 1))]
    y2 = np.array([0, 1, 2, 2, 2, 0])
    assert _warns(fc.cdl_multiclass, y2, P2)
    assert not _warns(fc.cdl_multiclass, np.r_[y2, 1], np.r_[P2, [[0.1, 0.1, 0.8]]])
    # with weights the weight decides; a zero weight is not a round
    assert not _warns(fc.cdl_multiclass, y2, P2, sample_weight=[1, 1, 1, 2, 2, 2])
    assert _warns(fc.cdl_multiclass, y2, P2, sample_weight=[3, 3, 3, 1, 1, 1])
    assert _warns(fc.cdl_multiclass, y2, P2, sample_weight=[1, 1, 1, 2, 0, 0])
    with warnings.catch_warnings():  # the switch of rate experiments and resampling applies too
        warnings.simplefilter("error", fc.SampleSizeWarning)
        with fc.exact.sample_size_check_off():
            fc.cdl_multiclass(y2, P2)


def test_dask_weighted_table_keeps_its_rounds():
    da = pytest.importorskip("dask.array")
    import dask

    import fastcdl.dask as fd

    rng = np.random.default_rng(12)
    p = np.r_[rng.random(500), np.full(500, 0.25)]
    y = rng.random(1000) < p
    w = rng.random(1000) + 0.1
    with dask.config.set(scheduler="synchronous"):
        st = fd.bucket_stats(
            da.from_array(y, chunks=300), da.from_array(p, chunks=300), sample_weight=da.from_array(w, chunks=300)
        )
    assert st.rounds.tolist() == fc.bucket_stats(y, p, sample_weight=w).rounds.tolist()
    assert fc.exact.one_round_share(st) == pytest.approx(_share_ref(p, w), rel=1e-12)
