"""Stopping a rate run safely: summary files, signals, orphans, unreachable schedulers, seeds.

The signal tests start ``python -m fastcdl rates`` for real (its own process group, two
pool workers, trials of several seconds) and find the workers through /proc.
"""

import ast
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fastcdl.cli import main
from fastcdl.experiments import TrialStore, analyze, run, write_summary
from fastcdl.experiments import runner as runner_mod
from fastcdl.experiments import workers as workers_mod
from test_experiments import METRIC_COLUMNS, _rows, tiny

SUMMARY_FILES = ("rates.csv", "summary.csv", "paired.csv", "paired_slopes.csv", "forms.csv", "summary.json")
linux_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")


def _summary_texts(folder):
    return {n: (folder / n).read_text() if (folder / n).exists() else None for n in SUMMARY_FILES}


def _plant_summary(folder):
    """Summary files of an earlier run: must survive any run that does not finish."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in SUMMARY_FILES:
        (folder / n).write_text(f"earlier {n}\n")
    return _summary_texts(folder)


# -- summary files: only after a finished plan, atomically ------------------------------


def test_stopped_run_leaves_summary_files_and_says_what_is_left(tmp_path, monkeypatch):
    out = tmp_path / "run"
    before = _plant_summary(out)
    real_add = TrialStore.add
    calls = {"n": 0}

    def stop_after_five(self, row):
        if calls["n"] == 5:
            raise KeyboardInterrupt
        calls["n"] += 1
        real_add(self, row)

    monkeypatch.setattr(TrialStore, "add", stop_after_five)
    with pytest.raises(KeyboardInterrupt, match=r"^43 of 48 trials left undone; summary files unchanged; re-run"):
        run(tiny(), out, workers=1, progress=False)
    assert _summary_texts(out) == before
    assert len(_rows(out / "trials.sqlite")) == 5

    def fail_after_ten(self, row):  # any other error: the same line on stderr, then the error
        if calls["n"] == 10:
            raise RuntimeError("disk full")
        calls["n"] += 1
        real_add(self, row)

    monkeypatch.setattr(TrialStore, "add", fail_after_ten)
    with pytest.raises(RuntimeError, match="disk full"):
        run(tiny(), out, workers=1, progress=False)
    assert _summary_texts(out) == before
    monkeypatch.setattr(TrialStore, "add", real_add)

    summary = run(tiny(), out, workers=1, progress=False)  # the resumed run finishes: files written
    assert summary["n_done"] == summary["n_trials"] == 48
    assert json.loads((out / "summary.json").read_text())["n_trials"] == 48
    # nothing left to do: the summary is written again (from the store alone)
    for n in SUMMARY_FILES:
        (out / n).unlink()
    run(tiny(), out, workers=1, progress=False)
    assert json.loads((out / "summary.json").read_text())["timing"]["trials_run_this_invocation"] == 0


def test_failed_trial_reports_one_line_on_stderr(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    before = _plant_summary(out)
    real = runner_mod.run_trial
    calls = {"n": 0}

    def fail_third(t):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("trial failed")
        return real(t)

    monkeypatch.setattr(runner_mod, "run_trial", fail_third)
    with pytest.raises(RuntimeError, match="trial failed"):
        run(tiny(), out, workers=1, progress=False)
    err = capsys.readouterr().err
    assert err == "stopped: 46 of 48 trials left undone; summary files unchanged; re-run the same command to resume\n"
    assert _summary_texts(out) == before


def test_larger_plan_stopped_keeps_the_smaller_finished_summary(tmp_path, monkeypatch):
    out = tmp_path / "run"
    run(tiny(seeds=2), out, workers=1, progress=False)
    finished = _summary_texts(out)
    assert json.loads(finished["summary.json"])["n_trials"] == 32

    def interrupted(self, row):
        raise KeyboardInterrupt

    monkeypatch.setattr(TrialStore, "add", interrupted)
    with pytest.raises(KeyboardInterrupt, match="16 of 48 trials left undone"):  # seeds=3 adds 16 trials
        run(tiny(seeds=3), out, workers=1, progress=False)
    assert _summary_texts(out) == finished


def test_write_summary_replaces_all_files_or_none(tmp_path, monkeypatch):
    before = _plant_summary(tmp_path)
    real_write = Path.write_text

    def fail_on_json(self, text, *a, **kw):
        if "summary.json" in self.name:
            raise OSError("no space left on device")
        return real_write(self, text, *a, **kw)

    monkeypatch.setattr(Path, "write_text", fail_on_json)
    rows = [
        {"forecaster_label": "f", "adversary_label": "a", "T": T, "seed_index": s, "cdl": 1.0 / T + s}
        for T in (10, 100)
        for s in range(3)
    ]
    kw = dict(metrics=["cdl"], preset={}, code_version="v", machine="m", timing={})
    with pytest.raises(OSError, match="no space"):
        write_summary(tmp_path, rows, **kw)
    assert _summary_texts(tmp_path) == before  # rates.csv and summary.csv were ready but not renamed
    monkeypatch.setattr(Path, "write_text", real_write)
    write_summary(tmp_path, rows, **kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SUMMARY_FILES)  # no temporary files left
    assert all(v != before[n] for n, v in _summary_texts(tmp_path).items())


# -- bootstrap streams seeded per cell --------------------------------------------------


def _synthetic_rows():
    rng = np.random.default_rng(3)
    rows = []
    for f in ("cdl", "foster", "kt"):
        for a in ("bernoulli", "drift"):
            for T in (2**k for k in range(10, 16)):
                for s in range(6):
                    rows.append(
                        {
                            "forecaster_label": f,
                            "adversary_label": a,
                            "T": T,
                            "seed_index": s,
                            "cdl": T**-0.5 * rng.gamma(20, 1 / 20),
                            "ece": T**-0.3 * rng.gamma(20, 1 / 20),
                        }
                    )
    return rows


def test_bootstrap_interval_of_a_cell_does_not_depend_on_other_cells():
    rows = _synthetic_rows()
    alone = [r for r in rows if (r["forecaster_label"], r["adversary_label"]) == ("foster", "drift")]
    cell = lambda out: [x for x in out if (x["forecaster"], x["adversary"]) == ("foster", "drift")]  # noqa: E731
    rates_all, slopes_all, _ = analyze(rows, ["cdl", "ece"], seed=11)
    rates_one, slopes_one, _ = analyze(alone, ["cdl", "ece"], seed=11)
    assert cell(rates_all) == rates_one and len(rates_one) == 2 * 6
    assert cell(slopes_all) == slopes_one and len(slopes_one) == 2
    # one metric less, other horizons absent, rows in another order: the same intervals
    fewer = [r for r in alone[::-1] if r["T"] != 2**10]
    rates_fewer, _, _ = analyze(fewer, ["cdl"], seed=11)
    keep = [x for x in rates_one if x["metric"] == "cdl" and x["T"] != 2**10]
    assert rates_fewer == keep
    # the master seed still moves the bootstrap intervals of the means; the slopes' jackknife
    # intervals use no random numbers
    rates_other, slopes_other, _ = analyze(alone, ["cdl", "ece"], seed=12)
    assert [x["lo"] for x in rates_other] != [x["lo"] for x in rates_one]
    assert slopes_other == slopes_one
    assert [x["mean"] for x in rates_other] == [x["mean"] for x in rates_one]


# -- an unreachable Dask scheduler ------------------------------------------------------


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_fails_fast_and_writes_nothing(tmp_path, capsys):
    pytest.importorskip("distributed")
    out = tmp_path / "run"
    preset = tmp_path / "tiny.toml"
    preset.write_text(tiny().to_toml())
    t0 = time.perf_counter()
    status = main(
        [
            "rates",
            "--preset",
            str(preset),
            "--scheduler",
            f"tcp://127.0.0.1:{_closed_port()}",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    seconds = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert status == 2
    assert seconds < workers_mod.SCHEDULER_TIMEOUT + 3, seconds
    assert (
        err.startswith("fastcdl: error: cannot reach the Dask scheduler at tcp://127.0.0.1:") and err.count("\n") == 1
    )
    assert not out.exists()


# -- signals and orphans: real processes ------------------------------------------------


def _alive(pid):
    """True while pid exists and is not a zombie (a dead child not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        for f in glob.glob(f"/proc/{todo.pop()}/task/*/children"):
            try:
                kids = [int(k) for k in Path(f).read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def _workers(pid):
    def cmdline(p):
        try:
            return Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            return b""

    return [p for p in _descendants(pid) if b"spawn_main" in cmdline(p)]


def _wait_gone(pids, timeout):
    """Seconds until none of pids is alive (or None after timeout)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if not any(_alive(p) for p in pids):
            return time.perf_counter() - t0
        time.sleep(0.02)
    return None


def _start_long_run(tmp_path):
    """Start a run whose trials at T = 2^23 and 2^24 take several seconds each; return once
    the shorter ones are stored: (process, run folder, its planted summary texts, stored
    rows, the pids of its workers and helpers)."""
    out = tmp_path / "run"
    before = _plant_summary(out)
    preset = tiny(
        forecasters=[{"name": "cdl"}],
        adversaries=[{"name": "drift"}],
        seeds=2,
        t_min=2**10,
        t_max=2**24,
        metrics=["cdl", "ece"],
    )
    toml = tmp_path / "long.toml"
    toml.write_text(preset.to_toml())
    argv = [
        sys.executable,
        "-m",
        "fastcdl",
        "rates",
        "--preset",
        str(toml),
        "--workers",
        "2",
        "--no-progress",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    db = out / "trials.sqlite"
    deadline = time.time() + 240  # the first start may compile every kernel
    n = 0
    while time.time() < deadline and proc.poll() is None:
        try:
            n = len(_rows(db)) if db.exists() else 0
        except Exception:  # the database may be mid-creation
            pass
        if n >= 26 and len(_workers(proc.pid)) == 2:  # T <= 2^22 done; 2^23 in flight
            break
        time.sleep(0.2)
    assert proc.poll() is None and n >= 26, f"the run did not get going: {n} trials, {proc.poll()}"
    time.sleep(1.0)  # well inside the 2^23 trials (several seconds each)
    rows = _rows(db)
    assert len(rows) < 30
    return proc, out, before, rows, _descendants(proc.pid)


def _check_store(out, before_rows):
    rows = _rows(out / "trials.sqlite")
    assert len(rows) >= len(before_rows)
    for k, r in before_rows.items():
        assert rows[k]["finished_at"] == r["finished_at"]
    for r in rows.values():  # every stored row is whole
        assert all(r[c] is not None for c in METRIC_COLUMNS)
    return rows


@linux_proc
@pytest.mark.parametrize(
    "sig, to_group, status",
    [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)],
    ids=["SIGTERM", "SIGINT-to-group"],
)
def test_signal_stops_run_promptly_without_orphans(tmp_path, sig, to_group, status):
    proc, out, summary_before, rows, pids = _start_long_run(tmp_path)
    assert len(pids) >= 2
    t0 = time.perf_counter()
    if to_group:  # like Ctrl-C in a terminal: every process of the group gets it
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    exit_seconds = time.perf_counter() - t0
    gone = _wait_gone(pids, 5)
    print(f"{sig.name}: exit after {exit_seconds:.2f} s, every worker gone after {gone}")
    assert proc.returncode == status
    assert exit_seconds < 4, exit_seconds  # the trials in flight would take several seconds more
    assert gone is not None, [p for p in pids if _alive(p)]
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"fastcdl: stopped by {sig.name}: ") and "trials left undone; summary files unchanged" in err
    left = int(err.split(": ")[2].split(" of ")[0])
    stored = _check_store(out, rows)
    assert left == 30 - len(stored) > 0
    assert _summary_texts(out) == summary_before


@linux_proc
def test_sigkill_of_the_parent_kills_the_workers(tmp_path):
    proc, out, summary_before, rows, pids = _start_long_run(tmp_path)
    assert len(_workers(proc.pid)) == 2
    os.kill(proc.pid, signal.SIGKILL)
    gone = _wait_gone(pids, 5)  # the parent's workers and helpers (the parent itself is a zombie until waited for)
    proc.communicate(timeout=20)
    print(f"SIGKILL: every worker gone {gone} s after the kill")
    assert gone is not None, [p for p in pids if _alive(p)]
    _check_store(out, rows)
    assert _summary_texts(out) == summary_before


_CHILD = """
import os, sys, time
from fastcdl.experiments.workers import watch_parent
sys.platform = "elsewhere"  # no prctl: only the polling thread watches the parent
watch_parent(os.getppid())
print("ready", flush=True)
time.sleep(120)
"""

_PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
print(child.pid, flush=True)
time.sleep(120)
"""


@linux_proc
def test_parent_watch_fallback_thread_exits_orphaned_worker(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", _PARENT, _CHILD], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        child = int(proc.stdout.readline())
        assert proc.stdout.readline().strip() == "ready"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        gone = _wait_gone([child], 5)
        print(f"fallback watch: orphan gone after {gone} s")
        assert gone is not None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.stdout.close()
        proc.wait()


# -- test clusters: ephemeral ports ------------------------------------------------------


def test_every_test_cluster_binds_port_0():
    """A LocalCluster on the default ports (8786, dashboard 8787) collides with other processes.
    dashboard_address=None does not help: distributed (2026.8) still binds 8787 and warns when it
    is taken, which the suite turns into an error; ":0" binds a free port."""
    found = 0
    for f in sorted(Path(__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "LocalCluster"
            ):
                found += 1
                kw = {k.arg: k.value for k in node.keywords}
                where = f"{f.name}:{node.lineno}"
                assert "scheduler_port" in kw and ast.literal_eval(kw["scheduler_port"]) == 0, where
                assert "dashboard_address" in kw and ast.literal_eval(kw["dashboard_address"]) == ":0", where
    assert found >= 2


def test_a_test_cluster_starts_while_port_8787_is_taken():
    distributed = pytest.importorskip("distributed")
    holder = socket.socket()
    try:
        holder.bind(("", 8787))
        holder.listen()
    except OSError:
        pass  # already held by another process: the case this test is about
    try:
        with distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, scheduler_port=0, dashboard_address=":0"
        ) as cluster:
            assert cluster.scheduler_address
    finally:
        holder.close()


def test_progress_to_a_file_is_lines_not_a_redrawn_bar():
    """Written to a file (or a pipe), the progress of a run is one line per tenth of its rounds,
    with no carriage return; on a terminal it is tqdm's bar."""
    import io

    from fastcdl.experiments.workers import LineProgress, progress_bar

    log = io.StringIO()
    bar = progress_bar(1000, True, stream=log)
    assert isinstance(bar, LineProgress)
    for _ in range(40):
        bar.update(25)
        bar.set_postfix_str("n trials done")
    bar.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) == 10
    assert lines[0] == "rounds: 10% (100 of 1k; n trials done)" and lines[-1].startswith("rounds: 100% (1k of 1k")
    assert progress_bar(1000, False) is None

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = progress_bar(1000, True, stream=Terminal())
    assert type(tty).__name__ == "tqdm"
    tty.close()
