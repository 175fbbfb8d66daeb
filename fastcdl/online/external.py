"""The external forecast of the calibeating game, recorded: how good was b_t, the forecast the
player saw (docs/calibeating.md).

Each round of a run whose forecaster declares ``needs_external`` the engine notes the external
forecast b_t and the outcome y_t in an :data:`ExternalRecord`, by bins of width 1/1000 of b:
the rounds n_k, the outcomes s_k, and the sums of b, b^2 and b y over the bin's rounds.
From these, O(bins):

- Brier(b) = (1/T) sum_t (b_t - y_t)^2, exactly (from the sums);
- the refinement of b, REF(b) = (1/T) sum_k n_k rho_k (1 - rho_k), rho_k = s_k / n_k: the
  Brier score of the forecast that says, in each bin of b, the frequency of y there. It is
  what calibeating promises to reach (Foster and Hart 2023): a forecaster that sees b_t can
  score REF(b) + o(1), gaining b's miscalibration;
- CAL(b) = Brier(b) - REF(b), b's calibration part (Murphy's reliability when b takes at most
  one value per bin, as the built-in environments' b does; otherwise it also holds the spread
  of b inside the bins).

>>> rec = new_record()
>>> for b, y in [(0.25, 0), (0.25, 1), (0.75, 1), (0.75, 1)]:
...     note_external(rec, b, y)
>>> s = score(rec)
>>> s.brier, s.refinement, s.calibration
(0.1875, 0.125, 0.0625)
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from fastcdl._compiled._jit import kernel

__all__ = ["BINS", "ExternalRecord", "ExternalScore", "new_record", "note_external", "score"]

#: The record's bins of b, each of width 1/BINS (note_external's 1000 is this number).
BINS = 1000
#: Per bin of b: the rounds n, the outcomes s, and the sums of b, b^2 and b y (float64 arrays of BINS).
ExternalRecord = namedtuple("ExternalRecord", ["n", "s", "b", "bb", "by"])


def new_record() -> ExternalRecord:
    """An empty record (five float64 arrays of BINS zeros)."""
    return ExternalRecord(*(np.zeros(BINS) for _ in ExternalRecord._fields))


@kernel(inline="always")
def note_external(rec, b, y):
    """Add round (b, y) to its bin floor(1000 b) (b = 1 in the last). O(1)."""
    k = min(int(b * 1000.0), 999)
    rec.n[k] += 1.0
    rec.b[k] += b
    rec.bb[k] += b * b
    if y == 1:
        rec.s[k] += 1.0
        rec.by[k] += b


@dataclass(frozen=True)
class ExternalScore:
    """How the external forecast b of a calibeating run scored, per round.

    Attributes
    ----------
    rounds : int
        The rounds recorded.
    brier : float
        Brier(b), the mean of (b_t - y_t)^2.
    refinement : float
        REF(b): the Brier score of the bin frequencies of b (what calibeating reaches).
    calibration : float
        Brier(b) - REF(b): what b loses to miscalibration, the most a calibeater gains.

    Examples
    --------
    >>> score(new_record()).rounds
    0
    """

    rounds: int
    brier: float
    refinement: float
    calibration: float


def score(rec: ExternalRecord) -> ExternalScore:
    """The :class:`ExternalScore` of a record, O(BINS); NaN scores for no rounds."""
    T = float(rec.n.sum())
    if T == 0:
        return ExternalScore(0, float("nan"), float("nan"), float("nan"))
    brier = float((rec.bb - 2.0 * rec.by + rec.s).sum()) / T
    seen = rec.n > 0
    rho = rec.s[seen] / rec.n[seen]
    refinement = float((rec.n[seen] * rho * (1.0 - rho)).sum()) / T
    return ExternalScore(int(round(T)), brier, refinement, brier - refinement)
