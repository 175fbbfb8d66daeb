"""Declared algorithm versions: committed trials replay bit for bit and resume with nothing to do.

If a change moves any stored number, test_committed_trials_replay_bit_for_bit fails until
the version of what changed is bumped in fastcdl/online/versions.py (after which the
replayed rows are simply not the ones planned, and the committed folders say so here).
"""

import shutil
import sqlite3
from pathlib import Path

import pytest

from fastcdl.experiments import TrialStore, load_preset, plan, run_trial
from fastcdl.experiments.runner import Trial
from fastcdl.online import registry, versions
from fastcdl.trial_metrics import METRICS
from conftest import SAME_LIBM_AS_THE_STORES

RESULTS = Path(__file__).resolve().parents[1] / "results"
FOLDERS = ("paper", "paper-wide", "msweep")
STORED = ("cdl", "vcdl", "ece", "k2", "ucal", "kink1", "kink2", "n_buckets")
REPLAY_T = (4096, 65536)


def _copy(folder, tmp_path):
    dst = tmp_path / folder
    dst.mkdir()
    shutil.copy(RESULTS / folder / "trials.sqlite", dst / "trials.sqlite")
    return dst


def _superseded(trial_or_row):
    """The version string a stored trial carries if its forecaster's version was superseded
    (versions.SUPERSEDED) since it ran: the current string with the old forecaster version;
    None if the forecaster was not bumped. The committed folders' cdl trials are cdl/1."""
    f = trial_or_row["forecaster"] if isinstance(trial_or_row, dict) else trial_or_row.forecaster
    a = trial_or_row["adversary"] if isinstance(trial_or_row, dict) else trial_or_row.adversary
    if f not in versions.SUPERSEDED:
        return None
    now = versions.algorithm_version(f, a)
    cur = f"forecaster={f}/{registry.forecaster(f).version} "
    return {now.replace(cur, f"forecaster={f}/{v} ") for v in versions.SUPERSEDED[f]}


def test_every_component_has_a_declared_version():
    specs = [*registry.forecasters().values(), *registry.adversaries().values(), *METRICS.values()]
    assert all(isinstance(s.version, int) and s.version >= 1 for s in specs)
    assert {"cdl", "foster", "kt", "truthful", "frequency"} <= set(registry.forecasters())
    assert {"bernoulli", "drift", "markov", "contrarian", "greedy", "rawpoint", "gridedge", "sweep",
            "lookahead", "signpreserve"} <= set(registry.adversaries())


@pytest.mark.parametrize("folder", FOLDERS)
def test_committed_folder_resumes_with_zero_trials_to_run(folder, tmp_path):
    preset = load_preset(str(RESULTS / folder / "preset.toml"))
    with TrialStore(_copy(folder, tmp_path) / "trials.sqlite") as store:
        done = store.done_keys()
        rows = store.rows()
    planned = plan(preset)
    assert len(planned) == len(rows)
    # every planned trial is stored, under the current versions or, for a forecaster bumped
    # since (cdl 1 -> 2), as the same trial under its superseded version (kept, not re-keyed)
    stored = {(r["forecaster_label"], r["adversary_label"], r["T"], r["seed_index"]): r for r in rows}
    for t in planned:
        if t.key in done:
            continue
        r = stored[(t.forecaster_label, t.adversary_label, t.T, t.seed_index)]
        old = _superseded(t)
        assert old is not None and r["algorithm_version"] in old, (t, r["algorithm_version"])
        assert Trial(**{**{n: r[n] for n in Trial.__dataclass_fields__},
                        "algorithm_version": t.algorithm_version}).key == t.key


def _replay_rows(folder, tmp_path):
    with TrialStore(_copy(folder, tmp_path) / "trials.sqlite") as store:
        rows = store.rows()
    picked = {}
    for r in rows:
        if r["seed_index"] in (0, 1) and r["T"] in REPLAY_T:
            picked.setdefault((r["forecaster_label"], r["adversary_label"], r["T"], r["seed_index"]), r)
    return [picked[k] for k in sorted(picked)]


@pytest.mark.skipif(not SAME_LIBM_AS_THE_STORES, reason="the stores were computed with glibc's FMA libm on "
                    "x86-64 (conftest.SAME_LIBM_AS_THE_STORES); another libm can differ in the last bit")
@pytest.mark.parametrize("folder", FOLDERS)
def test_committed_trials_replay_bit_for_bit(folder, tmp_path):
    rows = _replay_rows(folder, tmp_path)
    assert rows
    for r in rows:
        trial = Trial(**{name: r[name] for name in Trial.__dataclass_fields__})
        assert trial.key == r["key"]
        now = versions.algorithm_version(trial.forecaster, trial.adversary)
        if trial.algorithm_version != now:
            # a superseded version (cdl/1): these trials replay bit for bit under the current
            # code too (cdl 2 changed only the rounding of r; of all 4048 stored cdl trials up
            # to T = 2^20, 4043 do: results/benchmarks/oracle.md); replayed under the current one
            assert trial.algorithm_version in (_superseded(trial) or ()), trial.algorithm_version
            trial = Trial(**{**{n: r[n] for n in Trial.__dataclass_fields__}, "algorithm_version": now})
        got = run_trial(trial)
        for c in STORED:
            assert got[c] == r[c], (folder, r["forecaster_label"], r["adversary_label"], r["T"], c, got[c], r[c])


def _legacy_store(path, code_version):
    """A store with the schema of before algorithm versions and one row of the given code version."""
    from fastcdl.experiments.store import COLUMNS

    cols = [(c, t) for c, t in COLUMNS if c != "algorithm_version"]
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE trials ({', '.join(f'{c} {t}' for c, t in cols)})")
    row = {c: None for c, _ in cols}
    row.update(key="legacy-key", forecaster="cdl", forecaster_label="cdl", forecaster_params="{}",
               adversary="greedy", adversary_label="greedy", adversary_params="{}", T=64, seed_index=0, seed=5,
               code_version=code_version, cdl=0.5)
    con.execute(f"INSERT INTO trials ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", list(row.values()))
    con.commit()
    con.close()


def test_verified_legacy_rows_are_rekeyed(tmp_path):
    legacy = next(iter(versions.LEGACY_CODE_VERSIONS))
    _legacy_store(tmp_path / "t.sqlite", legacy)
    with TrialStore(tmp_path / "t.sqlite") as store:
        (row,) = store.rows()
    v = versions.algorithm_version("cdl", "greedy", initial=True)
    assert row["algorithm_version"] == v
    assert row["key"] == Trial("cdl", "cdl", "{}", "greedy", "greedy", "{}", 64, 0, 5, v).key
    assert row["cdl"] == 0.5


def test_unverified_legacy_rows_are_left_alone(tmp_path):
    _legacy_store(tmp_path / "t.sqlite", "0.0.1+unknown")
    with TrialStore(tmp_path / "t.sqlite") as store:
        (row,) = store.rows()
    assert row["key"] == "legacy-key" and row["algorithm_version"] is None


def test_version_bump_changes_the_key(monkeypatch):
    import dataclasses

    before = versions.algorithm_version("cdl", "greedy")
    cdl = registry.forecasters()["cdl"]
    monkeypatch.setitem(registry.forecasters(), "cdl", dataclasses.replace(cdl, version=cdl.version + 1))
    assert versions.algorithm_version("cdl", "greedy") != before
    assert versions.algorithm_version("foster", "greedy") == versions.algorithm_version("foster", "greedy")
    with pytest.raises(ValueError, match="forecaster must be one of"):
        versions.algorithm_version("nope", "greedy")
