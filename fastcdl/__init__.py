"""fastcdl: exact, fast calibration decision loss and the online CDL forecaster.

Public names only (the README's Usage section); nothing is computed at import.
"""

from fastcdl._validate import ValidationError
from fastcdl.metrics import (
    CDLReport,
    CertificateWarning,
    bucket_stats,
    cdl,
    cdl_report,
    cfdl,
    decision_loss_curve,
    ece,
    k2,
    swap_regret,
    ucal,
    vcdl,
)
from fastcdl.multiclass import cdl_multiclass
from fastcdl.stats import BucketStats

__version__ = "0.1.0"

__all__ = [
    "BucketStats",
    "CDLReport",
    "CertificateWarning",
    "ValidationError",
    "bucket_stats",
    "cdl",
    "cdl_multiclass",
    "cdl_report",
    "cfdl",
    "decision_loss_curve",
    "ece",
    "k2",
    "swap_regret",
    "ucal",
    "vcdl",
]
