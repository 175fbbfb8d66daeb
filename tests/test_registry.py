"""The test registry (tests/reference.py REGISTRY) holds a reference for every measure of
fastcdl.measures (the one place a measure is declared) and every public metric, every
measure agrees with its reference on random tables, and the names bootstrap and
calibration_test accept (fastcdl.uncertainty.METRICS) and the command line's JSON are the
registry's.

The sample estimators other than smce are deliberately not trial metrics
(fastcdl.trial_measures). The trial metrics added after the stores were filled (smce, klcal,
the pseudo measures, the proper losses brier and log_loss) are functions of the stored tables and stay out of the trials' keys
(fastcdl.online.versions), so adding them re-keys no stored trial."""

import json
from pathlib import Path
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
    "smece",
    "intce",
    "ici",
    "corp",
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
    assert got == want or abs(got - want) <= entry["tol"], (key, got, want)  # == for inf (log loss)


def test_trial_metrics_are_unchanged():
    from fastcdl.online.versions import algorithm_version
    from fastcdl.trial_measures import METRICS

    assert list(METRICS) == [
        "cdl",
        "vcdl",
        "ece",
        "k2",
        "ucal",
        "brier",
        "log_loss",
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
    got = getattr(got, "value", got)  # a result object (fc.ici, fc.corp): its value
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


_DUMMY = r'''
import contextlib, dataclasses, io, json, pathlib, sqlite3, sys, tempfile

import numpy as np

import fastcdl as fc
from fastcdl.measures import Measure, register


def mean_prediction(st):
    """A dummy measure: the mean prediction of the table."""
    return float((st.values * st.counts).sum() / st.counts.sum())


# the one place a measure is added: its entry (before the trial metrics are made from the registry)
register(Measure("dummy", "DUMMY", "the mean prediction (a dummy)", mean_prediction, trial_columns=("dummy",), in_trial_key=False))
out = {}
rng = np.random.default_rng(0)
p = rng.choice([0.2, 0.5, 0.8], 300)
y = (rng.random(300) < p).astype(int)
want = mean_prediction(fc.bucket_stats(y, p))
s = fc.summary(y, p)
out["report"] = s.to_dict()["dummy"] == want and "DUMMY" in s.to_text()
folder = pathlib.Path(tempfile.mkdtemp())
f = folder / "f.csv"
f.write_text("y,p\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(y, p)))
from fastcdl.cli import main

for argv, key in ((["metrics", str(f), "--json"], "cli_json"), (["metrics", str(f)], "cli_text")):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(argv)
    out[key] = json.loads(buf.getvalue())["dummy"] == want if key == "cli_json" else "DUMMY" in buf.getvalue()
out["interval"] = fc.interval("dummy", y, p, seed=1).value == want
from fastcdl.trial_measures import METRICS, compute_all

out["trial_columns"] = METRICS["dummy"].columns == ("dummy",) and compute_all(fc.bucket_stats(y, p), ["dummy"])["dummy"] == want
from fastcdl.experiments import load_preset, override, run

preset = override(load_preset("quick"), forecasters=["kt"], adversaries=["bernoulli"], t_min=16, t_max=32, seeds=2)
run_dir = folder / "run"
run(dataclasses.replace(preset, metrics=("dummy", "cdl")), run_dir, workers=1, progress=False)
with sqlite3.connect(run_dir / "trials.sqlite") as con:
    stored = [r[0] for r in con.execute("SELECT dummy FROM trials")]
out["store"] = len(stored) == 4 and all(v is not None and 0 < v < 1 for v in stored)
from fastcdl.experiments.run_figures import _read_run, _rate_figures, _shown

rows, seed = _read_run(run_dir)
figures = _rate_figures(rows, seed, _shown(run_dir))
labels = [t.get_text() for _, fig in figures for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
out["plots"] = any("DUMMY" in t for t in labels)
sys.path.insert(0, "asv_bench")
from benchmarks import measures as asv_measures  # as asv imports the suite: a package

out["asv"] = "dummy" in asv_measures.MeasureSuite.params[1]
print(json.dumps(out))
'''


def test_a_measure_added_in_one_place_reaches_every_consumer(tmp_path):
    """A dummy measure registered in one call (fastcdl.measures.register, an entry as any other)
    is in the report and its words, the command line's JSON and text, the interval's names, the
    trial metrics and the store's columns of a run, the rate plots' legend and the asv suite,
    with no other edit anywhere (in a fresh process, so that the registry is not changed here)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", _DUMMY], cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == dict.fromkeys(
        ["report", "cli_json", "cli_text", "interval", "trial_columns", "store", "plots", "asv"], True
    ), got


@pytest.mark.parametrize("key, module, func", [("ici", "ici", "ici"), ("corp", "corp", "corp")])
def test_a_measures_extras_compute_its_result_once_per_table(key, module, func, monkeypatch):
    """The report's value and extras of ICI (E50, E90, Emax) and CORP (DSC, UNC, Brier) read one
    result per table: the scorer runs once for a table, and again for another one."""
    import importlib

    mod = importlib.import_module(f"fastcdl.{module}")
    calls = []
    original = getattr(mod, func)
    monkeypatch.setattr(mod, func, lambda st: calls.append(st) or original(st))
    rng = np.random.default_rng(5)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    st = fc.bucket_stats(y, p)
    m = MEASURES[key]
    value, extras = m(st), m.extras_of(st)
    direct = original(st)
    assert value == direct.value and len(calls) == 1
    assert extras == {name: float(getattr(direct, name.split("_", 1)[1])) for name, _ in m.extras}
    m.extras_of(fc.bucket_stats(y[:200], p[:200]))
    assert len(calls) == 2


def test_last_table_keeps_one_table_per_thread():
    """LastTable: the values of the last table by key, dropped for a new table, one entry per thread."""
    import threading

    from fastcdl._tables.last_table import LastTable

    memo = LastTable()
    a, b = fc.BucketStats.from_table([0.5], [2], [1]), fc.BucketStats.from_table([0.5], [2], [1])
    memo.put(a, "x", 1.0)
    memo.put(a, "y", 2.0)
    assert (memo.get(a, "x"), memo.get(a, "y"), memo.get(b, "x")) == (1.0, 2.0, None)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(memo.get(a, "x")))
    thread.start()
    thread.join()
    assert seen == [None]  # another thread has its own entry
    memo.put(b, "x", 3.0)
    assert (memo.get(a, "x"), memo.get(b, "x"), memo.get(b, "y")) == (None, 3.0, None)
