"""Plan, run and resume rate experiments: trials on a local process pool or a Dask cluster.

Each trial (forecaster, adversary, T, seed) is independent and is stored the moment it
finishes. Seeds derive from the preset's master seed with numpy's SeedSequence, so a
trial can be recomputed alone (:func:`run_trial`) and gives the same numbers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from fastcdl._writing import writing_to
from fastcdl.experiments.presets import Preset, PresetError
from fastcdl.experiments.packed import unpack
from fastcdl.experiments.store import StoreError, TrialStore, params_json, run_lock, trial_key
from fastcdl.experiments.summary_files import write_summary
from fastcdl.experiments.workers import SCHEDULER_TIMEOUT as SCHEDULER_TIMEOUT  # its name here before
from fastcdl.experiments.workers import WorkerDied, connect, progress_bar, run_local, run_on_dask
from fastcdl.online.versions import algorithm_version

_PACKAGE = Path(__file__).resolve().parents[1]


def code_version() -> str:
    """Package version plus a hash of the sources: provenance stored with each trial.

    Trials are keyed by declared algorithm versions (:mod:`fastcdl.online.versions`),
    not by this hash, so a refactor reuses every stored trial.
    """
    from fastcdl._version import __version__

    h = hashlib.sha256()
    for sub in ("_compiled", "online"):
        for f in sorted((_PACKAGE / sub).rglob("*.py")):
            h.update(f.relative_to(_PACKAGE).as_posix().encode())
            h.update(f.read_bytes())
    for f in (
        "metrics.py",
        "_tables/tabulate.py",
        "_tables/outcome_keys.py",
        "_tables/sample_size.py",
        "_decisions/task_losses.py",
        "_decisions/certificate.py",
        "stats.py",
    ):
        h.update((_PACKAGE / f).read_bytes())
    return f"{__version__}+{h.hexdigest()[:12]}"


def trial_seed(master_seed: int, seed_index: int) -> int:
    """The seed of run number seed_index: SeedSequence(master_seed, spawn_key=(seed_index,)), 62 bits.

    Parameters
    ----------
    master_seed : int
        The preset's master seed.
    seed_index : int
        The run's number, 0..seeds-1.

    Returns
    -------
    int

    Examples
    --------
    >>> trial_seed(0, 1)
    1220475355304307179
    """
    state = np.random.SeedSequence(master_seed, spawn_key=(seed_index,)).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(2))


@dataclass(frozen=True)
class Trial:
    """One run of a preset: a forecaster against an adversary at one horizon and seed; frozen.

    Attributes
    ----------
    forecaster, adversary : str
        Registered names (or plug-in paths).
    forecaster_label, adversary_label : str
        How results name them.
    forecaster_params, adversary_params : str
        Parameters as canonical JSON.
    T : int
        The horizon.
    seed_index : int
        The run's number.
    seed : int
        Its seed (:func:`trial_seed`).
    algorithm_version : str
        The declared versions that key the stored trial.

    Examples
    --------
    >>> from fastcdl.experiments import load_preset
    >>> t = plan(load_preset("quick"))[0]
    >>> t.forecaster, t.adversary, t.T, len(t.key) > 0
    ('cdl', 'bernoulli', 1024, True)
    """

    forecaster: str
    forecaster_label: str
    forecaster_params: str  # canonical JSON
    adversary: str
    adversary_label: str
    adversary_params: str
    T: int
    seed_index: int
    seed: int
    algorithm_version: str

    @property
    def key(self) -> str:
        """The key of its stored row (names, parameters, horizon, seed, versions)."""
        return trial_key(
            self.forecaster,
            self.forecaster_params,
            self.adversary,
            self.adversary_params,
            self.T,
            self.seed,
            self.algorithm_version,
        )


def plan(preset: Preset) -> list[Trial]:
    """All trials of a preset, smallest horizons first (so a partial run covers whole grid rows).

    Parameters
    ----------
    preset : Preset

    Returns
    -------
    list of Trial

    Examples
    --------
    >>> from fastcdl.experiments import load_preset, override
    >>> len(plan(override(load_preset("quick"), forecasters=["cdl"], t_max=4096, seeds=2)))
    18
    """
    trials = {}
    for T in preset.horizons:
        for f in preset.forecasters:
            for a in preset.adversaries_at(T):
                if preset.skip_refused and refusal(f, a) is not None:
                    continue
                version = algorithm_version(f.name, a.name)
                for i in range(preset.seeds):
                    t = Trial(
                        f.name,
                        f.display,
                        params_json(f.param_dict),
                        a.name,
                        a.display,
                        params_json(a.param_dict),
                        T,
                        i,
                        trial_seed(preset.master_seed, i),
                        version,
                    )
                    # a worst adversary found may be one of the preset's (contrarian): one trial, stored once
                    trials.setdefault(t.key, t)
    return list(trials.values())


def environments(preset: Preset) -> list[dict]:
    """The adversary behind each label at each horizon: label, T, adversary, adversary_params.

    A worst adversary found (:meth:`Preset.adversaries_at`) may be the same adversary as one of
    the preset's, and the same trial is stored once, under one label: this list (written to a
    run folder as environments.csv) says every label it stands for.

    Parameters
    ----------
    preset : Preset

    Returns
    -------
    list of dict

    Examples
    --------
    >>> from fastcdl.experiments import load_preset
    >>> environments(load_preset("quick"))[0]
    {'label': 'bernoulli', 'T': 1024, 'adversary': 'bernoulli', 'adversary_params': '{"p": 0.5}'}
    """
    return [
        dict(label=a.display, T=T, adversary=a.name, adversary_params=params_json(a.param_dict))
        for T in preset.horizons
        for a in preset.adversaries_at(T)
    ]


def run_trial(trial: Trial) -> dict:
    """Run one trial in compiled code and measure it.

    Parameters
    ----------
    trial : Trial

    Returns
    -------
    dict
        The row stored for it: the trial's fields, its key, every metric of
        fastcdl.trial_measures, the timing and the run's final bucket table (packed).

    Examples
    --------
    >>> from fastcdl.experiments import load_preset
    >>> row = run_trial(plan(load_preset("quick"))[0])
    >>> row["T"], 0 <= row["cdl"] <= 1
    (1024, True)
    """
    from fastcdl.experiments.store import pack_table
    from fastcdl.online import simulate
    from fastcdl.trial_measures import compute_all

    res = simulate(
        trial.forecaster,
        trial.adversary,
        horizon=trial.T,
        seed=trial.seed,
        forecaster_params=json.loads(trial.forecaster_params),
        adversary_params=json.loads(trial.adversary_params),
    )
    st = res.stats
    row = asdict(trial)
    row.update(key=trial.key, code_version=code_version())
    row.update(compute_all(st, pseudo=res.pseudo_stats))
    row.update(
        n_buckets=st.n_buckets,
        seconds=float(res.seconds),
        rounds_per_second=float(res.rounds_per_second),
        finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        bucket_table=pack_table(st),
        pseudo_table=pack_table(res.pseudo_stats),
    )
    return row


def refusal(forecaster, adversary) -> str | None:
    """Why the engine refuses to play forecaster against adversary (Components), or None.

    A refusal is the forecaster's ValidationError on its ``adversary`` argument at the start
    of a run (the truthful forecaster against an adversary that states no probability); any
    other error is not a refusal and propagates. Cost: a run of 64 rounds (cached per pair).

    Parameters
    ----------
    forecaster, adversary : Component
        As in a preset.

    Returns
    -------
    str or None
        The engine's message, or None when the pair plays.

    Examples
    --------
    >>> from fastcdl.experiments.presets import Component
    >>> refusal(Component("truthful"), Component("contrarian"))[:45]
    'adversary: the truthful forecaster needs a st'
    >>> refusal(Component("cdl"), Component("contrarian")) is None
    True
    """
    return _refusal(forecaster.name, forecaster.params, adversary.name, adversary.params)


@functools.lru_cache(maxsize=4096)
def _refusal(f, fparams, a, aparams):
    from fastcdl._validate import ValidationError
    from fastcdl.online import simulate

    try:
        simulate(f, a, horizon=64, seed=0, forecaster_params=dict(fparams), adversary_params=dict(aparams))
    except ValidationError as e:
        if e.argument == "adversary":
            return str(e)
        raise
    return None


ENVIRONMENT_COLUMNS = ("label", "T", "adversary", "adversary_params")


def write_environments(out_dir, envs) -> None:
    """Write environments.csv (:func:`environments`) into a run folder, atomically."""
    import csv
    import io

    from fastcdl._writing import atomic_write

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=ENVIRONMENT_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(envs)
    atomic_write({Path(out_dir) / "environments.csv": buf.getvalue()})


def dry_run(preset: Preset) -> None:
    """Build every forecaster x adversary once at a tiny horizon: bad parameters fail here,
    before any work starts (and the JIT cache is warm before workers start). With
    ``skip_refused`` the pairs the engine refuses (:func:`refusal`) are left out."""
    from fastcdl.online import simulate

    for f in preset.forecasters:
        for a in dict.fromkeys(a for T in preset.horizons for a in preset.adversaries_at(T)):
            if preset.skip_refused and refusal(f, a) is not None:
                continue
            try:
                simulate(
                    f.name,
                    a.name,
                    horizon=preset.horizons[0],
                    seed=0,
                    forecaster_params=f.param_dict,
                    adversary_params=a.param_dict,
                )
            except (ValueError, TypeError) as e:
                raise PresetError(f"forecaster {f.display!r} against adversary {a.display!r}: {e}") from None


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}; {os.cpu_count()} cores; Python {platform.python_version()}"


def run_each(todo, workers, keep, fn=None) -> None:
    """fn(item) (default run_trial) for every item of todo, keep(result) here as each finishes:
    on the local pool (:func:`fastcdl.experiments.workers.run_local`) with more than one worker, else one by one in this
    process."""
    fn = fn or run_trial
    if todo and workers > 1:
        run_local(todo, workers, keep, fn)
    else:
        for item in todo:
            keep(fn(item))


def run_trials(trials, out_dir, *, workers=None, progress=False) -> tuple[int, int]:
    """Run the given trials into out_dir/trials.sqlite, skipping those stored already.

    The trials of any plan (a leaderboard's plug-in on its folder's grid, say): the folder's
    lock is held, each trial is stored as it finishes, and nothing else is written (no
    preset.toml, no summary). Stopped early (Ctrl-C, a failed trial), the finished trials are
    kept and the exception propagates.

    Parameters
    ----------
    trials : list of Trial
        What to run.
    out_dir : str or Path
        The run folder.
    workers : int, optional
        Local worker processes (default: every CPU).
    progress : bool, default False
        Show a progress bar (tqdm).

    Returns
    -------
    (n_ran, n_reused) : tuple of int

    Raises
    ------
    StoreError
        A locked folder or a store that cannot be read or written.

    Examples
    --------
    >>> import tempfile
    >>> from fastcdl.experiments import load_preset, override
    >>> p = override(load_preset("quick"), forecasters=["kt"], adversaries=["bernoulli"], t_min=16, t_max=32, seeds=2)
    >>> d = tempfile.mkdtemp()
    >>> run_trials(plan(p), d, workers=1), run_trials(plan(p), d, workers=1)
    ((4, 0), (0, 4))
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with run_lock(out_dir), TrialStore(out_dir / "trials.sqlite") as store:
        done = store.done_keys()
        todo = [t for t in trials if t.key not in done]
        bar = progress_bar(sum(t.T for t in todo), progress)
        workers = workers or os.cpu_count() or 1

        def keep(row):
            store.add(row)
            if bar is not None:
                bar.update(row["T"])

        try:
            run_each(todo, workers, keep)
        finally:
            if bar is not None:
                bar.close()
    return len(todo), len(trials) - len(todo)


def _execute(todo, client, workers, keep) -> None:
    """Run the trials on the Dask client, a local pool of workers, or in this process, handing
    each finished trial's row to ``keep``."""
    if todo and client is not None:
        run_on_dask(todo, client, keep, run_trial)
    elif todo and workers > 1:
        run_local(todo, workers, keep, run_trial)
    else:
        for t in todo:
            keep(run_trial(t))


def run(preset: Preset, out_dir, *, workers=None, scheduler=None, progress=True, dry=True) -> dict:
    """Run (or resume) a preset into out_dir.

    Finished trials already in out_dir/trials.sqlite are skipped (a folder that holds only the
    packed store, trials.sqlite.xz as committed, is unpacked first). rates.csv, summary.csv
    and summary.json are rewritten (atomically) only when the store holds every planned
    trial, so they never describe fewer trials than a previous run's. A run stopped early
    leaves them as they were and says how many trials are left undone: on stderr, or as
    the message of the KeyboardInterrupt after Ctrl-C (or SIGTERM from the command line).
    An unreachable scheduler or bad parameters raise ValueError before anything is written.

    The run holds the folder's lock (``fastcdl.experiments.store.run_lock``): a second
    run into the same folder meanwhile raises StoreError at once, so no trial runs twice. A
    store that cannot be read or written raises StoreError naming the file, the cause and
    what to do, with the count of trials left undone.

    Parameters
    ----------
    preset : Preset
        What to run.
    out_dir : str or Path
        The run folder (created if needed): trials.sqlite, preset.toml and the summaries.
    workers : int, optional
        Worker processes (default: the number of CPUs).
    scheduler : str, optional
        The address of a Dask scheduler to run the trials on instead.
    progress : bool, default True
        Show a progress bar (tqdm).
    dry : bool, default True
        First build every forecaster x adversary at a tiny horizon, so bad parameters fail
        before any work starts.

    Returns
    -------
    dict
        The summary's slopes and counts: trials planned (n_trials), stored (n_done), run by
        this call (n_ran) and found in the store (n_reused).

    Raises
    ------
    PresetError
        Bad parameters (the dry run).
    StoreError
        A locked folder or a store that cannot be read or written.
    ValueError
        An unreachable scheduler.

    Examples
    --------
    >>> import tempfile
    >>> from fastcdl.experiments import load_preset, override
    >>> p = override(load_preset("quick"), forecasters=["cdl"], adversaries=["bernoulli"], t_min=16, t_max=32, seeds=2)
    >>> out = run(p, tempfile.mkdtemp(), workers=1, progress=False)
    >>> out["n_trials"], out["n_ran"]
    (4, 4)
    """
    out_dir = Path(out_dir)
    with connect(scheduler) if scheduler else nullcontext() as client:
        if dry:
            dry_run(preset)
        version = code_version()
        trials = plan(preset)
        out_dir.mkdir(parents=True, exist_ok=True)
        unpack(out_dir)  # a committed folder keeps its store as trials.sqlite.xz: resume from it
        with run_lock(out_dir), TrialStore(out_dir / "trials.sqlite") as store:
            done = store.done_keys()
            todo = [t for t in trials if t.key not in done]
            with writing_to(out_dir / "preset.toml"):
                (out_dir / "preset.toml").write_text(preset.to_toml())
            if preset.worst:  # the worst adversaries as they were read: the file may change later
                write_environments(out_dir, environments(preset))
            workers = workers or os.cpu_count() or 1
            bar = progress_bar(sum(t.T for t in todo), progress)
            t0 = time.perf_counter()
            added = []

            def keep(row):
                store.add(row)
                added.append(row["T"])
                if bar is not None:
                    bar.update(row["T"])
                    bar.set_postfix_str(
                        f"{len(added)}/{len(todo)} trials done, {sum(added) / (time.perf_counter() - t0):.3g} rounds/s"
                    )

            stop = None
            try:
                _execute(todo, client, workers, keep)
            except BaseException as e:  # Ctrl-C, SIGTERM, a failed trial: report what is left, then re-raise
                stop = e
            finally:
                if bar is not None:
                    bar.close()
            try:
                rows = store.rows({t.key for t in trials})
            except StoreError:
                if stop is None:
                    raise
                raise stop from None  # the error that stopped the run, not its echo in the count
            left = len(trials) - len(rows)
            if left or stop is not None:
                undone = (
                    f"{left} of {len(trials)} trials left undone; summary files unchanged; "
                    "re-run the same command to resume"
                )
                if isinstance(stop, KeyboardInterrupt):
                    raise KeyboardInterrupt(undone) from None
                if isinstance(stop, (WorkerDied, StoreError)):  # one message: what happened and what is left
                    raise type(stop)(f"{stop}; {undone}") from None
                print(f"stopped: {undone}", file=sys.stderr)
                if stop is not None:
                    raise stop
                return {
                    "n_trials": len(trials),
                    "n_done": len(rows),
                    "n_ran": len(added),
                    "n_reused": len(trials) - len(todo),
                    "slopes": [],
                }
            timing = {
                "wall_seconds_this_invocation": time.perf_counter() - t0,
                "trials_run_this_invocation": len(added),
                "trial_seconds_total": float(sum(r["seconds"] for r in rows)),
                "rounds_total": int(sum(r["T"] for r in rows)),
            }
            rates, slopes, _ = write_summary(
                out_dir,
                rows,
                metrics=preset.metrics,
                preset=preset.to_dict(),
                code_version=version,
                machine=machine_description(),
                timing=timing,
                seed=preset.master_seed,
            )
    return {
        "n_trials": len(trials),
        "n_done": len(rows),
        "n_ran": len(added),
        "n_reused": len(trials) - len(todo),
        "slopes": slopes,
        "rates": rates,
    }
