"""`fastcdl metrics` on continuous scores: the one-line advice, the sample estimators in text and
JSON, --bins auto and --strategy quantile; through the command line's entry point."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fastcdl as fc
from fastcdl.cli import main


def _csv(path, y, p, w=None):
    head = "y,p" + (",w" if w is not None else "")
    rows = (
        f"{int(a)},{float(b)!r}" + (f",{float(c)!r}" if w is not None else "")
        for a, b, c in zip(y, p, w if w is not None else p)
    )
    path.write_text(head + "\n" + "\n".join(rows) + "\n")
    return str(path)


@pytest.fixture
def continuous(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.random(1500)
    y = rng.random(1500) < p
    return _csv(tmp_path / "scores.csv", y, p), y, p


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        return f(*a, **k)


def test_continuous_scores_get_the_advice_and_the_sample_estimators(continuous, capsys):
    path, y, p = continuous
    assert main(["metrics", path]) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert captured.err == ""  # no Python warning text: the advice is one line of the report
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "100% of the rounds sit in buckets of one round" in notes[0]
    assert "--bins auto --strategy quantile" in notes[0]
    assert f"{fc.cdl_monotone(y, p):.4g}" in text and f"{fc.smce(y, p):.4g}" in text
    test = fc.cutoff_ce_test(y, p)
    assert f"{test.value:.4g}" in text and f"p = {test.p_value:.4g}" in text
    assert f"{fc.atb(y, p):.4g}" in text
    assert "worst decision task: not shown" in text and "gains it" not in text


def test_a_p_value_that_underflows_prints_as_a_bound(tmp_path, capsys):
    # 10^4 rounds at 0.9 of which 10 happen: the statistic is about 300, far beyond where the
    # range law's tail underflows (about 38.5); the text gives a bound, never "p = 0"
    p = np.full(10_000, 0.9)
    y = np.arange(10_000) < 10
    assert fc.cutoff_ce_test(y, p).p_value == 0.0
    path = _csv(tmp_path / "overconfident.csv", y, p)
    assert main(["metrics", path, "--estimators"]) == 0
    text = capsys.readouterr().out
    (line,) = [ln for ln in text.splitlines() if ln.lstrip().startswith("cutCE")]
    assert "p < 1e-300 for perfect calibration" in line and "p = 0" not in text
    assert main(["metrics", _csv(tmp_path / "fair.csv", y, np.full(10_000, 0.001)), "--estimators"]) == 0
    test = fc.cutoff_ce_test(y, np.full(10_000, 0.001))
    assert 1e-300 < test.p_value and f"p = {test.p_value:.4g} for perfect" in capsys.readouterr().out


def test_json_has_the_new_metrics(continuous, capsys):
    path, y, p = continuous
    assert main(["metrics", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = {
        "cdl_monotone": fc.cdl_monotone,
        "vcdl_monotone": fc.vcdl_monotone,
        "cutoff_ce": fc.cutoff_ce,
        "smce": fc.smce,
        "atb": fc.atb,
        "atb_unbiased": fc.atb_unbiased,
        "mce": fc.mce,
        "rmsce": fc.rmsce,
        "brier": fc.brier,
    }
    for key, f in want.items():
        assert out[key] == pytest.approx(_quiet(f, y, p), rel=1e-12, abs=1e-15), key
    assert out["cutoff_ce_p_value"] == pytest.approx(fc.cutoff_ce_test(y, p).p_value, rel=1e-12)
    assert out["one_round_share"] == 1.0 and out["advice"].startswith("100%")
    assert out["cdl"] == pytest.approx(_quiet(fc.cdl, y, p), abs=1e-15)


def test_grid_forecasts_keep_the_exact_report(tmp_path, capsys):
    rng = np.random.default_rng(1)
    p = rng.integers(0, 11, 800) / 10
    y = rng.random(800) < p
    path = _csv(tmp_path / "grid.csv", y, p)
    assert main(["metrics", path]) == 0
    text = capsys.readouterr().out
    assert "note:" not in text and "sample estimators" not in text and "gains it" in text
    assert main(["metrics", path, "--estimators"]) == 0
    assert f"{fc.cdl_monotone(y, p):.4g}" in capsys.readouterr().out
    assert main(["metrics", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["advice"] is None and out["one_round_share"] == 0.0
    assert out["cdl_monotone"] == pytest.approx(fc.cdl_monotone(y, p), abs=1e-15)


def test_quantile_bins_and_auto_on_the_command_line(tmp_path, capsys):
    p = np.repeat([0.05, 0.2, 0.4, 0.6, 0.95], [100, 100, 600, 100, 100])
    y = np.arange(p.shape[0]) % 3 == 0
    path = _csv(tmp_path / "tree.csv", y, p)
    assert main(["metrics", path, "--bins", "10", "--strategy", "quantile"]) == 0
    text = capsys.readouterr().out
    assert "(5 equal-mass bins, 10 asked (tied predictions))" in text
    assert f"{fc.ece(y, p, bins=10, strategy='quantile'):.4g}" in text
    assert main(["metrics", path, "--bins", "auto", "--strategy", "quantile", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bins"]["made"] == 5 and out["bins"]["asked"] == "auto" and out["bins"]["strategy"] == "quantile"
    assert out["ece"] == pytest.approx(fc.ece(y, p, bins="auto", strategy="quantile"), abs=1e-15)
    assert main(["metrics", path, "--bins", "auto", "--json"]) == 0  # round(1000^(1/3)) = 10 equal-width bins
    assert json.loads(capsys.readouterr().out)["bins"]["made"] == 10


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--strategy", "quantile"], "--strategy quantile needs --bins M or --bins auto"),
        (["--bins", "many"], "bins must be a positive integer or auto"),
        (["--strategy", "equal"], "invalid choice: 'equal'"),
    ],
)
def test_bad_binning_options_exit_2_with_one_line(continuous, capsys, argv, needle):
    path, _, _ = continuous
    try:
        status = main(["metrics", path, *argv])
    except SystemExit as e:  # argparse's errors
        status = e.code
    assert status == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_python_dash_m_json_on_continuous_scores(continuous):
    path, y, p = continuous
    r = subprocess.run(
        [sys.executable, "-m", "fastcdl", "metrics", path, "--json"], capture_output=True, text=True, check=True
    )
    out = json.loads(r.stdout)
    assert r.stderr == ""
    assert out["smce"] == pytest.approx(fc.smce(y, p), rel=1e-12)


def _lines(text, start, stop):
    lines = text.splitlines()
    a = next(i for i, ln in enumerate(lines) if ln.startswith(start))
    b = next(i for i, ln in enumerate(lines) if ln.startswith(stop))
    return lines[a:b]


def test_continuous_scores_lead_with_debiased_estimates_and_intervals(tmp_path, capsys):
    """Every score its own bucket: the sample estimators come first, each with its debiased
    estimate and 95% interval (fastcdl.interval, seed 0), then the binned ECE with its bins
    named, and the exact-bucket numbers after, labelled as noise. 6000 rounds: no note that
    the intervals are rough."""
    rng = np.random.default_rng(3)
    p = rng.random(6000)
    y = rng.random(6000) < np.clip(p + 0.1 * (p - 0.5), 0, 1)
    path = _csv(tmp_path / "scores.csv", y, p)
    assert main(["metrics", path]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    first_sample = next(i for i, ln in enumerate(lines) if ln.startswith("sample estimators"))
    first_exact = next(i for i, ln in enumerate(lines) if ln.startswith("exact-bucket numbers"))
    ece_line = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ECE "))
    assert first_sample < first_exact < ece_line
    assert "debiased with 95% intervals" in lines[first_sample]
    assert "rough ranges" not in text
    block = _lines(text, "sample estimators", "exact-bucket numbers")
    for name, key in (("CDL_M", "cdl_monotone"), ("cutCE", "cutoff_ce"), ("smCE", "smce")):
        r = fc.interval(key, y, p, seed=0)
        (line,) = [ln for ln in block if ln.lstrip().startswith(name + " ")]
        assert f"{r.estimate:.4g}" in line and f"{r.hi:.4g}" in line
    r = fc.interval("atb_unbiased", y, p, seed=0)
    (line,) = [ln for ln in block if ln.lstrip().startswith("ATB ")]
    assert f"{fc.atb(y, p):.4g}" in line and f"{r.estimate:.4g}" in line
    st = fc.bucket_stats(y, p).rebin("auto", strategy="quantile")
    (line,) = [ln for ln in block if ln.lstrip().startswith("ECE_q")]
    assert f"{fc.ece(st):.4g}" in line and f"over {st.n_buckets} equal-mass bins" in line
    assert main(["metrics", path, "--json", "--level", "0.9"]) == 0
    out = json.loads(capsys.readouterr().out)
    r = fc.interval("cdl_monotone", y, p, level=0.9, seed=0)
    got = out["intervals"]["cdl_monotone"]
    assert (got["estimate"], got["lo"], got["hi"], got["level"]) == (r.estimate, r.lo, r.hi, 0.9)
    assert got["validated"] is True and set(out["intervals"]) == {
        k for k, m in fc.MEASURES.items() if m.cli_interval
    } >= {
        "cdl_monotone",
        "vcdl_monotone",
        "cutoff_ce",
        "smce",
        "atb_unbiased",
    }
    assert out["ece_quantile"] == pytest.approx(fc.ece(st), abs=1e-15) and out["ece_quantile_bins"] == st.n_buckets


def test_small_continuous_files_say_their_intervals_are_rough(continuous, capsys):
    path, y, p = continuous  # 1500 rounds
    assert main(["metrics", path]) == 0
    text = capsys.readouterr().out
    assert "intervals: at 1500 rounds read them as rough ranges" in text


def test_ci_on_repeated_predictions_and_level_checked(tmp_path, capsys):
    rng = np.random.default_rng(1)
    p = rng.integers(0, 11, 800) / 10
    y = rng.random(800) < p
    path = _csv(tmp_path / "grid.csv", y, p)
    assert main(["metrics", path, "--ci"]) == 0
    text = capsys.readouterr().out
    assert "gains it" in text and "debiased with 95% intervals" in text
    assert "intervals: at 800 rounds read them as rough ranges" in text
    with pytest.warns(fc.CoverageWarning):
        r = fc.interval("smce", y, p, seed=0)
    assert f"{r.estimate:.4g}" in text
    for bad in ("1", "0", "x"):
        with pytest.raises(SystemExit) as e:
            main(["metrics", path, "--ci", "--level", bad])
        assert e.value.code == 2
    assert "level must lie strictly between 0 and 1" in capsys.readouterr().err


def test_no_ci_leaves_the_intervals_out(continuous, capsys):
    path, y, p = continuous
    assert main(["metrics", path, "--no-ci", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["intervals"] is None and out["cdl_monotone"] == pytest.approx(fc.cdl_monotone(y, p), abs=1e-15)
    assert main(["metrics", path, "--no-ci"]) == 0
    text = capsys.readouterr().out
    assert "debiased" not in text and "rough ranges" not in text
    assert text.index("sample estimators") < text.index("exact-bucket numbers")


def _classwise_file(path, T=6000, seed=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([2.0, 2.0, 2.0], T)
    truth = 0.8 * P + 0.2 / 3  # underconfident in every class
    y = (rng.random(T)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, 2)
    lines = ["y,p0,p1,p2"] + [f"{a},{b[0]!r},{b[1]!r},{b[2]!r}" for a, b in zip(y.tolist(), P.tolist())]
    path.write_text("\n".join(lines) + "\n")
    return str(path), y, P


def test_classwise_intervals_per_class_in_text_and_json(tmp_path, capsys):
    """--multiclass classwise --ci: each class's binary problem (y = class against its column)
    gets fastcdl.interval's debiased estimate and interval for every estimator the CLI gives
    intervals for, in the JSON under per_class and in the text one line per (class, estimator)."""
    path, y, P = _classwise_file(tmp_path / "mc.csv")
    assert main(["metrics", path, "--multiclass", "classwise", "--ci", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for j, row in enumerate(out["per_class"]):
        assert set(row["intervals"]) == {k for k, m in fc.MEASURES.items() if m.cli_interval}
        for key in ("cdl_monotone", "smce"):
            r = fc.interval(key, (y == j).astype(int), P[:, j], seed=0)
            got = row["intervals"][key]
            assert (got["estimate"], got["lo"], got["hi"], got["level"]) == (r.estimate, r.lo, r.hi, 0.95)
    assert main(["metrics", path, "--multiclass", "classwise", "--ci", "--level", "0.9"]) == 0
    text = capsys.readouterr().out
    block = text[text.index("class-wise sample estimators, debiased with 90% intervals") :]
    r = fc.interval("vcdl_monotone", (y == 1).astype(int), P[:, 1], level=0.9, seed=0)
    (line,) = [ln for ln in block.splitlines() if ln.split()[:2] == ["p1", "VCDL_M"]]
    assert f"{r.estimate:.4g}" in line and f"[{r.lo:.4g}, {r.hi:.4g}]" in line


def test_classwise_intervals_follow_ci_and_no_ci(tmp_path, capsys):
    path, y, P = _classwise_file(tmp_path / "mc.csv", T=1200)
    # continuous scores: intervals by default, with the note that they are rough at 1200 rounds, once
    assert main(["metrics", path, "--multiclass", "classwise"]) == 0
    text = capsys.readouterr().out
    assert "class-wise sample estimators" in text and text.count("read them as rough ranges") == 1
    assert main(["metrics", path, "--multiclass", "classwise", "--no-ci", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(row["intervals"] is None for row in out["per_class"])
    # repeated predictions: none unless asked
    grid = tmp_path / "grid.csv"
    grid.write_text("y,p0,p1,p2\n" + "0,0.5,0.25,0.25\n1,0.2,0.6,0.2\n2,0.1,0.1,0.8\n" * 40)
    assert main(["metrics", str(grid), "--multiclass", "classwise", "--json"]) == 0
    assert all(row["intervals"] is None for row in json.loads(capsys.readouterr().out)["per_class"])
    assert main(["metrics", str(grid), "--multiclass", "classwise", "--ci", "--json"]) == 0
    assert all(row["intervals"] for row in json.loads(capsys.readouterr().out)["per_class"])


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--ci", "--no-ci"], "--ci and --no-ci contradict each other"),
        (["--ci", "--level", "1.5"], "level must lie strictly between 0 and 1"),
        (["--ci", "--level", "0"], "level must lie strictly between 0 and 1"),
    ],
)
def test_classwise_bad_interval_options_exit_2_with_one_line(tmp_path, capsys, argv, needle):
    path, _, _ = _classwise_file(tmp_path / "mc.csv", T=300)
    try:  # argparse's checks exit, the command's return
        code = main(["metrics", path, "--multiclass", "classwise", *argv])
    except SystemExit as e:
        code = e.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
