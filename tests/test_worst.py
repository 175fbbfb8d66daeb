"""The worst-case search (fastcdl.experiments.worst): it reports the best candidate it scored,
on seeds it never scored with; it resumes without recomputing; the command line's errors."""

import json
import subprocess
import sys

import numpy as np
import pytest

from fastcdl.experiments import worst as W
from fastcdl.experiments.runner import trial_seed
from fastcdl.experiments.store import TrialStore
from fastcdl.online import simulate


def test_dim_values_span_the_box():
    d = W.Dim("p", 0.0, 1.0)
    assert (d.value(0.0), d.value(0.5), d.value(1.0)) == (0.0, 0.5, 1.0)
    lg = W.Dim("p01", 1e-3, 1.0, log=True)
    assert lg.value(0.0) == 1e-3 and lg.value(1.0) == 1.0 and lg.value(0.5) == pytest.approx(10**-1.5, rel=1e-5)
    assert d.value(1.7) == 1.0 and d.value(-3) == 0.0  # Nelder-Mead may step outside: the box's edge


def test_cycles_become_a_period_relative_to_T():
    fam = W.FAMILIES["drift"]
    p = fam.params((1.0, 0.0), 4096)
    assert p == {"amplitude": 0.5, "period": 4096 / 0.5}


def test_interval_is_the_rate_experiments_and_seeded_by_its_cell():
    from fastcdl.experiments.analysis import _cell_rng, mean_interval

    v = [0.1, 0.3, 0.2, 0.5, 0.25, 0.4, 0.35, 0.15]
    got = W.interval(v, "kt", "cdl", 1024)
    assert got == mean_interval(v, rng=_cell_rng(W.FRESH_MASTER, "worst", "kt", "cdl", 1024))
    assert got == W.interval(v, "kt", "cdl", 1024) and got[1] < np.mean(v) < got[2]


@pytest.fixture(scope="module")
def small_search(tmp_path_factory):
    path = tmp_path_factory.mktemp("worst") / "trials.sqlite"
    with TrialStore(path) as store:
        r = W.search("kt", 512, store, families=["bernoulli", "contrarian", "greedy", "rawpoint"], search_seeds=3,
                     fresh_seeds=5, n_init=4, n_refine=1, maxfev=6)
        rows = store.rows()
    return path, r, rows


def test_winner_is_the_best_scored_candidate(small_search):
    _, r, _ = small_search
    scores = [c[2] for c in r.candidates]
    assert r.search_mean == max(scores)
    assert (r.adversary, r.params) in [(c[0], c[1]) for c in r.candidates if c[2] == max(scores)]
    assert {c[3] for c in r.candidates} == {"screen", "refine"}
    # every screened family appears; families without parameters once
    assert sum(c[0] == "contrarian" for c in r.candidates) == 1
    assert sum(c[0] == "bernoulli" and c[3] == "screen" for c in r.candidates) == 4


def test_search_scores_are_means_over_the_search_seeds(small_search):
    """A candidate's score is recomputed here with simulate on trial_seed(SEARCH_MASTER, i)."""
    _, r, _ = small_search
    a, p, score, _ = max(r.candidates, key=lambda c: c[2])
    again = [simulate("kt", a, horizon=512, seed=trial_seed(W.SEARCH_MASTER, i), adversary_params=p).cdl
             for i in range(3)]
    assert float(np.mean(again)) == score


def test_winner_is_reported_on_fresh_seeds(small_search):
    _, r, rows = small_search
    fresh = {trial_seed(W.FRESH_MASTER, i) for i in range(5)}
    search = {trial_seed(W.SEARCH_MASTER, i) for i in range(3)}
    assert not fresh & search
    assert {x["seed"] for x in r.fresh} == fresh
    for x in r.fresh:
        assert x["cdl"] == simulate("kt", r.adversary, horizon=512, seed=x["seed"], adversary_params=r.params).cdl
    out = W.worst_rows(r)
    cdl = next(o for o in out if o["metric"] == "cdl")
    assert cdl["mean"] == pytest.approx(np.mean([x["cdl"] for x in r.fresh])) and cdl["n_seeds"] == 5
    assert cdl["lo"] <= cdl["mean"] <= cdl["hi"]
    assert json.loads(cdl["adversary_params"]) == r.params


def test_search_resumes_without_recomputing(small_search, monkeypatch):
    path, r, rows = small_search
    calls = []
    monkeypatch.setattr(W, "run_trial", lambda t: calls.append(t) or pytest.fail("recomputed a stored trial"))
    with TrialStore(path) as store:
        again = W.search("kt", 512, store, families=["bernoulli", "contrarian", "greedy", "rawpoint"],
                         search_seeds=3, fresh_seeds=5, n_init=4, n_refine=1, maxfev=6)
        assert len(store.rows()) == len(rows)
    assert not calls
    assert (again.adversary, again.params, again.search_mean) == (r.adversary, r.params, r.search_mean)


def test_transfer_rescales_periods_and_rescores(tmp_path):
    with TrialStore(tmp_path / "t.sqlite") as store:
        cands = [("drift", {"amplitude": 0.3, "period": 64.0}, 0.5, "screen", 256),
                 ("bernoulli", {"p": 0.4}, 0.4, "screen", 256), ("bernoulli", {"p": 0.4}, 0.3, "refine", 256)]
        r = W.transfer("kt", 1024, store, cands, top=5, search_seeds=2, fresh_seeds=3)
        assert [(c[0], c[1]) for c in r.candidates] == [("drift", {"amplitude": 0.3, "period": 256.0}),
                                                        ("bernoulli", {"p": 0.4})]
        cands += [("bernoulli", {"p": 0.3}, 0.45, "screen", 256), ("greedy", {}, 0.1, "screen", 256)]
        r1 = W.transfer("kt", 1024, store, cands, top=1, search_seeds=2, fresh_seeds=3)
    # the best overall, then the best of each other family, in order of score
    assert [(c[0], c[1]) for c in r1.candidates] == [("drift", {"amplitude": 0.3, "period": 256.0}),
                                                     ("bernoulli", {"p": 0.3}), ("greedy", {})]
    assert r.search_mean == max(c[2] for c in r.candidates)
    assert r1.search_mean == max(c[2] for c in r1.candidates)


def test_plan_validation(tmp_path):
    with pytest.raises(ValueError, match="forecaster"):
        W.WorstPlan.make(forecasters=["nope"], search_horizons=[64])
    with pytest.raises(ValueError, match="exceed"):
        W.WorstPlan.make(forecasters=["cdl"], search_horizons=[64], transfer_horizons={"cdl": [32]})
    with pytest.raises(ValueError, match="not a planned forecaster"):
        W.WorstPlan.make(forecasters=["cdl"], search_horizons=[64], transfer_horizons={"kt": [128]})
    bad = tmp_path / "p.toml"
    bad.write_text('forecasters = ["cdl"]\nsearch_horizons = ["2^6"]\nseeds = 3\n')
    with pytest.raises(ValueError, match="unknown key 'seeds'"):
        W.WorstPlan.load(str(bad))
    plan = W.WorstPlan.load("worstcase")
    assert plan.forecasters[:2] == ("cdl", "foster") and max(plan.transfer_horizons["cdl"]) >= 2**22


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "fastcdl", "worst", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args,match", [((), "give --forecaster"), (("--forecaster", "cdl"), "needs --t"),
                                        (("--forecaster", "nope", "--t", "64"), "forecaster must be one of"),
                                        (("--plan", "nope"), "unknown worst-case plan"),
                                        (("--forecaster", "cdl", "--t", "2^x"), "--t must be an integer or 2^k")])
def test_cli_errors_are_one_line(args, match):
    p = _cli(*args)
    assert p.returncode == 2 and match in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_cli_one_search(tmp_path):
    p = _cli("--forecaster", "foster", "--t", "2^7", "--search-seeds", "2", "--fresh-seeds", "3", "--workers", "1",
             "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    lines = (tmp_path / "worst.csv").read_text().splitlines()
    assert lines[0] == ",".join(W.WORST_COLUMNS) and len(lines) == 1 + 5
    assert all(line.startswith("foster,") and ",128," in line for line in lines[1:])


def test_plan_with_cross_evaluation(tmp_path):
    """run_plan: worst.csv per forecaster and horizon; cross.csv puts every forecaster against
    every winner on the fresh seeds, with paired differences (0 for the winner's own forecaster,
    whose row repeats its worst.csv mean)."""
    import csv

    plan = W.WorstPlan.make(forecasters=["kt", "foster"], search_horizons=[128], cross_horizons=[128],
                            search_seeds=2, fresh_seeds=3, n_init=2, n_refine=1, maxfev=3)
    results = W.run_plan(plan, tmp_path, workers=1, progress=False)
    worst = list(csv.DictReader((tmp_path / "worst.csv").read_text().splitlines()))
    cross = list(csv.DictReader((tmp_path / "cross.csv").read_text().splitlines()))
    assert {(w["forecaster"], w["T"]) for w in worst} == {("kt", "128"), ("foster", "128")}
    assert len(cross) == 2 * 2 * 2  # winners x forecasters x (cdl, ece)
    for c in cross:
        if c["forecaster"] == c["worst_for"]:
            assert float(c["diff_to_worst_for"]) == 0.0
            own = next(w for w in worst if w["forecaster"] == c["forecaster"] and w["metric"] == c["metric"])
            assert float(own["mean"]) == float(c["mean"])
    r = next(r for r in results if r.forecaster == "kt")
    other = [c for c in cross if c["worst_for"] == "kt" and c["forecaster"] == "foster" and c["metric"] == "cdl"][0]
    foster_rows = [simulate("foster", r.adversary, horizon=128, seed=x["seed"], adversary_params=r.params).cdl
                   for x in r.fresh]
    assert float(other["mean"]) == pytest.approx(np.mean(foster_rows), rel=1e-12)
    assert float(other["diff_to_worst_for"]) == pytest.approx(np.mean(foster_rows) - np.mean([x["cdl"] for x in r.fresh]),
                                                              rel=1e-9, abs=1e-15)


def test_plan_over_horizons_writes_slopes_and_figure(tmp_path):
    import csv

    plan = W.WorstPlan.make(forecasters=["kt"], search_horizons=[64, 128, 256, 512], transfer_horizons={"kt": [1024]},
                            search_seeds=2, fresh_seeds=3, n_init=1, n_refine=1, maxfev=2)
    W.run_plan(plan, tmp_path, workers=1, progress=False)
    slopes = list(csv.DictReader((tmp_path / "worst_slopes.csv").read_text().splitlines()))
    assert {(s["forecaster"], s["adversary"], s["metric"]) for s in slopes} == {("kt", "worst", "cdl"),
                                                                               ("kt", "worst", "ece")}
    worst = [w for w in csv.DictReader((tmp_path / "worst.csv").read_text().splitlines()) if w["metric"] == "cdl"]
    assert sorted(int(w["T"]) for w in worst) == [64, 128, 256, 512, 1024]
    from fastcdl.experiments.analysis import fit_slope

    top = sorted(worst, key=lambda w: int(w["T"]))[2:]  # the fit's upper half of the grid
    cdl = next(s for s in slopes if s["metric"] == "cdl")
    assert float(cdl["slope"]) == pytest.approx(fit_slope([int(w["T"]) for w in top], [float(w["mean"]) for w in top]))
    assert (tmp_path / "worst.png").stat().st_size > 10_000


def test_results_readme_quotes_the_tables_of_its_files():
    """results/worstcase/README.md contains the tables made from the CSV files beside it."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "results" / "worstcase"
    assert W.readme_tables(folder) in (folder / "README.md").read_text()
