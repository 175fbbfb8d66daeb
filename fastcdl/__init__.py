"""fastcdl: exact, fast calibration decision loss and the online CDL forecaster.

Public names only (the README's Usage section); nothing is computed at import.
"""

from fastcdl._validate import ValidationError
from fastcdl.metrics import (
    CDLReport,
    CertificateWarning,
    ClasswiseResult,
    SampleSizeWarning,
    SwapReport,
    bucket_stats,
    cdl,
    cdl_report,
    cfdl,
    decision_loss_curve,
    ece,
    k2,
    swap_regret,
    swap_report,
    ucal,
    vcdl,
)
from fastcdl.multiclass import cdl_multiclass
from fastcdl.sample import (
    BrierDecomposition,
    CutoffCETest,
    MonotoneCDLReport,
    atb,
    atb_unbiased,
    brier,
    brier_decomposition,
    cdl_monotone,
    cdl_monotone_report,
    cutoff_ce,
    cutoff_ce_test,
    decision_loss_curve_monotone,
    mce,
    rmsce,
    smce,
    vcdl_monotone,
)
from fastcdl.measures import MEASURES, Measure
from fastcdl.stats import BucketStats
from fastcdl.summary import Summary, summary
from fastcdl.uncertainty import (BootstrapResult, CalibrationTest, CoverageWarning, Interval, bootstrap, calibration_test,
                                 interval)

__version__ = "0.1.0"

__all__ = [
    "BootstrapResult",
    "BrierDecomposition",
    "BucketStats",
    "CDLReport",
    "CalibrationTest",
    "CertificateWarning",
    "CoverageWarning",
    "ClasswiseResult",
    "MEASURES",
    "Measure",
    "CutoffCETest",
    "Interval",
    "MonotoneCDLReport",
    "SampleSizeWarning",
    "Summary",
    "SwapReport",
    "ValidationError",
    "atb",
    "atb_unbiased",
    "bootstrap",
    "brier",
    "brier_decomposition",
    "bucket_stats",
    "calibration_test",
    "cdl",
    "cdl_monotone",
    "cdl_monotone_report",
    "cdl_multiclass",
    "cdl_report",
    "cfdl",
    "cutoff_ce",
    "cutoff_ce_test",
    "decision_loss_curve",
    "decision_loss_curve_monotone",
    "ece",
    "interval",
    "k2",
    "mce",
    "rmsce",
    "smce",
    "summary",
    "swap_regret",
    "swap_report",
    "ucal",
    "vcdl",
    "vcdl_monotone",
]
