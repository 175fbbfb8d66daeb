"""fc.summary: every measure of the registry on one table, the worst task, the advice, as a
frozen object; the command line's JSON is its to_dict()."""

import dataclasses
import json
import warnings

import numpy as np
import pytest

import fastcdl as fc
from fastcdl.cli import main
from fastcdl.io import read_file
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
        "ece_quantile",
        "ece_quantile_bins",
        "intervals",
        "ici_e50",
        "ici_e90",
        "ici_emax",
        "corp_dsc",
        "corp_unc",
        "corp_score",
        "diagnostics",
        "diagnostics_notes",
    }
    assert set(d["diagnostics"]) == {"hosmer_lemeshow", "spiegelhalter", "ks", "calibration_slope"}
    assert "CDL_M" in repr(s) and "worst" not in repr(s).lower().split("\n")[0]


def test_binned_table_leaves_out_what_it_does_not_determine():
    y, p = _data()
    s = fc.summary(y, p, bins=10)
    assert s.binned and "brier" not in s.values and "atb_unbiased" not in s.values
    assert s.to_dict()["brier"] is None and s["ece"] == fc.ece(y, p, bins=10)


def test_continuous_scores_get_the_advice():
    y, p = _data()
    with pytest.warns(fc.CoverageWarning, match="rough ranges"):  # 400 rounds: the intervals are rough
        s = fc.summary(y, p)
    assert s.sparse and s.one_round_share == 1.0 and "sample estimators" in s.advice
    assert s.to_dict()["advice"] == s.advice


def test_intervals_when_asked():
    y, p = _data(distinct=12)
    with pytest.warns(fc.CoverageWarning, match="at 400 rounds read them as rough ranges"):  # 400 rounds: not validated
        s = fc.summary(y, p, intervals=True, n_sub=100, seed=3)
    st = fc.bucket_stats(y, p)
    # the report's intervals: the measures whose entry says cli_interval (the sample estimators)
    want_keys = {k for k, m in fc.MEASURES.items() if m.cli_interval and m.applies(st)}
    assert set(s.intervals) == want_keys and "cdl_monotone" in want_keys
    assert s.interval_note.startswith("intervals: at 400 rounds read them as rough ranges")
    for key, iv in s.intervals.items():
        assert iv.lo <= iv.hi and iv.level == 0.95, key
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fc.CoverageWarning)
            want = fc.interval(key, st, n_sub=100, seed=3)
        assert (iv.estimate, iv.lo, iv.hi) == (want.estimate, want.lo, want.hi), key
    with pytest.warns(fc.CoverageWarning):
        again = fc.summary(y, p, intervals=True, n_sub=100, seed=3)
    assert {k: (v.lo, v.hi) for k, v in again.intervals.items()} == {k: (v.lo, v.hi) for k, v in s.intervals.items()}
    assert s.to_dict()["intervals"]["cdl_monotone"]["lo"] == s.intervals["cdl_monotone"].lo
    # repeated predictions: none unless asked ("auto"); a list of keys gives those
    assert fc.summary(y, p).to_dict()["intervals"] is None and fc.summary(y, p).intervals == {}
    chosen = fc.summary(y, p, intervals=["cdl", "ece"], n_sub=100)
    assert list(chosen.intervals) == ["cdl", "ece"]
    with pytest.raises(ValueError, match="intervals"):
        fc.summary(y, p, intervals="always")
    with pytest.raises(ValueError, match="metric"):
        fc.summary(y, p, intervals=["nope"])


@pytest.mark.parametrize("cold", [True, False])
def test_the_report_is_the_same_with_its_intervals_begun_early_or_late(cold, monkeypatch):
    """A warm cache begins the intervals' subsamples on the helper thread before the measures, a
    cold one after them (the order the prefetch helper plans for): the same report, bit for bit,
    and the same as fastcdl.intervals; the note about rough intervals either way."""
    import importlib

    report = importlib.import_module("fastcdl.summary")  # the module (fastcdl.summary is the function)
    rng = np.random.default_rng(21)
    p = rng.random(600)
    y = (rng.random(600) < p).astype(int)
    monkeypatch.setattr(report, "cache_cold", lambda: cold)
    began = []
    real = fc.uncertainty.begin_intervals
    monkeypatch.setattr(fc.uncertainty, "begin_intervals", lambda *a, **k: began.append(k["now"]) or real(*a, **k))
    with pytest.warns(fc.CoverageWarning, match="rough ranges"):
        s = fc.summary(y, p, n_sub=100, seed=2)
    assert began == [not cold]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.CoverageWarning)
        want = fc.intervals(list(s.intervals), fc.bucket_stats(y, p), n_sub=100, seed=2)
    assert s.interval_note is not None and s.interval_note.startswith("intervals: at 600 rounds")
    for key, iv in s.intervals.items():
        assert (iv.value, iv.estimate, iv.lo, iv.hi) == (
            want[key].value,
            want[key].estimate,
            want[key].lo,
            want[key].hi,
        )
        assert np.array_equal(iv.subsamples, want[key].subsamples), key


def test_a_report_that_fails_stops_its_intervals(monkeypatch):
    """The intervals' subsamples begun on the helper thread stop when a measure of the report
    raises: the error reaches the caller, and the helper takes no new subsample after it."""
    import time

    import importlib

    from fastcdl import _parallel

    monkeypatch.setattr(importlib.import_module("fastcdl.summary"), "cache_cold", lambda: False)
    started = []
    real = _parallel.share_started

    def counted(n, take, work):
        return real(n, take, lambda i, x: started.append(i) or time.sleep(0.02) or work(i, x))

    monkeypatch.setattr(fc.uncertainty, "share_started", counted)

    def fails(st):  # once the helper has begun (it may be compiling the subsample kernels first)
        deadline = time.monotonic() + 120
        while not started and time.monotonic() < deadline:
            time.sleep(0.005)
        return 1 / 0

    monkeypatch.setattr(fc.exact, "ucal", fails)  # the registry looks it up when called
    rng = np.random.default_rng(22)
    p = rng.random(2000)
    y = (rng.random(2000) < p).astype(int)
    with pytest.raises(ZeroDivisionError):
        fc.summary(y, p, n_sub=400, seed=1)
    stopped = len(started)
    time.sleep(0.2)
    assert 0 < stopped < 100 and len(started) == stopped


def test_continuous_scores_get_intervals_and_the_binned_ece_by_default():
    y, p = _data(T=6000)
    s = fc.summary(y, p)
    assert s.sparse and set(s.intervals) >= {"cdl_monotone", "smce", "cutoff_ce"} and s.interval_note is None
    st = fc.bucket_stats(y, p).rebin("auto", strategy="quantile")
    assert s.ece_quantile == fc.ece(st) and s.ece_quantile_bins == st.n_buckets
    assert fc.summary(y, p, intervals=False).intervals == {}


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="y_prob"):
        fc.summary([0, 1], [0.5, 1.5])


def test_cli_json_is_the_summary(tmp_path, capsys):
    y, p = _data(distinct=12, T=60)
    f = tmp_path / "f.csv"
    f.write_text("y,p\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(y, p)))
    assert main(["metrics", str(f), "--json"]) == 0
    printed = capsys.readouterr().out
    # the command line prints the library's report: the same JSON for the arrays, the file, its path
    assert printed == fc.summary(y, p).to_json() + "\n"
    assert printed == fc.summary(str(f)).to_json() + "\n" == fc.summary(read_file(f)).to_json() + "\n"
    assert main(["metrics", str(f)]) == 0
    assert capsys.readouterr().out == fc.summary(y, p).to_text(str(f))


def _k_class(seed=5, T=900, continuous=False):
    rng = np.random.default_rng(seed)
    if continuous:
        P = rng.dirichlet([2.0, 2.0, 2.0], T)
    else:
        rows = np.array([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.4, 0.4, 0.2]])
        P = rows[rng.integers(0, 4, T)]
    y = (rng.random(T)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, 2)
    return y, P


def _k_class_file(path, y, P):
    lines = ["y,0,1,2"] + [f"{a}," + ",".join(repr(float(v)) for v in row) for a, row in zip(y, P)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("how", ["classwise", "top-label"])
def test_k_class_report_is_what_the_command_line_prints(tmp_path, capsys, how, continuous):
    """fc.summary of k-class arrays, of the file and of its path equals `fastcdl metrics --json`
    of the file (the file's columns named 0, 1, 2 as arrays' classes are), and the text too."""
    y, P = _k_class(continuous=continuous)
    f = _k_class_file(tmp_path / "k.csv", y, P)
    assert main(["metrics", f, "--p-cols", "0,1,2", "--multiclass", how, "--json"]) == 0
    printed = capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.CoverageWarning)
        arrays = fc.summary(y, P, multiclass=how)
        filed = fc.summary(read_file(f, p_cols="0,1,2", multiclass=how))
    assert printed == arrays.to_json() + "\n" == filed.to_json() + "\n"
    out = json.loads(printed)
    assert out["multiclass"] == how and out["classes"] == ["0", "1", "2"]
    if continuous:  # 900 distinct rows: more than lp_rows, and every score its own bucket
        assert out["cdl_multiclass"] is None and arrays.sparse
    else:
        assert out["cdl_multiclass"] == pytest.approx(fc.cdl_multiclass(y, P), abs=1e-12)
    if how == "classwise":
        assert isinstance(arrays, fc.ClasswiseSummary) and len(arrays.per_class) == 3
        for j, s in enumerate(arrays.per_class):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", fc.SampleSizeWarning)
                assert s["cdl"] == fc.cdl(y == j, P[:, j]) and s["ece"] == fc.ece(y == j, P[:, j])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fc.SampleSizeWarning)
            mean_ece = float(fc.ece(y, P, multiclass="classwise"))
        assert out["mean"]["ece"] == pytest.approx(mean_ece, abs=1e-15)
        assert (out["per_class"][0]["intervals"] is not None) == continuous
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fc.SampleSizeWarning)
            assert arrays["cdl"] == fc.cdl(y, P, multiclass="top-label")
    assert main(["metrics", f, "--p-cols", "0,1,2", "--multiclass", how]) == 0
    assert capsys.readouterr().out == arrays.to_text(f)


def test_binary_predict_proba_and_pos_label():
    """A (T, 2) predict_proba output is binary (its column 1); pos_label names the positive label."""
    y, p = _data(distinct=12)
    want = fc.summary(y, p)
    assert fc.summary(y, np.column_stack([1 - p, p])).to_json() == want.to_json()
    labels = np.where(y == 1, "yes", "no")
    assert fc.summary(labels, p, pos_label="yes").to_json() == want.to_json()


def test_what_a_file_does_not_take_is_refused(tmp_path):
    y, p = _data(distinct=12, T=60)
    f = tmp_path / "f.csv"
    f.write_text("y,p\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(y, p)))
    with pytest.raises(ValueError, match="y_prob is not accepted with a file's path"):
        fc.summary(str(f), p)
    with pytest.raises(ValueError, match="bins is not accepted with a FileStats"):
        fc.summary(read_file(f), bins=10)
    with pytest.raises(ValueError, match="lp_rows must be an integer >= 0"):
        fc.summary(y, p, lp_rows=-1)


def test_worst_task_states_payoffs_from_the_kinks_as_printed():
    """Kinks 0 and 0.6: float arithmetic gives the weight 1/3 as 0.33333333333333326; the
    report states it exactly from the kinks' decimals, rounded once, and the JSON says so."""
    y = [0, 0, 1, 1, 1, 0, 1, 1]
    p = [0.2, 0.2, 0.6, 0.6, 0.6, 0.9, 0.9, 0.9]
    rep = fc.cdl_report(y, p)
    assert rep.kinks.tolist() == [0.0, 0.6] and rep.weights[0] != 1 / 3  # the float computation
    t = fc.summary(y, p).worst_task
    assert t.weights == (1 / 3, 5 / 3) and t.payoff[0] == (1.0, 1 / 3)
    assert "0.33333333333333326" not in fc.summary(y, p).to_json()
    # the stated entries are the float task's to an ulp or two, and attain the same gain
    # through the ordered task whose ulps break the ties
    np.testing.assert_allclose(rep.stated_task()[0], rep.ordered_task()[0], rtol=0, atol=4e-16)


@pytest.mark.parametrize("seed", range(5))
def test_stated_actions_are_the_rational_task_rounded_once(seed):
    from fractions import Fraction

    from fastcdl._decisions.certificate import stated_actions

    rng = np.random.default_rng(seed)
    a, b = sorted(rng.choice(np.arange(0, 101), 2, replace=False) / 100)
    if not (a <= 0.5 <= b):
        a, b = min(a, 0.5 - 0.01), max(b, 0.5 + 0.01)
    rows, (c1, c2) = stated_actions(a, b)
    m1, m2 = Fraction(repr(float(a))), Fraction(repr(float(b)))
    w1, w2 = (2 * m2 - 1) / (m2 - m1), (1 - 2 * m1) / (m2 - m1)
    assert (c1, c2) == (float(w1), float(w2))
    assert rows[1] == [float(min(1, w2 * m2)), float(min(1, w1 * (1 - m1)))]
    assert rows[0] == [1.0, 0.0] and rows[2] == [0.0, 1.0]


def test_text_says_what_a_debiased_value_below_0_means():
    rng = np.random.default_rng(0)  # a calibrated model: several debiased estimates fall below 0
    p = rng.random(6000)
    y = rng.random(6000) < p
    s = fc.summary(y, p)
    below = [k for k, iv in s.intervals.items() if iv.estimate < 0]
    assert {"cutoff_ce", "smce"} <= set(below) and all(s.intervals[k].lo == 0.0 for k in below)
    (line,) = [ln for ln in s.to_text().splitlines() if ln.startswith("debiased values below 0")]
    assert "(cutCE, smCE, ATB)" in line and "cannot tell the measure from 0" in line


def test_text_says_why_the_cutoff_interval_and_test_can_disagree():
    rng = np.random.default_rng(0)  # the 100,000 scores of the startup benchmark
    p = rng.random(100_000)
    y = rng.random(100_000) < p
    s = fc.summary(y, p)
    cut = s.intervals["cutoff_ce"]
    assert cut.lo > 0 and s.cutoff_ce_p_value > 0.05  # the interval excludes 0, the test does not reject
    text = s.to_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("cutCE: its interval excludes 0")]
    assert f"p = {s.cutoff_ce_p_value:.4g}" in line and "read the test" in line
    assert "debiased values below 0" not in text


def test_atb_rows_show_the_unbiased_estimate_and_its_interval():
    """ATB's debiased estimate is atb_unbiased (its entry's debiased_by): the repr and the text
    show it on ATB's row, as every other estimator's row shows its own."""
    rng = np.random.default_rng(3)
    p = rng.random(6000)
    y = rng.random(6000) < p
    s = fc.summary(y, p)
    iv = s.intervals["atb_unbiased"]
    (row,) = [ln for ln in repr(s).splitlines() if ln.lstrip().startswith("ATB ")]
    assert f"debiased {iv.estimate:.4g} [{iv.lo:.4g}, {iv.hi:.4g}]" in row
    (line,) = [ln for ln in s.to_text().splitlines() if ln.lstrip().startswith("ATB ")]
    assert f"{iv.estimate:.4g}" in line and f"{iv.hi:.4g}]" in line


def test_the_report_computes_the_worst_task_once_per_table(monkeypatch):
    """The summary's worst task takes one cdl_report; VCDL's kink (an extra of the registry)
    comes from the fused kernel, equal to the report's."""
    import fastcdl.exact as exact

    calls = []
    real = exact.cdl_report
    monkeypatch.setattr(exact, "cdl_report", lambda st: calls.append(st) or real(st))
    y, p = _data(distinct=12)
    s = fc.summary(y, p)
    assert len(calls) == 1 and s.vcdl_kink == real(fc.bucket_stats(y, p)).vcdl_kink
    s.worst_task, s.to_dict()
    assert len(calls) == 1


def test_continuous_scores_get_their_worst_task_on_first_use(monkeypatch):
    """The report of continuous scores does not show the worst task, so it is not computed
    (no cdl_report, none of its kernels compiled) until read; then it is the task of the
    eager report, computed once, and the Summary still pickles and compares."""
    import pickle

    import fastcdl.exact as exact

    calls = []
    real = exact.cdl_report
    monkeypatch.setattr(exact, "cdl_report", lambda st: calls.append(st) or real(st))
    y, p = _data(T=3000)
    s = fc.summary(y, p, intervals=False)
    assert s.sparse and not calls
    text = s.to_text()
    assert "worst decision task: not shown" in text and not calls
    again = pickle.loads(pickle.dumps(s))
    task = s.worst_task
    assert len(calls) == 1 and s.worst_task is task and s.to_dict()["worst_task"] == task.to_dict()
    assert len(calls) == 1 and again.worst_task == task
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        rep = real(fc.bucket_stats(y, p))
    assert task.kinks == tuple(float(k) for k in rep.kinks) and s.vcdl_kink == rep.vcdl_kink
    assert again == s
