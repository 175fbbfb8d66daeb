"""fastcdl.experiments.fill: the measures outside the key, completed for trials stored before
them. Reference: the rows the runner itself stores for the same trials (every later column
bit for bit)."""

import math

import pytest

from fastcdl.experiments import load_preset, override, plan
from fastcdl.experiments.fill import ReplayMismatch, fill_measures, later_columns, missing
from fastcdl.experiments.runner import run_trials
from fastcdl.experiments.store import TrialStore, unpack_table


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@pytest.fixture
def folder(tmp_path):
    # frequency and truthful state point masses (their tables come from the bucket table);
    # kt and foster randomize (their trials are run again)
    p = override(
        load_preset("quick"),
        forecasters=["frequency", "truthful", "kt", "foster"],
        adversaries=["bernoulli", "drift"],
        t_min=64,
        t_max=128,
        seeds=2,
    )
    run_trials(plan(p), tmp_path, workers=1)
    return tmp_path


def _forget(folder):
    """The store as one filled before the later measures: their columns NULL."""
    with TrialStore(folder / "trials.sqlite") as store:
        rows = store.rows()
        for r in rows:
            store.set_columns(r["key"], dict.fromkeys(later_columns()))
    return {r["key"]: r for r in rows}


def test_fill_gives_back_what_the_runner_stored(folder):
    before = _forget(folder)
    with TrialStore(folder / "trials.sqlite") as store:
        assert len(missing(store.rows())) == len(before)
    out = fill_measures(folder, workers=1)
    assert out["n_missing"] == len(before) > 0
    assert out["n_from_tables"] > 0 and out["n_replayed"] > 0
    with TrialStore(folder / "trials.sqlite") as store:
        after = {r["key"]: r for r in store.rows()}
        assert missing(store.rows()) == []
    for key, r in before.items():
        for c in later_columns():
            if c == "pseudo_table":
                a, b = unpack_table(after[key][c]), unpack_table(r[c])
                assert a.values.tobytes() == b.values.tobytes()
                assert a.counts.tobytes() == b.counts.tobytes() and a.positives.tobytes() == b.positives.tobytes()
            else:
                assert _same(after[key][c], r[c]), (r["forecaster"], c)
    assert fill_measures(folder, workers=1)["n_missing"] == 0  # resumed: nothing left


def test_a_replay_that_differs_is_refused_and_leaves_its_row_null(folder):
    before = _forget(folder)
    victim = next(r for r in before.values() if r["forecaster"] == "kt")
    with TrialStore(folder / "trials.sqlite") as store:
        store.set_columns(victim["key"], {"cdl": victim["cdl"] + 1e-9})
    with pytest.raises(ReplayMismatch, match="kt against .* its cdl is"):
        fill_measures(folder, workers=1)
    with TrialStore(folder / "trials.sqlite") as store:
        row = store.rows([victim["key"]])[0]
    assert all(row[c] is None for c in later_columns())


def test_set_columns_refuses_a_name_that_is_not_a_column(folder):
    with TrialStore(folder / "trials.sqlite") as store:
        key = store.rows()[0]["key"]
        with pytest.raises(ValueError, match="not columns of the trial store"):
            store.set_columns(key, {"nonsense": 1})


def test_rows_lacking_only_measures_of_their_table_are_completed_from_it_without_a_run(folder, monkeypatch):
    """The proper losses (brier, log_loss) were added after the pseudo measures: a row that lacks
    only them is completed from its stored bucket table, equal to what the runner stored, and no
    trial is run again (run_trial is made to fail)."""
    from fastcdl.experiments import fill, runner

    with TrialStore(folder / "trials.sqlite") as store:
        before = {r["key"]: r for r in store.rows()}
        for key in before:
            store.set_columns(key, dict.fromkeys(fill.table_columns()))
    assert set(fill.table_columns()) >= {"brier", "log_loss"}

    def no_run(*args, **kwargs):
        raise AssertionError("a trial was run again")

    monkeypatch.setattr(runner, "run_trial", no_run)
    out = fill_measures(folder, workers=1)
    assert out["n_missing"] == out["n_from_tables"] == len(before) and out["n_replayed"] == 0
    with TrialStore(folder / "trials.sqlite") as store:
        after = {r["key"]: r for r in store.rows()}
    for key, r in before.items():
        for c in fill.table_columns():
            assert _same(after[key][c], r[c]), (r["forecaster"], c)
            assert after[key][c] is not None
