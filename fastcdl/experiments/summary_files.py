"""The files of a rate run's summary: rates.csv, summary.csv, paired.csv, paired_slopes.csv,
forms.csv and summary.json, from the trials' rows (fastcdl.experiments.analysis for the
rates, slopes and paired differences; fastcdl.experiments.forms for the theoretical forms).
"""

from __future__ import annotations

import json
from pathlib import Path

from fastcdl._writing import atomic_write, csv_text
from fastcdl.experiments.analysis import (
    LEVEL,
    MIN_BOOT_T_SEEDS,
    N_BOOT,
    PAIRED_COLUMNS,
    PAIRED_SLOPE_COLUMNS,
    RATES_COLUMNS,
    SUMMARY_COLUMNS,
    analyze,
    paired,
)
from fastcdl.experiments.forms import FORMS_COLUMNS, form_fits

__all__ = ["write_summary"]


def write_summary(out_dir, rows, *, metrics, preset: dict, code_version: str, machine: str, timing: dict, seed=0):
    """Write rates.csv, summary.csv, paired.csv, paired_slopes.csv, forms.csv and summary.json
    into out_dir, atomically and together.

    Parameters
    ----------
    out_dir : str or Path
        The run folder.
    rows : list of dict
        The stored trials.
    metrics : list of str
        The metrics to analyse.
    preset : dict
        The preset (:meth:`Preset.to_dict`), recorded in summary.json.
    code_version : str
        Recorded in summary.json.
    machine : str
        A description of the machine, recorded in summary.json.
    timing : dict
        Recorded in summary.json.
    seed : int, default 0
        Seeds the bootstrap.

    Returns
    -------
    rates, slopes, ratios : list of dict
        As :func:`analyze` returns them.

    Examples
    --------
    >>> import os, tempfile
    >>> rows = [dict(forecaster_label=f, adversary_label="greedy", T=T, seed_index=i,
    ...              cdl=(1 + 0.1 * i) / T ** 0.5, ece=(2 + 0.1 * i) / T ** 0.25)
    ...         for f in ("cdl", "kt") for T in (64, 256, 1024, 4096) for i in range(3)]
    >>> out = tempfile.mkdtemp()
    >>> _ = write_summary(out, rows, metrics=["cdl"], preset={}, code_version="0", machine="", timing={})
    >>> sorted(os.listdir(out))[:3]
    ['forms.csv', 'paired.csv', 'paired_slopes.csv']
    """
    out_dir = Path(out_dir)
    rates, slopes, ratios = analyze(rows, metrics, seed=seed)
    diffs, slope_diffs = paired(rows, metrics, seed=seed)
    forms = form_fits(rows, metrics)
    doc = {
        "preset": preset,
        "code_version": code_version,
        "machine": machine,
        "timing": timing,
        "n_trials": len(rows),
        "intervals": {
            "level": LEVEL,
            "rates": f"studentized bootstrap (bootstrap-t) of the mean over seeds, {N_BOOT} resamples "
            f"(Student t below {MIN_BOOT_T_SEEDS} seeds)",
            "slopes": "jackknife over seeds (deleted at every T together), Student t with n_seeds - 1 degrees of freedom",
            "paired": "differences per seed (common random numbers), bootstrap-t; slope differences by jackknife-t",
        },
        "slopes": slopes,
        "rates": rates,
        "cdl_over_ece": ratios,
        "forms": forms,
        "paired_slopes": slope_diffs,
        "paired": diffs,
    }
    atomic_write(
        {
            out_dir / "rates.csv": csv_text(rates, RATES_COLUMNS),
            out_dir / "summary.csv": csv_text(slopes, SUMMARY_COLUMNS),
            out_dir / "paired.csv": csv_text(diffs, PAIRED_COLUMNS),
            out_dir / "paired_slopes.csv": csv_text(slope_diffs, PAIRED_SLOPE_COLUMNS),
            out_dir / "forms.csv": csv_text(forms, FORMS_COLUMNS),
            out_dir / "summary.json": json.dumps(doc, indent=1, allow_nan=True),
        }
    )
    return rates, slopes, ratios
