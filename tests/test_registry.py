"""The test registry (tests/reference.py REGISTRY) holds a reference for every measure of
fastcdl.measures (the one place a measure is declared) and every public metric, every
measure agrees with its reference on random tables, and the names bootstrap and
calibration_test accept (fastcdl.uncertainty.METRICS) and the command line's JSON are the
registry's.

The sample estimators other than smce are deliberately not trial metrics
(fastcdl.trial_metrics). The trial metrics added after the stores were filled (smce, klcal,
the pseudo measures) are functions of the stored tables and stay out of the trials' keys
(fastcdl.online.versions), so adding them re-keys no stored trial."""

import json
import warnings

import numpy as np
import pytest

import fastcdl as fc
from fastcdl.measures import MEASURES, TABLE_MEASURES
from fastcdl.uncertainty import METRICS as NAMED
from reference import REGISTRY, table_ref

SAMPLE = (
    "cdl_monotone",
    "vcdl_monotone",
    "cutoff_ce",
    "atb",
    "atb_unbiased",
    "smce",
    "mce",
    "rmsce",
    "brier",
    "k2_debiased",
    "ece_sweep",
    "cdl_monotone_crossfit",
    "vcdl_monotone_crossfit",
)


def test_every_named_metric_has_a_reference():
    assert set(MEASURES) <= set(REGISTRY)
    assert NAMED == tuple(TABLE_MEASURES)
    assert set(SAMPLE) <= set(NAMED)
    assert {m.key for m in MEASURES.values() if m.sample} <= set(SAMPLE)


@pytest.mark.parametrize("key", list(MEASURES))
@pytest.mark.parametrize("seed", range(3))
def test_every_measure_agrees_with_its_reference(key, seed):
    """Each measure's function of a table (fastcdl.measures) against the reference written
    from its definition, on a table with ties at 0, 1/2 and 1."""
    rng = np.random.default_rng(100 + seed)
    T = 11
    p = rng.choice([0.0, 0.125, 0.5, 0.5, 0.7, 0.9, 1.0, rng.random()], T)
    y = (rng.random(T) < p).astype(int)
    entry, m = REGISTRY[key], MEASURES[key]
    st = fc.bucket_stats(y, p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        got = m(st)
    if entry["input"] == "rounds":
        want = entry["reference"](y, p)
    else:
        q, n, s, _, _ = table_ref(y, p)
        want = entry["reference"](q, n, s)
    assert abs(got - want) <= entry["tol"], (key, got, want)


def test_trial_metrics_are_unchanged():
    from fastcdl.online.versions import algorithm_version
    from fastcdl.trial_metrics import METRICS

    assert list(METRICS) == [
        "cdl",
        "vcdl",
        "ece",
        "k2",
        "ucal",
        "smce",
        "klcal",
        "pseudo_ece",
        "pseudo_k2",
        "pseudo_klcal",
        "pseudo_cdl",
    ]
    assert [k for k, m in METRICS.items() if m.in_key] == ["cdl", "vcdl", "ece", "k2", "ucal"]
    # the metrics' part of every trial's version string (forecasters may be bumped on their own): the
    # measures added since (functions of the stored tables) are not in it, so no stored trial is re-keyed
    assert algorithm_version("cdl", "greedy").endswith(" metrics=cdl/1,ece/1,k2/1,ucal/1,vcdl/1")


@pytest.mark.parametrize("name", SAMPLE)
@pytest.mark.parametrize("seed", range(4))
def test_sample_entries_agree_with_fastcdl(name, seed):
    rng = np.random.default_rng(seed)
    T = 9
    p = rng.choice([0.0, 0.125, 0.5, 0.5, 0.7, 0.9, 1.0, rng.random()], T)
    y = (rng.random(T) < p).astype(int)
    entry = REGISTRY[name]
    f = getattr(fc, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        got = f(y, p)
    if entry["input"] == "rounds":
        want = entry["reference"](y, p)
    else:
        q, n, s, _, _ = table_ref(y, p)
        want = entry["reference"](q, n, s)
    assert abs(got - want) <= entry["tol"], (name, got, want)


def test_cli_json_has_every_named_metric(tmp_path, capsys):
    from fastcdl.cli import main

    f = tmp_path / "f.csv"
    f.write_text("y,p\n0,0.2\n1,0.2\n1,0.7\n1,0.7\n0,0.9\n1,0.9\n")
    assert main(["metrics", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(NAMED) <= set(out)


def test_interval_fields_are_the_ones_interval_and_the_cli_read():
    from fastcdl.uncertainty import BIAS_RATES

    studied = [m for m in MEASURES.values() if m.studied]
    assert BIAS_RATES == {m.key: m.bias_rate for m in studied}
    assert all(m.sample for m in studied)
    rng = np.random.default_rng(1)
    p = rng.random(300)
    y = rng.random(300) < p
    with pytest.warns(fc.CoverageWarning):  # 300 rounds: rough ranges
        shown = list(fc.summary(y, p, intervals=True, n_sub=100).intervals)
    assert shown == [m.key for m in MEASURES.values() if m.cli_interval]
    # an interval the report (and the CLI) prints is one the coverage study measured
    assert set(shown) <= set(BIAS_RATES)
    assert BIAS_RATES["atb_unbiased"] is None and BIAS_RATES["atb"] == 1.0
    assert BIAS_RATES["cdl_monotone"] == (0.5, 2.0 / 3.0)


def test_every_public_function_orders_the_table_keywords_alike():
    """sample_weight, bins, strategy, n_jobs: in this order wherever a public function takes them."""
    import inspect

    order = ["sample_weight", "bins", "strategy", "n_jobs"]
    checked = 0
    for name in fc.__all__:
        obj = getattr(fc, name)
        if not callable(obj) or inspect.isclass(obj):
            continue
        params = [p for p in inspect.signature(obj).parameters if p in order]
        if len(params) >= 2:
            assert params == [p for p in order if p in params], name
            checked += 1
    assert checked >= 25
