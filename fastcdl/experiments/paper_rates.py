"""The rates the papers prove for the forecasters, per round, on the measure each bounds: the
leaderboard's theory table and the submission records' claims (fastcdl.experiments.leaderboard,
fastcdl.experiments.submissions).

>>> PAPER_RATES["cdl"].measure
'cdl'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PAPER_RATES", "PaperRate"]


@dataclass(frozen=True)
class PaperRate:
    """A paper's rate for a forecaster, per round (the measures are averages over T rounds).

    Attributes
    ----------
    measure : str
        The trial measure the paper bounds (a key of :data:`fastcdl.measures.MEASURES`).
    exponent : float
        b in T^b (log T)^c per round.
    log_power : float
        c.
    text : str
        The rate and its source, in words.
    """

    measure: str
    exponent: float
    log_power: float
    text: str

    def slope_over(self, Ts) -> float:
        """The least-squares slope of log(T^b (log T)^c) against log T over the horizons Ts (the
        measured slope's window): b, plus what the log factor adds over that window."""
        from fastcdl.experiments.analysis import fit_slope

        T = np.asarray(Ts, dtype=float)
        return fit_slope(T, T**self.exponent * np.log(T) ** self.log_power)


_SPR_EPS = 0.0342855641  # Dai & Fishelson 2026: ECE x T = O(T^((2 + eps)/(3 + 2 eps)))

#: The rate a paper proves for a forecaster, on the measure it bounds (per round). Forecasters
#: without one (baselines and ablations) are absent; an entry whose forecaster or measure this
#: version does not have is skipped.
PAPER_RATES = {
    "cdl": PaperRate("cdl", -0.5, 1.0, "CDL O(sqrt(T) log T) (Hu & Wu 2024, Theorem 1)"),
    "foster": PaperRate("ece", -1 / 3, 0.0, "ECE x T = O(T^(2/3)) (Foster & Vohra 1998)"),
    "ftpl": PaperRate("ucal", -0.5, 0.0, "U-calibration Theta(sqrt(K T)), K = 2 (Luo, Senapati & Sharan 2024)"),
    "acrs": PaperRate(
        "smce",
        -0.5,
        0.0,
        "distance to calibration <= 2 sqrt(T) + 1 (Arunachaleswaran et al. "
        "2024); smCE is within a constant factor of it",
    ),
    "klcal": PaperRate(
        "pseudo_klcal", -2 / 3, 2 / 3, "pseudo KL-calibration O(T^(1/3) (log T)^(2/3)) (Luo, Senapati & Sharan 2025)"
    ),
    "l2cal": PaperRate(
        "pseudo_k2", -2 / 3, 1.0, "pseudo l2-calibration O(T^(1/3) log T) (Fishelson et al. 2025, Theorem 4)"
    ),
    "dyadic": PaperRate(
        "ece",
        -1 / 3,
        0.0,
        "ECE x T = O~(T^(2/3)) worst case, O~(sqrt T) i.i.d., O~(sqrt(J T)) with J segments "
        "(Roth, Zhang, Morgenstern & Huang 2026; its log factors could not be read)",
    ),
    "noisy": PaperRate(
        "ece",
        -1 / 4,
        0.0,
        "ECE and CDL O(sqrt(eps)) per round for a base at distance eps from calibration (Hartline, Wu & "
        "Yang 2025, abstract); eps = T^(-1/2) for the default base acrs",
    ),
    "spr": PaperRate(
        "ece",
        (2 + _SPR_EPS) / (3 + 2 * _SPR_EPS) - 1,
        0.0,
        "ECE x T = O(T^((2 + eps)/(3 + 2 eps))), eps = 0.0343 (Dai & Fishelson 2026)",
    ),
}
