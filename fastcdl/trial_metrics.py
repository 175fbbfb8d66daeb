"""The metrics a rate-experiment trial records: one registry, from which the trial store's
columns, presets, summaries, plots and RunResult's shortcuts take their lists.

Each entry computes its columns from the run's BucketStats and has a version that keys the
stored trials (bump it when its values change). Adding a metric is one entry here plus its
test; the trial store adds its columns to existing run folders.

>>> list(METRICS)
['cdl', 'vcdl', 'ece', 'k2', 'ucal']
>>> METRICS["cdl"].columns
('cdl', 'kink1', 'kink2')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fastcdl import metrics as _m


@dataclass(frozen=True)
class TrialMetric:
    """name: the metric; compute(stats) -> {column: value}; the first column is the metric's value."""

    name: str
    label: str
    compute: Callable
    columns: tuple
    version: int = 1

    def value(self, stats) -> float:
        return float(self.compute(stats)[self.name])


# A trial measures the exact CDL of its online sequence (the quantity the rate experiments
# study), so the exact metrics' SampleSizeWarning, meant for samples of continuous scores,
# is off here (fastcdl.metrics.sample_size_check_off). The sample estimators of fastcdl.sample are
# not trial metrics: they estimate a predictor's calibration from i.i.d. samples, which an
# online forecaster's sequence is not (docs/estimators.md).
def _cdl(st):
    with _m.sample_size_check_off():
        rep = _m.cdl_report(st)
    return {"cdl": rep.value, "kink1": float(rep.kinks[0]), "kink2": float(rep.kinks[-1])}


def _one(name, fn):
    def compute(st):
        with _m.sample_size_check_off():
            return {name: fn(st)}

    return compute


METRICS = {
    "cdl": TrialMetric("cdl", "CDL", _cdl, ("cdl", "kink1", "kink2")),
    "vcdl": TrialMetric("vcdl", "VCDL", _one("vcdl", _m.vcdl), ("vcdl",)),
    "ece": TrialMetric("ece", "ECE", _one("ece", _m.ece), ("ece",)),
    "k2": TrialMetric("k2", "K2", _one("k2", _m.k2), ("k2",)),
    "ucal": TrialMetric("ucal", "UCal", _one("ucal", _m.ucal), ("ucal",)),
}


def compute_all(stats, names=None) -> dict:
    """Every column of the named metrics (default: all) of one run's table."""
    out = {}
    for name in names or METRICS:
        out.update(METRICS[name].compute(stats))
    return out
