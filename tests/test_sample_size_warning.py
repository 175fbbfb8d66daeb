"""SampleSizeWarning: the exact metrics warn on tables whose rounds mostly sit in buckets of one
round (continuous scores), name what fits, still return the value, and stay quiet on grids."""

import warnings

import numpy as np
import pytest

import fastcdl as fc

EXACT = {
    "cdl": fc.cdl, "vcdl": fc.vcdl, "ece": fc.ece, "k2": fc.k2, "ucal": fc.ucal, "mce": fc.mce,
    "rmsce": fc.rmsce, "cdl_report": fc.cdl_report,
    "cfdl": lambda *a, **k: fc.cfdl(*a, kink=0.4, **k),
    "decision_loss_curve": lambda *a, **k: fc.decision_loss_curve(*a, kinks=[0.3, 0.5], **k),
}
# what does not warn: estimators that fit samples, and numbers that do not judge buckets
QUIET = (fc.cdl_monotone, fc.vcdl_monotone, fc.cutoff_ce, fc.smce, fc.atb, fc.brier,
         lambda *a, **k: fc.swap_regret(*a, payoff=[[1, 0], [0, 1]], **k))


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
        EXACT[name](y_c, p_c, sample_weight=np.ones(400))  # weighted tables are not checked


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
    from fastcdl.trial_metrics import compute_all

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
        fc.bootstrap(fc.cdl, y, p, n_boot=20, seed=0, method="bca")
    assert len(rec) == 1
    with pytest.warns(fc.SampleSizeWarning) as rec:
        fc.calibration_test(y, p, metric="ece", n_sim=20, seed=0)
    assert len(rec) == 1
