"""The worst-case search (fastcdl.experiments.worst): it reports the best candidate it scored,
on seeds it never scored with; it resumes without recomputing; the command line's errors."""

import json
import subprocess
import sys

import numpy as np
import pytest

from fastcdl.experiments import families as F
from fastcdl.experiments import worst as W
from fastcdl.experiments import worst_search
from fastcdl.experiments.runner import trial_seed
from fastcdl.experiments.store import TrialStore
from fastcdl.online import simulate


SMALL = W.Budget(
    search_seeds=2,
    final_seeds=3,
    fresh_seeds=3,
    design=16,
    generations=1,
    refine=1,
    top=2,
    finalists=2,
    deep=2,
    deep_seeds=4,
)


def test_dim_values_span_the_box():
    d = F.Dim("p", 0.0, 1.0, "level")
    assert (d.value(0.0), d.value(0.5), d.value(1.0)) == (0.0, 0.5, 1.0)
    lg = F.Dim("p01", 1e-3, 1.0, "log")
    assert lg.value(0.0) == pytest.approx(1e-3) and lg.value(1.0) == 1.0
    assert lg.value(0.5) == pytest.approx(10**-1.5, rel=1e-12) and lg.unit(lg.value(0.3)) == pytest.approx(0.3)
    assert d.value(1.7) == 1.0 and d.value(-3) == 0.0  # an optimiser may step outside: the box's edge


def test_cycles_become_a_period_relative_to_T():
    fam = F.FAMILIES["drift"]
    p = fam.params((1.0, 0.0), 4096)
    assert p == {"amplitude": 0.5, "period": 4096 / 0.5}
    assert fam.values_of_params(p, 4096) == [0.5, 0.5]


@pytest.mark.parametrize("T", [1024, 4096])
def test_every_forecaster_declares_its_grid(T):
    """The registry's grid is the spacing of the stated values the forecaster can say."""
    from fastcdl.online import registry

    for name, spec in registry.forecasters().items():
        m = spec.grid_m({}, T)
        if m is None:  # no grid j/m to declare: klcal's values are sin^2 points (docs/klcal.md)
            assert name == "klcal"
            continue
        resolved = spec.resolve_params({}, T)
        adv = (registry.adversary("bernoulli"), {"p": 0.5})
        _, q = spec.init(T, resolved, adv)
        q = np.asarray(q)
        j = np.round(q * m)  # each stated value is the double nearest some j/m, exactly
        assert np.array_equal(q, j / m) and q.min() >= 0 and q.max() <= 1, name
        assert len(q) >= m, name


def test_interval_is_the_rate_experiments_and_seeded_by_its_cell():
    from fastcdl.experiments.analysis import cell_rng, mean_interval

    v = [0.1, 0.3, 0.2, 0.5, 0.25, 0.4, 0.35, 0.15]
    got = W.interval(v, "kt", "cdl", 1024)
    assert got == mean_interval(v, rng=cell_rng(W.FRESH_MASTER, "worst", "kt", "cdl", 1024))
    assert got == W.interval(v, "kt", "cdl", 1024) and got[1] < np.mean(v) < got[2]


@pytest.mark.parametrize("m", [5, 14, 42, 135])
def test_sweep_has_eight_points_in_every_cell(m):
    pts = np.array(F.FAMILIES["bernoulli"].sweep_points(m))
    assert pts[0] == 0.0 and pts[-1] == 1.0 and np.all(np.diff(pts) > 0)
    cells = np.minimum(np.floor(pts * m + 1e-9), m - 1)
    assert np.bincount(cells.astype(int), minlength=m).min() >= 8
    assert all(min(abs(pts - k / m)) < 1e-15 for k in range(m + 1))  # the grid points themselves


def test_carry_keeps_the_cell_and_the_offset_from_the_nearest_anchor():
    # near 0: the same cell from 0
    assert F.carry_level(2.25 / 10, 10, 20) == pytest.approx(2.25 / 20)
    # near 1: the same cell from 1
    assert F.carry_level(1 - 1.5 / 10, 10, 20) == pytest.approx(1 - 1.5 / 20)
    # near 1/2 with m odd (1/2 inside cell 7 of 15) to m even (1/2 a grid point, cell 10 of 20 above it):
    # one cell above the middle one, at offset 0.3
    assert F.carry_level(8.3 / 15, 15, 20) == pytest.approx(11.3 / 20)
    for v in np.linspace(0, 1, 101):  # the identity at the same grid
        assert F.carry_level(v, 14, 14) == pytest.approx(v, abs=1e-15)
    fam = F.FAMILIES["drift"]  # an offset: the same number of cells; cycles: the same count
    p = F.carry(fam, {"amplitude": 2 / 14, "period": 1024 / 4}, 1024, 14, 4096, 28)
    assert p == pytest.approx({"amplitude": 2 / 28, "period": 4096 / 4})


def test_a_range_invalid_for_the_forecaster_names_family_parameter_and_forecaster():
    from fastcdl.online.plugins import plugin_forecaster
    from fastcdl.online.forecasters import foster

    with pytest.raises(ValueError, match="family 'bernoulli', parameter 'p', forecaster 'kt'"):
        F.family_for("bernoulli", "kt", 1024, ranges={"p": (0.5, 1.2)})
    with pytest.raises(ValueError, match="no searched parameter 'q'"):
        F.family_for("bernoulli", "kt", 1024, ranges={"q": (0.5, 1.0)})
    nogrid = plugin_forecaster(
        name="nogrid",
        init=lambda T, params: foster.FORECASTER.init(T, {"m": 8}, None),
        forecast=foster.FORECASTER.forecast,
        observe=foster.FORECASTER.observe,
    )
    with pytest.raises(ValueError, match="family 'bernoulli', parameter 'p': units = 'cells' for forecaster 'nogrid'"):
        F.family_for("bernoulli", nogrid, 1024, ranges={"p": {"lo": 1, "hi": 3, "units": "cells"}})
    fam = F.family_for("bernoulli", "kt", 1024, ranges={"p": {"lo": 1, "hi": 3, "units": "cells"}})
    m = W.registry_m("kt", 1024)
    assert (fam.dims[0].lo, fam.dims[0].hi) == (1 / m, 3 / m)
    with pytest.raises(ValueError, match="unknown adversary family 'nope'"):
        W.WorstPlan.make(forecasters=["kt"], search_horizons=[64], families=["nope"])


class Planted:
    """A synthetic objective: a flat 0.5 with a narrow peak of height 1 between grid points
    (width 0.02 cell, centred 0.43 cell above grid point 5 of m = 14), the rest of the
    search's interface (means over seeds) unchanged."""

    def __init__(self, m, centre, width, dims=1):
        self.m, self.centre, self.width, self.calls = m, centre, width, 0

    def means(self, cands, seeds, master=None, metric="cdl"):
        self.calls += len(cands)
        out = []
        for _, p in cands:
            g = p["p"] * self.m if "p" in p else p["amplitude"] * self.m
            out.append(0.5 + 0.5 * np.exp(-(((g - self.centre) / self.width) ** 2)))
        return out


def test_planted_narrow_peak_between_grid_points_is_found():
    m = W.registry_m("cdl", 2**14)
    assert m == 14
    ev = Planted(m, 5.43, 0.02)
    r = W.search("cdl", 2**14, None, families=["bernoulli"], budget=SMALL, evaluator=ev)
    assert r.adversary == "bernoulli" and r.search_mean > 0.95
    assert abs(r.params["p"] * m - 5.43) < 0.01
    # the sweep alone does not reach it: its nearest point is 0.055 cells away
    assert max(ev.means([("bernoulli", {"p": x}) for x in F.FAMILIES["bernoulli"].sweep_points(m)], 1)) < 0.6


def test_planted_peak_in_a_two_parameter_family_is_found():
    m = W.registry_m("cdl", 2**14)
    ev = Planted(m, 2.3, 0.3)  # amplitude 2.3 cells, any period
    r = W.search("cdl", 2**14, None, families=["drift"], budget=W.Budget(search_seeds=2, final_seeds=3), evaluator=ev)
    assert r.search_mean > 0.9 and abs(r.params["amplitude"] * m - 2.3) < 0.1


class Face:
    """A synthetic objective of the 4-parameter sweep family whose optimum lies on a face of
    the box: a ridge in ``high`` (width 0.02) worth 0.65 inside the box and 1 where cycles is
    at its least (0.5, one half cycle over the horizon, to within 4%), beside a broad decoy
    worth 0.6. Points inside the box never see the face."""

    def __init__(self, T):
        self.T = T

    def means(self, cands, seeds, master=None, metric="cdl"):
        out = []
        for _, p in cands:
            ridge = np.exp(-(((p["high"] - 0.81) / 0.02) ** 2)) * (1.0 if self.T / p["period"] < 0.52 else 0.65)
            decoy = 0.6 * np.exp(-(((p["low"] - 0.3) / 0.2) ** 2 + ((p["amp"] - 0.1) / 0.2) ** 2))
            out.append(float(max(ridge, decoy)))
        return out


def test_axis_sweeps_find_an_optimum_on_a_face_of_the_box():
    T = 2**14
    r = W.search("cdl", T, None, families=["sweep"], budget=W.Budget(search_seeds=2, final_seeds=3), evaluator=Face(T))
    assert r.search_mean > 0.9
    assert abs(r.params["high"] - 0.81) < 0.005 and T / r.params["period"] < 0.55
    # without the axis sweeps the search stays on the decoy
    r0 = W.search(
        "cdl",
        T,
        None,
        families=["sweep"],
        budget=W.Budget(search_seeds=2, final_seeds=3, axis_passes=0),
        evaluator=Face(T),
    )
    assert r0.search_mean < 0.66


@pytest.fixture(scope="module")
def small_search(tmp_path_factory):
    path = tmp_path_factory.mktemp("worst") / "trials.sqlite"
    with TrialStore(path) as store:
        r = W.search("kt", 512, store, families=["bernoulli", "contrarian", "greedy", "rawpoint"], budget=SMALL)
        rows = store.rows()
    return path, r, rows


def test_winner_is_the_best_of_the_deepest_rung(small_search):
    """The finalists are the best by search score and the best of each family; the best few of
    them by final-rung score reach the deepest rung, whose best is the winner."""
    _, r, _ = small_search
    fins = [c for c in r.candidates if c.final_mean is not None]
    deep = [c for c in r.candidates if c.deep_mean is not None]
    assert len(deep) == SMALL.deep and all(c.final_mean is not None for c in deep)
    assert min(c.final_mean for c in deep) >= max(c.final_mean for c in fins if c.deep_mean is None)
    assert r.search_mean == max(c.deep_mean for c in deep)
    assert (r.adversary, r.params) in [(c.family, c.params) for c in deep if c.deep_mean == r.search_mean]
    assert {c.stage for c in r.candidates} == {"sweep", "refine", "fixed", "design", "evolve", "axis", "polish"}
    # every family reaches the final rung with its best candidate
    assert set(r.best_of_families()) == {"bernoulli", "contrarian", "greedy", "rawpoint"}
    for fam, c in r.best_of_families().items():
        if fam != r.adversary:
            assert c.search_mean == max(x.search_mean for x in r.candidates if x.family == fam)
    m = W.registry_m("kt", 512)
    assert sum(c.stage == "sweep" for c in r.candidates if c.family == "bernoulli") == 8 * m + 1


def test_search_scores_are_means_over_the_search_seeds(small_search):
    """A candidate's scores are recomputed here with simulate on trial_seed(SEARCH_MASTER, i)."""
    _, r, _ = small_search
    c = max((c for c in r.candidates if c.final_mean is not None), key=lambda c: c.final_mean)
    again = [
        simulate("kt", c.family, horizon=512, seed=trial_seed(W.SEARCH_MASTER, i), adversary_params=c.params).cdl
        for i in range(3)
    ]
    assert float(np.mean(again)) == c.final_mean and float(np.mean(again[:2])) == c.search_mean
    w = r.winner()
    again = [
        simulate("kt", w.family, horizon=512, seed=trial_seed(W.SEARCH_MASTER, i), adversary_params=w.params).cdl
        for i in range(SMALL.deep_seeds)
    ]
    assert float(np.mean(again)) == w.deep_mean == r.search_mean


def test_winner_is_reported_on_fresh_seeds(small_search):
    _, r, rows = small_search
    fresh = {trial_seed(W.FRESH_MASTER, i) for i in range(3)}
    search = {trial_seed(W.SEARCH_MASTER, i) for i in range(3)}
    assert not fresh & search
    assert {x["seed"] for x in r.fresh} == fresh
    for x in r.fresh:
        assert x["cdl"] == simulate("kt", r.adversary, horizon=512, seed=x["seed"], adversary_params=r.params).cdl
    out = W.worst_rows(r)
    cdl = next(o for o in out if o["metric"] == "cdl")
    assert cdl["mean"] == pytest.approx(np.mean([x["cdl"] for x in r.fresh])) and cdl["n_seeds"] == 3
    assert cdl["lo"] <= cdl["mean"] <= cdl["hi"]
    assert json.loads(cdl["adversary_params"]) == r.params
    fams = W.family_rows(r, 3)
    assert sum(f["is_winner"] for f in fams) == 1 and max(f["ratio_to_winner"] for f in fams) == 1.0


def test_search_resumes_without_recomputing(small_search, monkeypatch):
    path, r, rows = small_search
    calls = []
    monkeypatch.setattr(
        worst_search, "run_trial", lambda t: calls.append(t) or pytest.fail("recomputed a stored trial")
    )
    with TrialStore(path) as store:
        again = W.search("kt", 512, store, families=["bernoulli", "contrarian", "greedy", "rawpoint"], budget=SMALL)
        assert len(store.rows()) == len(rows)
    assert not calls
    assert (again.adversary, again.params, again.search_mean) == (r.adversary, r.params, r.search_mean)


def test_recall_against_an_exhaustive_sweep_computed_here(small_search):
    """The search's best of a 1-D family is at least 0.97 of an exhaustive sweep at 32 points
    per cell, on the same seeds (the full study: scripts/validate_worst_search.py)."""
    _, r, _ = small_search
    m = W.registry_m("kt", 512)
    pts = [k / (32 * m) for k in range(32 * m + 1)]
    ex = max(
        np.mean(
            [
                simulate(
                    "kt", "bernoulli", horizon=512, seed=trial_seed(W.SEARCH_MASTER, i), adversary_params={"p": p}
                ).cdl
                for i in range(2)
            ]
        )
        for p in pts
    )
    best = max(c.search_mean for c in r.candidates if c.family == "bernoulli")
    assert best >= 0.97 * ex


def test_transfer_carries_the_top_of_every_family_in_grid_units(small_search, tmp_path):
    _, r, _ = small_search
    with TrialStore(tmp_path / "t.sqlite") as store:
        r2 = W.transfer("kt", 2048, store, r, families=["bernoulli", "contrarian", "greedy", "rawpoint"], budget=SMALL)
    m0, m1 = W.registry_m("kt", 512), W.registry_m("kt", 2048)
    mine = [c for c in r.candidates if c.family == "bernoulli"]
    # those of the deepest rung first (best first), then the best two on the search seeds
    deep = sorted((c for c in mine if c.deep_mean is not None), key=lambda c: -c.deep_mean)
    top = sorted((c for c in mine if c.deep_mean is None), key=lambda c: (-c.search_mean, len(json.dumps(c.params))))[
        :2
    ]  # shorter first on a tie
    want = []
    for c in deep + top:
        x = F.carry_level(c.params["p"], m0, m1)
        if x not in want:
            want.append(x)
    carried = [c.params["p"] for c in r2.candidates if c.family == "bernoulli" and c.stage == "carried"]
    assert carried == pytest.approx(want)
    local = [c.params["p"] for c in r2.candidates if c.family == "bernoulli" and c.stage == "local"]
    assert len(local) == len(want) * 8 and all(min(abs(x - y) for y in carried) <= 0.5 / m1 + 1e-12 for x in local)
    assert r2.m == m1 and set(r2.best_of_families()) == {"bernoulli", "contrarian", "greedy", "rawpoint"}


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
    with pytest.raises(ValueError, match=r"^known sweep for cdl at T = 64: .*amp"):
        W.WorstPlan.make(
            forecasters=["cdl"],
            search_horizons=[64],
            known=[("cdl", 64, "sweep", {"low": 0.4, "high": 0.6, "amp": -1.0, "period": 10.0})],
        )
    plan = W.WorstPlan.load("worstcase")
    assert plan.forecasters[:2] == ("cdl", "foster") and max(plan.transfer_horizons["cdl"]) >= 2**22


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "fastcdl", "worst", *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    "args,match",
    [
        ((), "give --forecaster"),
        (("--forecaster", "cdl"), "needs --t"),
        (("--forecaster", "nope", "--t", "64"), "forecaster must be one of"),
        (("--plan", "nope"), "unknown worst-case plan"),
        (("--forecaster", "cdl", "--t", "2^x"), "--t must be an integer or 2^k"),
    ],
)
def test_cli_errors_are_one_line(args, match):
    p = _cli(*args)
    assert p.returncode == 2 and match in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_cli_one_search(tmp_path):
    p = _cli(
        "--forecaster",
        "foster",
        "--t",
        "2^7",
        "--search-seeds",
        "2",
        "--fresh-seeds",
        "3",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
    )
    assert p.returncode == 0, p.stderr
    lines = (tmp_path / "worst.csv").read_text().splitlines()
    assert lines[0] == ",".join(W.WORST_COLUMNS) and len(lines) == 1 + 5
    assert all(line.startswith("foster,") and ",128," in line for line in lines[1:])


def test_plan_with_cross_evaluation(tmp_path):
    """run_plan: worst.csv per forecaster and horizon; cross.csv puts every forecaster against
    every winner on the fresh seeds, with paired differences (0 for the winner's own forecaster,
    whose row repeats its worst.csv mean)."""
    import csv

    plan = W.WorstPlan.make(forecasters=["kt", "foster"], search_horizons=[128], cross_horizons=[128], budget=SMALL)
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
    foster_rows = [
        simulate("foster", r.adversary, horizon=128, seed=x["seed"], adversary_params=r.params).cdl for x in r.fresh
    ]
    assert float(other["mean"]) == pytest.approx(np.mean(foster_rows), rel=1e-12)
    assert float(other["diff_to_worst_for"]) == pytest.approx(
        np.mean(foster_rows) - np.mean([x["cdl"] for x in r.fresh]), rel=1e-9, abs=1e-15
    )


def test_plan_over_horizons_writes_slopes_and_figure(tmp_path):
    import csv

    plan = W.WorstPlan.make(
        forecasters=["kt"],
        search_horizons=[64, 128, 256, 512],
        transfer_horizons={"kt": [1024]},
        budget=SMALL,
        families=["bernoulli", "contrarian"],
    )
    W.run_plan(plan, tmp_path, workers=1, progress=False)
    slopes = list(csv.DictReader((tmp_path / "worst_slopes.csv").read_text().splitlines()))
    assert {(s["forecaster"], s["adversary"], s["metric"]) for s in slopes} == {
        ("kt", "worst", "cdl"),
        ("kt", "worst", "ece"),
    }
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


def test_expected_cdl_bound_from_its_pieces_and_above_every_worst_case_found():
    """The explicit bound of docs/algorithm1.md, recomputed from its pieces; it lies above the
    worst case found at every horizon of results/worstcase (a lower bound below an upper one)."""
    import csv
    import math
    from pathlib import Path

    from fastcdl.online.forecasters.cdl import expected_cdl_bound

    for T in (2**10, 2**16, 2**22, 2**40):
        m = math.ceil(math.sqrt(T) / math.log(T))
        K = 2 * m + 1
        ece = 1 / m + (1 + m * (64 + 32 * math.log(K)) + 17 * math.sqrt(m * T * (math.log(K) + math.log(1 + T)))) / T
        assert expected_cdl_bound(T) == pytest.approx(2 * ece, rel=1e-14)
    K = 21  # a given m: 1/m grows, the sqrt(m T) term shrinks
    assert expected_cdl_bound(2**20, m=10) == pytest.approx(
        2
        * (
            0.1
            + (1 + 10 * (64 + 32 * math.log(K)) + 17 * math.sqrt(10 * 2**20 * (math.log(K) + math.log(1 + 2**20))))
            / 2**20
        ),
        rel=1e-14,
    )
    with pytest.raises(ValueError, match="delta"):
        expected_cdl_bound(2**10, delta=0.01)
    folder = Path(__file__).resolve().parents[1] / "results" / "worstcase"
    for w in csv.DictReader((folder / "worst.csv").read_text().splitlines()):
        if w["forecaster"] == "cdl" and w["metric"] == "cdl":
            assert float(w["hi"]) < expected_cdl_bound(int(w["T"]))


def test_plan_on_dask_makes_the_same_choices_as_in_process(tmp_path):
    """run_plan with a Dask scheduler: the same trials, the same winner, the same files."""
    distributed = pytest.importorskip("distributed")
    plan = W.WorstPlan.make(
        forecasters=["kt"], search_horizons=[128], budget=SMALL, families=["bernoulli", "contrarian"]
    )
    a = W.run_plan(plan, tmp_path / "local", workers=1, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, scheduler_port=0, dashboard_address=":0"
    ) as cluster:
        b = W.run_plan(plan, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    assert [(r.adversary, r.params, r.search_mean) for r in a] == [(r.adversary, r.params, r.search_mean) for r in b]
    for name in ("worst.csv", "families.csv", "candidates.csv"):
        assert (tmp_path / "local" / name).read_text() == (tmp_path / "dask" / name).read_text()


def test_packed_store_resumes_the_plan_with_nothing_to_run(tmp_path, monkeypatch):
    """pack_folder keeps every row (bucket tables of the fresh seeds only); a folder holding only
    trials.sqlite.xz resumes from it without running a trial."""
    import sqlite3

    plan = W.WorstPlan.make(forecasters=["kt"], search_horizons=[128], budget=SMALL, families=["bernoulli", "greedy"])
    W.run_plan(plan, tmp_path, workers=1, progress=False)
    before = (tmp_path / "worst.csv").read_text()
    packed = W.pack_folder(tmp_path)
    with sqlite3.connect(tmp_path / "trials.sqlite") as con:
        n_rows = con.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    (tmp_path / "trials.sqlite").unlink()
    (tmp_path / "worst.csv").unlink()
    monkeypatch.setattr(worst_search, "run_trial", lambda t: pytest.fail("ran a trial the packed store holds"))
    W.run_plan(plan, tmp_path, workers=1, progress=False)
    assert (tmp_path / "worst.csv").read_text() == before and packed.exists()
    fresh = {trial_seed(W.FRESH_MASTER, i) for i in range(3)}
    with sqlite3.connect(tmp_path / "trials.sqlite") as con:
        rows = con.execute("SELECT seed, bucket_table IS NOT NULL FROM trials").fetchall()
    assert len(rows) == n_rows and all(has == (seed in fresh) for seed, has in rows)


def test_a_full_search_also_scores_the_best_of_the_horizon_below(small_search, tmp_path):
    _, r, _ = small_search
    with TrialStore(tmp_path / "t.sqlite") as store:
        r2 = W.search("kt", 2048, store, families=["bernoulli", "rawpoint"], budget=SMALL, previous=r)
    m0, m1 = W.registry_m("kt", 512), W.registry_m("kt", 2048)
    # the deepest rung's, then the best two others on the search seeds
    top = [c for c in r.candidates if c.family == "bernoulli" and c.deep_mean is not None]
    top += sorted(
        (c for c in r.candidates if c.family == "bernoulli" and c.deep_mean is None),
        key=lambda c: (-c.search_mean, len(json.dumps(c.params))),
    )[:2]
    carried = [c.params["p"] for c in r2.candidates if c.family == "bernoulli" and c.stage == "carried"]
    # a carried point the sweep also holds keeps its sweep stage (the first to score it)
    sweep = {c.params["p"] for c in r2.candidates if c.family == "bernoulli"}
    assert all(F.carry_level(c.params["p"], m0, m1) in sweep for c in top)
    assert set(carried) <= {F.carry_level(c.params["p"], m0, m1) for c in top}
    assert any(c.stage == "carried" for c in r2.candidates if c.family == "rawpoint")


def test_committed_validation_covers_every_forecaster_and_family_as_its_readme_says():
    """results/worstcase/validation.csv (scripts/validate_worst_search.py) has every forecaster
    and family at 2^12 and 2^14, recall = search best / exhaustive best, an exhaustive sweep
    finer than the search's (32 points per cell for a level), and the README names every cell
    below 0.97 and counts the others."""
    import csv
    import re
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "results" / "worstcase"
    rows = list(csv.DictReader((folder / "validation.csv").read_text().splitlines()))
    worst = list(csv.DictReader((folder / "worst.csv").read_text().splitlines()))
    want = {(f, T, fam) for f in {w["forecaster"] for w in worst} for T in (4096, 16384) for fam in F.FAMILIES}
    assert {(r["forecaster"], int(r["T"]), r["family"]) for r in rows} == want
    for r in rows:
        ex = float(r["exhaustive_best"])  # 0 when no point of the family moves the forecaster (recall 1)
        assert float(r["recall"]) == (pytest.approx(float(r["search_best"]) / ex) if ex > 0 else 1.0)
        if r["family"] == "bernoulli":
            assert int(r["points"]) == 32 * int(r["m"]) + 1
    readme = " ".join((folder / "README.md").read_text().split())
    low = [r for r in rows if float(r["recall"]) < 0.97]
    m = re.search(r"recall at least 0\.97 in (\d+) of (\d+) cells", readme)
    assert m and (int(m.group(1)), int(m.group(2))) == (len(rows) - len(low), len(rows))
    for r in low:
        assert (
            f"`{r['forecaster']}` {r['family']} at 2^{int(r['T']).bit_length() - 1}: {float(r['recall']):.3f}" in readme
        )
    # where the exhaustive best beat the winner on the search seeds, both were run on the fresh seeds
    for r in rows:
        assert (r["exhaustive_fresh"] != "") == (float(r["winner_recall"]) < 1)
        if r["exhaustive_fresh"] != "":
            assert (
                f"exhaustive_fresh {float(r['exhaustive_fresh']):.4f}, fresh_recall {float(r['fresh_recall']):.2f}"
                in readme
            )


def test_a_plan_into_a_folder_another_run_holds_stops_at_once(tmp_path):
    """`worst` takes the folder's lock as `rates` does: a second run stops with the holder's
    process named, before running any trial."""
    import multiprocessing as mp

    from fastcdl.experiments.store import StoreError

    ctx = mp.get_context("spawn")
    ready, done = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path), ready, done))
    holder.start()
    try:
        assert ready.wait(60)
        plan = W.WorstPlan.make(forecasters=["kt"], search_horizons=[64], families=["contrarian"])
        with pytest.raises(StoreError, match=f"another run .*process {holder.pid}"):
            W.run_plan(plan, tmp_path, workers=1, progress=False)
        assert not (tmp_path / "trials.sqlite").exists()
    finally:
        done.set()
        holder.join(60)


def _hold_lock(folder, ready, done):
    from fastcdl.experiments.store import run_lock

    with run_lock(folder):
        ready.set()
        done.wait(120)


def test_known_candidates_always_reach_the_final_rung():
    """A plan's known candidate competes on the final seeds even when the search seeds rank
    it below the finalists."""
    m = W.registry_m("cdl", 2**14)
    ev = Planted(m, 5.43, 0.02)
    known = [("bernoulli", {"p": 0.9})]  # far from the peak: last on the search seeds
    r = W.search("cdl", 2**14, None, families=["bernoulli"], budget=SMALL, evaluator=ev, known=known)
    c = next(c for c in r.candidates if c.params == {"p": 0.9})
    assert c.final_mean is not None


def test_a_plugin_is_shown_by_its_name_as_rates_and_leaderboard_show_it():
    from fastcdl.experiments.presets import plugin_label
    from fastcdl.experiments.worst_folder import label

    assert label("kt") == "kt"
    assert label("readme_plugin:HALFWAY") == "halfway" == plugin_label("forecaster", "readme_plugin:HALFWAY")
