"""The metrics a rate-experiment trial records, from which the trial store's columns,
presets, summaries, plots and RunResult's shortcuts take their lists: the measures of
:mod:`fastcdl.measures` that declare trial columns (that registry is the one place a measure
is named).

Each entry computes its columns from the run's BucketStats and has a version that keys the
stored trials (bump it when its values change); the trial store adds the columns of a new
trial metric to existing run folders.

>>> list(METRICS)[:5]
['cdl', 'vcdl', 'ece', 'k2', 'ucal']
>>> METRICS["cdl"].columns
('cdl', 'kink1', 'kink2')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fastcdl import exact as _m
from fastcdl.measures import trial_measures


@dataclass(frozen=True)
class TrialMetric:
    """name: the metric; compute(table) -> {column: value}; the first column is the metric's
    value. of: the run's table it reads ("stats" or "pseudo", fastcdl.measures.Measure.of);
    in_key: whether its version is part of the trials' keys."""

    name: str
    label: str
    compute: Callable
    columns: tuple
    version: int = 1
    of: str = "stats"
    in_key: bool = True

    def value(self, stats) -> float:
        return float(self.compute(stats)[self.name])


# A trial measures the exact CDL of its online sequence (the quantity the rate experiments
# study), so the exact metrics' SampleSizeWarning, meant for samples of continuous scores,
# is off here (fastcdl.exact.sample_size_check_off). The sample estimators of fastcdl.sample are
# not trial metrics: they estimate a predictor's calibration from i.i.d. samples, which an
# online forecaster's sequence is not (docs/estimators.md).
def _compute(measure):
    def compute(st):
        with _m.sample_size_check_off():
            if measure.trial_compute is not None:
                return measure.trial_compute(st)
            return {measure.key: measure(st)}

    return compute


#: The trial metrics: the measures of fastcdl.measures that declare trial columns, in its order.
METRICS = {
    m.key: TrialMetric(m.key, m.label, _compute(m), m.trial_columns, m.version, m.of, m.in_trial_key)
    for m in trial_measures()
}


def compute_all(stats, names=None, pseudo=None) -> dict:
    """Every column of the named metrics (default: all) of one run: the bucket table ``stats``
    and, for the pseudo metrics, the expected-count table ``pseudo`` (their columns are None
    without it)."""
    out = {}
    for name in names or METRICS:
        m = METRICS[name]
        if m.of == "pseudo":
            out.update(dict.fromkeys(m.columns) if pseudo is None else m.compute(pseudo))
        else:
            out.update(m.compute(stats))
    return out
