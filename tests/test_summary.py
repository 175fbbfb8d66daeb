"""fc.summary: every measure of the registry on one table, the worst task, the advice, as a
frozen object; the command line's JSON is its to_dict()."""

import dataclasses
import json
import warnings

import numpy as np
import pytest

import fastcdl as fc
from fastcdl.cli import main
from fastcdl.measures import TABLE_MEASURES as MEASURES  # the measures of a bucket table


def _data(seed=0, T=400, distinct=None):
    rng = np.random.default_rng(seed)
    p = rng.random(T) if distinct is None else rng.choice(np.linspace(0.05, 0.95, distinct), T)
    y = (rng.random(T) < p**1.3).astype(int)
    return y, p


def test_values_are_the_registry_measures_of_the_table():
    y, p = _data(distinct=12)
    s = fc.summary(y, p)
    st = fc.bucket_stats(y, p)
    assert list(s.values) == [k for k, m in MEASURES.items() if m.applies(st)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        for key, v in s.values.items():
            assert v == MEASURES[key](st), key
        assert s["cdl"] == fc.cdl(y, p) and s["cdl_monotone"] == fc.cdl_monotone(y, p)
    assert s.T == len(y) and s.n_buckets == 12 and not s.binned and not s.sparse and s.advice is None
    rep = fc.cdl_report(y, p)
    assert s.vcdl_kink == rep.vcdl_kink and s.worst_task.kinks == tuple(rep.kinks)
    assert s.cutoff_ce_p_value == fc.cutoff_ce_test(y, p).p_value


def test_is_frozen_and_round_trips_through_json():
    y, p = _data(distinct=12)
    s = fc.summary(y, p)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.T = 3
    d = json.loads(s.to_json())
    assert d == json.loads(json.dumps(s.to_dict()))
    assert set(d) == set(MEASURES) | {
        "n_buckets",
        "T",
        "vcdl_kink",
        "cutoff_ce_p_value",
        "one_round_share",
        "worst_task",
        "advice",
    }
    assert "CDL_M" in repr(s) and "worst" not in repr(s).lower().split("\n")[0]


def test_binned_table_leaves_out_what_it_does_not_determine():
    y, p = _data()
    s = fc.summary(y, p, bins=10)
    assert s.binned and "brier" not in s.values and "atb_unbiased" not in s.values
    assert s.to_dict()["brier"] is None and s["ece"] == fc.ece(y, p, bins=10)


def test_continuous_scores_get_the_advice():
    y, p = _data()
    s = fc.summary(y, p)
    assert s.sparse and s.one_round_share == 1.0 and "sample estimators" in s.advice
    assert s.to_dict()["advice"] == s.advice


def test_intervals_when_asked():
    y, p = _data(distinct=12)
    with pytest.warns(fc.CoverageWarning, match="intervals come with a warning"):  # 400 rounds: not validated
        s = fc.summary(y, p, intervals=True, n_sub=100, seed=3)
    assert set(s.intervals) == set(s.values)
    st = fc.bucket_stats(y, p)
    for key, iv in s.intervals.items():
        assert iv.lo <= iv.hi and iv.level == 0.95, key
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fc.CoverageWarning)
            want = fc.interval(key, st, n_sub=100, seed=3)
        assert (iv.estimate, iv.lo, iv.hi) == (want.estimate, want.lo, want.hi), key
    with pytest.warns(fc.CoverageWarning):
        again = fc.summary(y, p, intervals=True, n_sub=100, seed=3)
    assert {k: (v.lo, v.hi) for k, v in again.intervals.items()} == {k: (v.lo, v.hi) for k, v in s.intervals.items()}
    assert "intervals" in s.to_dict() and "intervals" not in fc.summary(y, p).to_dict()


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="y_prob"):
        fc.summary([0, 1], [0.5, 1.5])


def test_cli_json_is_the_summary(tmp_path, capsys):
    y, p = _data(distinct=12, T=60)
    f = tmp_path / "f.csv"
    f.write_text("y,p\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(y, p)))
    assert main(["metrics", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = fc.summary(y, p).to_dict()
    # the command line adds the binned ECE and the intervals it leads with on continuous scores
    assert {k: v for k, v in out.items() if k in want} == want
    assert set(out) - set(want) == {"ece_quantile", "ece_quantile_bins", "intervals"}
