"""The measures outside the trials' key, completed for trials stored before them.

smce, klcal and the pseudo measures (docs/pseudo.md) are functions of a trial's tables and
not part of its key, so a store filled before they existed keeps its trials, with NULL in
their columns. :func:`fill_measures` completes those rows:

- smce, klcal and the proper losses (brier, log_loss) from the stored bucket table, with no
  run when they are all that is missing;
- the expected-count table (``pseudo_table``) and the pseudo measures: for a forecaster that
  declares ``point_mass`` (one stated value a round), the bucket table itself, bit for bit
  what the engine would have kept; for any other, the trial is run again, and its table is
  stored only when the run reproduces every stored measure of the key, the bucket count and
  the bucket table exactly (:class:`ReplayMismatch` otherwise: nothing of that trial is
  written).

Each row is written in its own transaction, so an interrupted fill keeps what it finished
and the same call resumes. ``fastcdl leaderboard --run`` calls it after the grid's trials.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def later_columns() -> tuple:
    """The store columns of the trial measures outside the key (smce, klcal, the pseudo
    ones) and ``pseudo_table``.

    Examples
    --------
    >>> later_columns()[-1]
    'pseudo_table'
    """
    from fastcdl.trial_measures import METRICS

    return tuple(c for m in METRICS.values() if not m.in_key for c in m.columns) + ("pseudo_table",)


def table_columns() -> tuple:
    """The later columns that are measures of the bucket table alone (of = "stats"): a stored
    row lacking only these is completed from its stored table, with no run.

    Examples
    --------
    >>> "brier" in table_columns() and "pseudo_ece" not in table_columns()
    True
    """
    from fastcdl.trial_measures import METRICS

    return tuple(c for m in METRICS.values() if not m.in_key and m.of == "stats" for c in m.columns)


def _key_columns() -> tuple:
    from fastcdl.trial_measures import METRICS

    return tuple(c for m in METRICS.values() if m.in_key for c in m.columns) + ("n_buckets",)


class ReplayMismatch(ValueError):
    """A trial run again did not reproduce its stored measures (its code is not the code that
    stored it); the message names the trial and the first differing column."""


def missing(rows) -> list[dict]:
    """The stored rows whose later measures are incomplete (any of :func:`later_columns` NULL),
    among those with an algorithm version (a replayable key)."""
    cols = later_columns()
    return [r for r in rows if r.get("algorithm_version") is not None and any(r.get(c) is None for c in cols)]


def _same_table(a, b) -> bool:
    return all(
        np.array_equal(x, y) for x, y in zip((a.values, a.counts, a.positives), (b.values, b.counts, b.positives))
    )


def complete(row: dict) -> dict:
    """The later measures of one stored row, as {column: value}: from its bucket table for a
    point-mass forecaster, else from a run of the trial checked against the row.

    Cost: for a forecaster that randomizes, one run of T rounds; otherwise the measures of
    one table.

    Raises
    ------
    ReplayMismatch
        The run differs from the stored row.

    Examples
    --------
    >>> from fastcdl.experiments import load_preset, plan
    >>> from fastcdl.experiments.runner import run_trial
    >>> row = run_trial(plan(load_preset("quick"))[0])
    >>> old = {**row, **dict.fromkeys(later_columns())}
    >>> complete(old)["pseudo_ece"] == row["pseudo_ece"]
    True
    """
    from fastcdl.experiments.runner import Trial, run_trial
    from fastcdl.experiments.store import pack_table, unpack_table
    from fastcdl.online import registry
    from fastcdl.bucket_table import BucketStats
    from fastcdl.trial_measures import METRICS, compute_all

    cols = later_columns()
    stored = None if row.get("bucket_table") is None else unpack_table(row["bucket_table"])
    spec = registry.forecaster(row["forecaster"])
    if stored is not None and not spec.point_mass and _from_table(row, registry):
        # only measures of the bucket table are missing (the proper losses, added later): from it
        of_table = table_columns()
        values = compute_all(stored, names=[m.name for m in METRICS.values() if set(m.columns) <= set(of_table)])
        return {c: values[c] for c in of_table}
    if stored is not None and spec.point_mass:
        pseudo = BucketStats.from_table(
            stored.values, stored.counts.astype(np.float64), stored.positives.astype(np.float64)
        )
        values = compute_all(stored, pseudo=pseudo)
        return {c: values[c] for c in cols[:-1]} | {"pseudo_table": pack_table(pseudo)}
    new = run_trial(Trial(**{k: row[k] for k in Trial.__dataclass_fields__}))
    for c in _key_columns():
        if row.get(c) is not None and not (new[c] == row[c] or (new[c] != new[c] and row[c] != row[c])):
            raise ReplayMismatch(
                f"trial {row['forecaster_label']} against {row['adversary_label']} at T = {row['T']}, seed "
                f"{row['seed_index']}: run again, its {c} is {new[c]!r}, stored {row[c]!r}; its later "
                "measures are left NULL"
            )
    if stored is not None and not _same_table(unpack_table(new["bucket_table"]), stored):
        raise ReplayMismatch(
            f"trial {row['forecaster_label']} against {row['adversary_label']} at T = {row['T']}, seed "
            f"{row['seed_index']}: run again, its bucket table differs from the stored one; its later measures "
            "are left NULL"
        )
    return {c: new[c] for c in cols}


def _from_table(row, registry) -> bool:
    """Whether :func:`complete` takes this row's later measures from its stored bucket table
    (no run): a point-mass forecaster's, or one that lacks only measures of that table."""
    if row.get("bucket_table") is None:
        return False
    if registry.forecaster(row["forecaster"]).point_mass:
        return True
    of_table = table_columns()
    return all(row.get(c) is not None for c in later_columns() if c not in of_table)


def _complete_keyed(row):
    return row["key"], complete(row)


def fill_measures(folder, *, workers=None, progress=False) -> dict:
    """Complete the later measures (``later_columns()`` of this module) of every stored trial of a run folder
    that lacks them; see the module's text.

    Parameters
    ----------
    folder : str or Path
        A run folder (its trials.sqlite).
    workers : int, optional
        Local worker processes for the re-runs (default: every CPU).
    progress : bool, default False
        A progress bar over the rounds to re-run (tqdm).

    Returns
    -------
    dict
        ``n_missing``, ``n_from_tables`` (point-mass trials), ``n_replayed``.

    Raises
    ------
    ReplayMismatch
        A re-run differs from its stored row (the rows completed before it are kept).
    StoreError
        A locked folder or a store that cannot be read or written.

    Examples
    --------
    >>> import tempfile
    >>> from fastcdl.experiments import load_preset, override, plan
    >>> from fastcdl.experiments.runner import run_trials
    >>> p = override(load_preset("quick"), forecasters=["kt"], adversaries=["bernoulli"], t_min=16, t_max=32, seeds=2)
    >>> d = tempfile.mkdtemp(); _ = run_trials(plan(p), d, workers=1)
    >>> fill_measures(d, workers=1)["n_missing"]
    0
    """
    from fastcdl.experiments.runner import run_each
    from fastcdl.experiments.workers import progress_bar
    from fastcdl.experiments.store import TrialStore, run_lock
    from fastcdl.online import registry

    folder = Path(folder)
    with run_lock(folder), TrialStore(folder / "trials.sqlite") as store:
        rows = missing(store.rows())
        easy = [r for r in rows if _from_table(r, registry)]
        hard = [r for r in rows if r not in easy]
        for r in easy:
            store.set_columns(r["key"], complete(r))
        bar = progress_bar(sum(r["T"] for r in hard), progress)
        workers = workers or os.cpu_count() or 1

        def keep(out):
            key, values = out
            store.set_columns(key, values)
            if bar is not None:
                bar.update(by_key[key])

        by_key = {r["key"]: r["T"] for r in hard}
        try:
            run_each(hard, workers, keep, fn=_complete_keyed)
        finally:
            if bar is not None:
                bar.close()
    return {"n_missing": len(rows), "n_from_tables": len(easy), "n_replayed": len(hard)}
