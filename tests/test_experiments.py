"""Rate experiments: presets, resumable store, recomputation, Dask path, slope fitting."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fastcdl.cli import main
from fastcdl.experiments import (
    PresetError,
    TrialStore,
    analyze,
    fit_slope,
    load_preset,
    override,
    plan,
    run,
    run_trial,
)
from fastcdl.experiments import runner as runner_mod
from fastcdl.experiments.presets import preset_from_dict

METRIC_COLUMNS = ("cdl", "vcdl", "ece", "k2", "ucal", "kink1", "kink2", "n_buckets")


def tiny(**kw):
    raw = {
        "name": "tiny",
        "master_seed": 7,
        "seeds": 3,
        "t_min": 64,
        "t_max": 512,
        "forecasters": [{"name": "cdl"}, {"name": "foster"}],
        "adversaries": [{"name": "bernoulli", "params": {"p": 0.5}}, {"name": "greedy"}],
    }
    raw.update(kw)
    return preset_from_dict(raw, source="test")


# -- slopes -------------------------------------------------------------------------


def test_fit_slope_recovers_known_exponent():
    rng = np.random.default_rng(0)
    Ts = 2.0 ** np.arange(10, 21)
    rows = []
    for s in range(16):
        for T in Ts:
            # E[value] = 3 T^-0.4 with multiplicative noise of mean 1
            rows.append(
                {
                    "forecaster_label": "f",
                    "adversary_label": "a",
                    "T": int(T),
                    "seed_index": s,
                    "cdl": 3 * T**-0.4 * rng.gamma(50, 1 / 50),
                }
            )
    _, slopes, _ = analyze(rows, ["cdl"], seed=1)
    (s,) = slopes
    assert abs(s["slope"] + 0.4) < 0.03
    assert s["slope_lo"] < -0.4 < s["slope_hi"]
    assert s["slope_hi"] - s["slope_lo"] < 0.1
    assert s["t_min_fit"] == 2**15 and s["t_max_fit"] == 2**20  # the upper half of the grid
    assert fit_slope([1, 10], [1.0, 0.0]) != fit_slope([1, 10], [1.0, 0.0])  # NaN when a mean is 0


# -- presets and options ------------------------------------------------------------


def test_builtin_presets_load_and_roundtrip(tmp_path):
    for name in ("quick", "paper", "msweep", "nonstationary"):
        p = load_preset(name)
        assert len(p.horizons) >= 2
        f = tmp_path / f"{name}.toml"
        f.write_text(p.to_toml())
        q = load_preset(str(f))
        assert q == p
    paper = load_preset("paper")
    assert paper.horizons[0] == 2**10 and paper.horizons[-1] == 2**26 and paper.seeds >= 16
    ns = load_preset("nonstationary")
    assert [f.name for f in ns.forecasters] == ["cdl", "foster", "kt", "ftpl"]
    assert {a.display: a.param_dict for a in ns.adversaries} == {
        "segments K=T^0.25": {"k_exponent": 0.25},
        "segments K=4": {"k": 4},
        "budget C=T^0.5": {"c_exponent": 0.5},
    }
    assert ns.horizons == [2**k for k in range(10, 17)] and ns.seeds == 8


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"forecasters": [{"name": "oracle"}]}, "unknown forecaster"),
        ({"adversaries": [{"name": "greedy", "parms": {}}]}, "unknown key"),
        ({"seeds": 1}, "seeds"),
        ({"t_min": 600, "t_max": 700}, "fewer than two"),
        ({"t_min": 1024, "t_max": 64}, "exceeds"),
        ({"speed": 3}, "unknown key"),
        ({"forecasters": [{"name": "truthful"}]}, "stochastic"),
        ({"forecasters": [{"name": "cdl"}, {"name": "cdl"}]}, "appear twice"),
        ({"metrics": ["cdl", "mce"]}, "unknown metric"),  # a measure of tables, not of trials
        ({"forecasters": [{"name": "cdl", "params": {"m": [1, 2]}}]}, "number or a string"),
    ],
)
def test_bad_presets_rejected(change, needle):
    with pytest.raises(PresetError, match=needle):
        tiny(**change)


def test_bad_parameters_rejected_before_any_work(tmp_path):
    p = tiny(forecasters=[{"name": "cdl", "params": {"m": -3}}])
    with pytest.raises(PresetError, match="cdl"):
        run(p, tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "trials.sqlite").exists()


def test_bad_options_exit_2_before_work(tmp_path, capsys):
    out = tmp_path / "r"
    for argv, needle in (
        (["rates", "--preset", "nope"], "unknown preset"),
        (["rates", "--forecasters", "cdl,bogus"], "bogus"),
        (["rates", "--t-max", "2^x"], "2^k"),
        (["rates", "--workers", "0"], "workers"),
        (["rates", "--scheduler", "localhost:8786"], "tcp://"),
        (["rates", "--seeds", "1"], "seeds"),
    ):
        assert main([*argv, "--out", str(out)]) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1
    assert not out.exists()
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\nforecasters = [\n")
    assert main(["rates", "--preset", str(bad), "--out", str(out)]) == 2
    assert "TOML" in capsys.readouterr().err


def test_override_selects_and_adds():
    p = override(
        load_preset("quick"), forecasters=["cdl", "truthful"], adversaries=["bernoulli"], t_max="2^12", seeds=3
    )
    assert [f.name for f in p.forecasters] == ["cdl", "truthful"]
    assert p.horizons[-1] == 4096 and p.seeds == 3


# -- running, resuming, recomputing ---------------------------------------------------


def _rows(path):
    with TrialStore(path) as st:
        return {r["key"]: r for r in st.rows()}


def test_plan_seeds_are_deterministic():
    a = plan(tiny())
    b = plan(tiny())
    assert [t.key for t in a] == [t.key for t in b]
    assert len({t.seed for t in a}) == 3  # one seed per seed index, shared across the grid
    assert len({t.key for t in a}) == len(a) == 4 * 3 * 4


def test_resume_after_crash_matches_uninterrupted_run(tmp_path, monkeypatch):
    preset = tiny()
    whole = tmp_path / "whole"
    run(preset, whole, workers=1, progress=False)

    crashed = tmp_path / "crashed"
    real_add = TrialStore.add
    calls = {"n": 0}

    def crash_after_ten(self, row):
        if calls["n"] == 10:
            raise KeyboardInterrupt  # the interruption arrives between two trials
        calls["n"] += 1
        real_add(self, row)

    monkeypatch.setattr(TrialStore, "add", crash_after_ten)
    with pytest.raises(KeyboardInterrupt):
        run(preset, crashed, workers=1, progress=False)
    monkeypatch.setattr(TrialStore, "add", real_add)
    assert len(_rows(crashed / "trials.sqlite")) == 10
    run(preset, crashed, workers=1, progress=False)

    a, b = _rows(whole / "trials.sqlite"), _rows(crashed / "trials.sqlite")
    assert a.keys() == b.keys()
    for k in a:
        for c in METRIC_COLUMNS:
            assert a[k][c] == b[k][c]
    for name in ("rates.csv", "summary.csv"):
        assert (whole / name).read_text() == (crashed / name).read_text()
    doc = json.loads((crashed / "summary.json").read_text())
    assert doc["n_trials"] == len(a) and doc["preset"]["name"] == "tiny"


def test_kill_9_loses_only_trials_in_flight(tmp_path):
    out = tmp_path / "killed"
    opts = dict(forecasters=["cdl"], adversaries=["drift"], t_min="2^10", t_max="2^18", seeds=4)
    argv = [
        sys.executable,
        "-m",
        "fastcdl",
        "rates",
        "--preset",
        "quick",
        "--forecasters",
        "cdl",
        "--adversaries",
        "drift",
        "--t-min",
        "2^10",
        "--t-max",
        "2^18",
        "--seeds",
        "4",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = out / "trials.sqlite"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        try:
            if db.exists() and len(_rows(db)) >= 8:
                break
        except Exception:  # the database may be mid-creation
            pass
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rows = _rows(db)
    assert len(rows) >= 8
    for r in rows.values():  # every stored row is whole
        assert all(r[c] is not None for c in METRIC_COLUMNS)
    preset = override(load_preset("quick"), **opts)
    todo = [t for t in plan(preset) if t.key not in rows]
    assert todo, "the kill came after the last trial; nothing was tested"
    summary = run(preset, out, workers=1, progress=False)
    assert summary["n_done"] == summary["n_trials"] == 9 * 4
    after = _rows(db)
    for k, r in rows.items():  # finished trials were kept, not redone
        assert after[k]["finished_at"] == r["finished_at"]


def test_single_trial_recomputed_alone_matches_store(tmp_path):
    preset = tiny()
    run(preset, tmp_path, workers=1, progress=False)
    stored = _rows(tmp_path / "trials.sqlite")
    for t in plan(preset)[::7]:
        row = run_trial(t)
        for c in METRIC_COLUMNS:
            assert row[c] == stored[t.key][c], c


def test_local_pool_and_dask_give_identical_rows(tmp_path):
    distributed = pytest.importorskip("distributed")
    preset = tiny(t_max=256, seeds=2)
    run(preset, tmp_path / "pool", workers=2, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, scheduler_port=0, dashboard_address=":0"
    ) as cluster:
        run(preset, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    a, b = _rows(tmp_path / "pool" / "trials.sqlite"), _rows(tmp_path / "dask" / "trials.sqlite")
    assert a.keys() == b.keys() and len(a) == 4 * 2 * 3
    for k in a:
        for c in METRIC_COLUMNS:
            assert a[k][c] == b[k][c]


def test_code_version_changes_with_kernel_source(monkeypatch, tmp_path):
    import shutil

    pkg = Path(runner_mod.__file__).resolve().parents[1]
    copy = tmp_path / "fastcdl"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(runner_mod, "_PACKAGE", copy)
    v1 = runner_mod.code_version()
    assert v1 == runner_mod.code_version()
    with (copy / "_compiled" / "envelope.py").open("a") as fh:
        fh.write("\n# changed\n")
    assert runner_mod.code_version() != v1


def test_override_is_recorded_in_the_description():
    from fastcdl.experiments import load_preset, override

    base = load_preset("paper")
    p = override(base, forecasters=["cdl", "foster"], t_max="2^24", seeds=4)
    assert p.description.startswith(base.description)
    assert "forecasters=cdl,foster" in p.description and "t_max=2^24" in p.description and "seeds=4" in p.description
    assert override(base).description == base.description


# -- faults of the store: read-only folders, damaged files, failed writes, two runs at once ----


def _quick_args(out, t_max="2^9"):
    return [
        "rates",
        "--preset",
        "quick",
        "--forecasters",
        "cdl,foster",
        "--adversaries",
        "bernoulli",
        "--t-min",
        "2^8",
        "--t-max",
        t_max,
        "--seeds",
        "2",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(out),
    ]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished run folder (8 trials), copied by each test that changes it."""
    out = tmp_path_factory.mktemp("store") / "run"
    assert main(_quick_args(out)) == 0
    return out


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _read_only(folder, argv):
    """Run `python -m fastcdl argv` with folder read-only: a read-only bind mount in a mount
    namespace of its own when running as root (whom permissions do not stop), else the folder's
    permissions taken away. Returns (exit status, stderr)."""
    import shutil

    cmd = [sys.executable, "-m", "fastcdl", *argv]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("running as root without unshare: no way to make a folder read-only")
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
        if probe.returncode != 0:
            pytest.skip(f"running as root where unshare -m is refused: {probe.stderr.decode().strip()}")
        f = str(folder)
        cmd = [
            "unshare",
            "-m",
            "sh",
            "-c",
            'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"',
            f,
            *cmd,
        ]
        p = subprocess.run(cmd, capture_output=True, text=True)
    else:
        modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
    return p.returncode, p.stderr


def test_a_read_only_run_folder_is_plotted_and_refuses_writes_in_one_line(finished_run, tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    before = _snapshot(run_dir)
    code, err = _read_only(run_dir, ["plot", str(run_dir), "--out", str(tmp_path / "figs")])
    assert code == 0, err
    assert {p.name for p in (tmp_path / "figs").iterdir()} >= {"rates_bernoulli.png", "cdl_over_ece.png"}
    code, err = _read_only(run_dir, ["plot", str(run_dir)])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{run_dir}: cannot write figures into this folder" in err and "--out" in err
    code, err = _read_only(run_dir, _quick_args(run_dir, t_max="2^10")[:-1] + [str(run_dir)])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"fastcdl: error: {run_dir}: cannot write into the run folder")
    assert _snapshot(run_dir) == before  # nothing written, not even a journal beside the store


@pytest.mark.parametrize("damage", ["not a database", "half zeroed"])
def test_a_damaged_store_is_named_in_one_line_and_left_as_it_is(finished_run, tmp_path, capsys, damage):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    db = run_dir / "trials.sqlite"
    data = bytearray(db.read_bytes())
    if damage == "not a database":
        data[:100] = b"x" * 100
    else:
        data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)
    db.write_bytes(bytes(data))
    before = _snapshot(run_dir)
    for argv in (_quick_args(run_dir), ["plot", str(run_dir), "--out", str(tmp_path / "figs")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"fastcdl: error: {db}: cannot "), err
        assert ("SQLITE_NOTADB" if damage == "not a database" else "SQLITE_CORRUPT") in err[0]
        assert "the file is damaged and was left as it is: restore it from a copy" in err[0]
        assert _snapshot(run_dir) == before
    assert not (tmp_path / "figs").exists()


def test_a_failed_write_is_reported_with_its_cause(finished_run, tmp_path):
    """A file-size limit (RLIMIT_FSIZE) reached while storing trials: the write's own error, not
    SQLite's 'cannot rollback', with the count of trials left; the stored ones are kept."""
    import resource
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    limit = 36864  # room for the store's shared-memory file (32 KiB), not for twelve more trials

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run(
        [sys.executable, "-m", "fastcdl", *_quick_args(run_dir, t_max="2^12")],
        capture_output=True,
        text=True,
        preexec_fn=small_files,
    )
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1, p.stderr
    assert err[0].startswith(f"fastcdl: error: {run_dir / 'trials.sqlite'}: cannot store a finished trial (")
    assert "SQLITE_IOERR" in err[0] or "SQLITE_FULL" in err[0]
    assert "cannot rollback" not in err[0] and "a file-size limit" in err[0]
    assert err[0].endswith("of 20 trials left undone; summary files unchanged; re-run the same command to resume")
    stored = _rows(run_dir / "trials.sqlite")
    assert len(stored) >= 8 and json.loads((run_dir / "summary.json").read_text())["n_trials"] == 8
    assert main(_quick_args(run_dir, t_max="2^12")) == 0 and len(_rows(run_dir / "trials.sqlite")) == 20


def test_a_second_run_into_a_busy_folder_stops_at_once(tmp_path, capsys):
    """While one run holds the folder, a second one exits 2 with one line and runs nothing; the lock
    dies with its process (SIGKILL included), and a later run resumes."""
    out = tmp_path / "busy"
    argv = [
        sys.executable,
        "-m",
        "fastcdl",
        "rates",
        "--preset",
        "quick",
        "--forecasters",
        "cdl",
        "--adversaries",
        "drift",
        "--t-min",
        "2^10",
        "--t-max",
        "2^18",
        "--seeds",
        "4",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(out),
    ]
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not (out / "trials.sqlite.lock").exists():
            time.sleep(0.05)
        assert first.poll() is None, "the first run ended before the test could start the second"
        assert main(argv[3:]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"fastcdl: error: {out}: another run is storing trials in this folder (process {first.pid}), "
            "and would run the same trials; wait for it to end (re-running then skips every stored "
            "trial), or run into another folder"
        ]
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    kept = _rows(out / "trials.sqlite")
    assert (out / "trials.sqlite.lock").exists()  # left by the killed run: a file, not a lock
    assert main(argv[3:13] + ["2^12", "--seeds", "4", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    after = _rows(out / "trials.sqlite")
    assert all(after[k]["finished_at"] == r["finished_at"] for k, r in kept.items())
    assert not (out / "trials.sqlite.lock").exists()
