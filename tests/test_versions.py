"""Declared algorithm versions: committed trials replay bit for bit and resume with nothing to do.

If a change moves any stored number, test_committed_trials_replay_bit_for_bit fails until
the version of what changed is bumped in fastcdl/online/versions.py (after which the
replayed rows are simply not the ones planned, and the committed folders say so here).
"""

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from fastcdl.experiments import TrialStore, load_preset, plan, run_trial
from fastcdl.experiments.runner import Trial
from fastcdl.online import registry, versions
from fastcdl.trial_measures import METRICS
from conftest import SAME_LIBM_AS_THE_STORES

RESULTS = Path(__file__).resolve().parents[1] / "results"
FOLDERS = ("paper", "paper-wide", "msweep", "ece-lower-bound")
STORED = ("cdl", "vcdl", "ece", "k2", "ucal", "kink1", "kink2", "n_buckets")
REPLAY_T = (4096, 65536)


def _copy(folder, tmp_path):
    """A copy of a committed folder's store (unpacked from trials.sqlite.xz where it is packed)."""
    from fastcdl.experiments.packed import unpack

    dst = tmp_path / folder
    dst.mkdir()
    if (RESULTS / folder / "trials.sqlite").exists():
        shutil.copy(RESULTS / folder / "trials.sqlite", dst / "trials.sqlite")
    else:
        shutil.copy(RESULTS / folder / "trials.sqlite.xz", dst / "trials.sqlite.xz")
        unpack(dst)
    return dst


def _superseded(trial_or_row):
    """The version strings a stored trial may carry if its forecaster's or adversary's version
    was superseded (versions.SUPERSEDED) since it ran: the current string with any earlier
    version of either; None if neither was bumped."""
    f = trial_or_row["forecaster"] if isinstance(trial_or_row, dict) else trial_or_row.forecaster
    a = trial_or_row["adversary"] if isinstance(trial_or_row, dict) else trial_or_row.adversary
    if f not in versions.SUPERSEDED and a not in versions.SUPERSEDED:
        return None
    now = versions.algorithm_version(f, a)
    fv = [registry.forecaster(f).version, *versions.SUPERSEDED.get(f, ())]
    av = [registry.adversary(a).version, *versions.SUPERSEDED.get(a, ())]
    cur_f = f"forecaster={f}/{registry.forecaster(f).version} "
    cur_a = f"adversary={a}/{registry.adversary(a).version} "
    return {
        now.replace(cur_f, f"forecaster={f}/{x} ").replace(cur_a, f"adversary={a}/{z} ") for x in fv for z in av
    } - {now}


def _recorded_replays(folder):
    """scripts/replay_versions.py's record of the folder's superseded trials replayed under the
    current code: key -> the record."""
    out = {}
    with gzip.open(RESULTS / "exact-decisions" / "replays.jsonl.gz", "rt") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        r = json.loads(line)
        if r["folder"] == folder:
            out[r["key"]] = r
    return out


def test_every_component_has_a_declared_version():
    specs = [*registry.forecasters().values(), *registry.adversaries().values(), *METRICS.values()]
    assert all(isinstance(s.version, int) and s.version >= 1 for s in specs)
    assert {"cdl", "foster", "kt", "truthful", "frequency"} <= set(registry.forecasters())
    assert {
        "bernoulli",
        "drift",
        "markov",
        "contrarian",
        "greedy",
        "rawpoint",
        "gridedge",
        "sweep",
        "lookahead",
        "signpreserve",
    } <= set(registry.adversaries())


@pytest.mark.parametrize("folder", FOLDERS)
def test_committed_folder_resumes_with_zero_trials_to_run(folder, tmp_path):
    """Every planned trial is stored under the current versions, so resuming runs nothing; the
    other rows are the same trials under superseded versions (kept when a bump's replay
    recomputed them: scripts/replay_versions.py --migrate), one per planned trial at most."""
    preset = load_preset(str(RESULTS / folder / "preset.toml"))
    with TrialStore(_copy(folder, tmp_path) / "trials.sqlite") as store:
        done = store.done_keys()
        rows = store.rows()
    planned = plan(preset)
    planned_keys = {t.key for t in planned}  # each key is a hash of the trial: computed once
    assert planned_keys <= done
    by_trial = {(t.forecaster_label, t.adversary_label, t.T, t.seed_index): t for t in planned}
    extra = [r for r in rows if r["key"] not in planned_keys]
    assert len(rows) == len(planned) + len(extra)
    seen = set()
    for r in extra:
        ident = (r["forecaster_label"], r["adversary_label"], r["T"], r["seed_index"])
        t = by_trial[ident]
        assert r["algorithm_version"] in (_superseded(t) or ()), (ident, r["algorithm_version"])
        assert (
            Trial(**{**{n: r[n] for n in Trial.__dataclass_fields__}, "algorithm_version": t.algorithm_version}).key
            == t.key
        )
        assert ident not in seen
        seen.add(ident)


def test_worstcase_rows_are_current_and_back_every_winner(tmp_path):
    """results/worstcase holds trials under the current versions only (the search was rerun as a
    whole), and each winner's fresh-seed CDL mean in worst.csv is the mean of its stored rows."""
    import csv

    import numpy as np

    from fastcdl.experiments.worst import FRESH_MASTER
    from fastcdl.experiments.runner import trial_seed

    with TrialStore(_copy("worstcase", tmp_path) / "trials.sqlite") as store:
        rows = store.rows()
    assert all(r["algorithm_version"] == versions.algorithm_version(r["forecaster"], r["adversary"]) for r in rows)
    by = {}
    for r in rows:
        by[(r["forecaster"], r["adversary"], r["adversary_params"], r["T"], r["seed"])] = r["cdl"]
    worst = [
        w
        for w in csv.DictReader((RESULTS / "worstcase" / "worst.csv").read_text().splitlines())
        if w["metric"] == "cdl"
    ]
    assert worst
    for w in worst:
        seeds = [trial_seed(FRESH_MASTER, i) for i in range(int(w["n_seeds"]))]
        vals = [by[(w["forecaster"], w["adversary"], w["adversary_params"], int(w["T"]), s)] for s in seeds]
        assert float(w["mean"]) == pytest.approx(np.mean(vals), rel=1e-12)


def _replay_rows(folder, tmp_path):
    with TrialStore(_copy(folder, tmp_path) / "trials.sqlite") as store:
        rows = store.rows()
    picked = {}
    for r in rows:
        if r["seed_index"] in (0, 1) and r["T"] in REPLAY_T:
            picked.setdefault((r["forecaster_label"], r["adversary_label"], r["T"], r["seed_index"]), r)
    return [picked[k] for k in sorted(picked)]


@pytest.mark.skipif(
    not SAME_LIBM_AS_THE_STORES,
    reason="the stores were computed with glibc's FMA libm on "
    "x86-64 (conftest.SAME_LIBM_AS_THE_STORES); another libm can differ in the last bit",
)
@pytest.mark.parametrize("folder", FOLDERS)
def test_committed_trials_replay_bit_for_bit(folder, tmp_path):
    """A trial stored under the current versions replays to its stored numbers; one stored under
    a superseded version replays to the numbers recorded when the bump was measured
    (results/exact-decisions/replays.jsonl), which equal the stored ones where the record says
    the trial is identical. Either way an unbumped change of behaviour fails here."""
    rows = _replay_rows(folder, tmp_path)
    assert rows
    recorded = _recorded_replays(folder)
    for r in rows:
        trial = Trial(**{name: r[name] for name in Trial.__dataclass_fields__})
        assert trial.key == r["key"]
        now = versions.algorithm_version(trial.forecaster, trial.adversary)
        want = _jsonable({c: r[c] for c in STORED})
        if trial.algorithm_version != now:
            assert trial.algorithm_version in (_superseded(trial) or ()), trial.algorithm_version
            rec = recorded[r["key"]]
            assert rec["new_version"] == now and _jsonable(rec["old"]) == want
            # identical: every stored number and (where the row holds one) the final table
            assert rec["identical"] == (not rec["differs_in"])
            assert (_jsonable(rec["new"]) == want) == (not set(rec["differs_in"]) - {"bucket_table"})
            want = _jsonable(rec["new"])
            trial = Trial(**{**{n: r[n] for n in Trial.__dataclass_fields__}, "algorithm_version": now})
        got = run_trial(trial)
        assert _jsonable({c: got[c] for c in STORED}) == want, (
            folder,
            r["forecaster_label"],
            r["adversary_label"],
            r["T"],
        )


def _jsonable(d):
    """The numbers as the JSON record holds them, NaN as a string (so that equal means equal)."""
    return {k: ("nan" if isinstance(v, float) and v != v else v) for k, v in json.loads(json.dumps(d)).items()}


def _legacy_store(path, code_version):
    """A store with the schema of before algorithm versions and one row of the given code version."""
    from fastcdl.experiments.store import COLUMNS

    cols = [(c, t) for c, t in COLUMNS if c != "algorithm_version"]
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE trials ({', '.join(f'{c} {t}' for c, t in cols)})")
    row = {c: None for c, _ in cols}
    row.update(
        key="legacy-key",
        forecaster="cdl",
        forecaster_label="cdl",
        forecaster_params="{}",
        adversary="greedy",
        adversary_label="greedy",
        adversary_params="{}",
        T=64,
        seed_index=0,
        seed=5,
        code_version=code_version,
        cdl=0.5,
    )
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
