"""Rate experiments (docs/experiments.md): presets, the resumable trial store, the runner, analysis."""

from fastcdl.experiments.analysis import analyze, fit_slope, mean_interval, paired, slope_interval
from fastcdl.experiments.fill import ReplayMismatch, fill_measures
from fastcdl.experiments.summary_files import write_summary
from fastcdl.experiments.forms import form_fits
from fastcdl.experiments.presets import Preset, PresetError, load_preset, override
from fastcdl.experiments.runner import Trial, plan, run, run_trial, trial_seed
from fastcdl.experiments.store import StoreError, TrialStore

__all__ = [
    "Preset",
    "PresetError",
    "ReplayMismatch",
    "StoreError",
    "Trial",
    "TrialStore",
    "analyze",
    "fill_measures",
    "fit_slope",
    "form_fits",
    "load_preset",
    "mean_interval",
    "override",
    "paired",
    "plan",
    "run",
    "run_trial",
    "slope_interval",
    "trial_seed",
    "write_summary",
]
