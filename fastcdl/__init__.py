"""fastcdl: exact, fast calibration decision loss and the online CDL forecaster.

Public names only (the README's Usage section); nothing is computed at import.
"""

from fastcdl._validate import ValidationError
from fastcdl.exact import (
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
from fastcdl.kl_calibration import klcal
from fastcdl.binned_calibration_error import calibration_error
from fastcdl.corp import CORPDecomposition, corp
from fastcdl.distance_to_calibration import LDTC, intce, ldtc
from fastcdl.smooth_ece import SmoothReliability, smece, smece_curve
from fastcdl.ici import ICI, ici
from fastcdl.classical_tests import (
    CalibrationSlope,
    HosmerLemeshowTest,
    KSTest,
    SpiegelhalterTest,
    calibration_slope,
    hosmer_lemeshow_test,
    ks_test,
    spiegelhalter_test,
)
from fastcdl.log_loss import log_loss
from fastcdl.multiclass import cdl_multiclass
from fastcdl.sample import (
    BrierDecomposition,
    CutoffCETest,
    MonotoneCDLReport,
    atb,
    atb_unbiased,
    cdl_monotone_crossfit,
    vcdl_monotone_crossfit,
    ece_sweep,
    k2_debiased,
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
from fastcdl.bucket_table import BucketStats
from fastcdl.summary import ClasswiseSummary, Summary, summary
from fastcdl.uncertainty import (
    BootstrapResult,
    CalibrationTest,
    CoverageWarning,
    Interval,
    bootstrap,
    calibration_test,
    interval,
    intervals,
)

from fastcdl._version import __version__ as __version__

# Modules renamed, reachable as attributes of the package as before (their import warns once)
_MOVED = {"metrics": "fastcdl.metrics", "stats": "fastcdl.stats", "trial_metrics": "fastcdl.trial_metrics"}


def __getattr__(name):
    if name in _MOVED:
        import importlib

        return importlib.import_module(_MOVED[name])
    raise AttributeError(f"module 'fastcdl' has no attribute {name!r}")


__all__ = [
    "BootstrapResult",
    "BrierDecomposition",
    "BucketStats",
    "CalibrationSlope",
    "CORPDecomposition",
    "ICI",
    "LDTC",
    "HosmerLemeshowTest",
    "KSTest",
    "SpiegelhalterTest",
    "CDLReport",
    "CalibrationTest",
    "CertificateWarning",
    "CoverageWarning",
    "ClasswiseResult",
    "ClasswiseSummary",
    "MEASURES",
    "Measure",
    "CutoffCETest",
    "Interval",
    "MonotoneCDLReport",
    "SampleSizeWarning",
    "SmoothReliability",
    "Summary",
    "SwapReport",
    "ValidationError",
    "atb",
    "atb_unbiased",
    "cdl_monotone_crossfit",
    "vcdl_monotone_crossfit",
    "k2_debiased",
    "ece_sweep",
    "bootstrap",
    "brier",
    "log_loss",
    "brier_decomposition",
    "bucket_stats",
    "calibration_error",
    "calibration_slope",
    "corp",
    "ici",
    "intce",
    "hosmer_lemeshow_test",
    "ks_test",
    "spiegelhalter_test",
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
    "intervals",
    "k2",
    "klcal",
    "ldtc",
    "mce",
    "rmsce",
    "smce",
    "smece",
    "smece_curve",
    "summary",
    "swap_regret",
    "swap_report",
    "ucal",
    "vcdl",
    "vcdl_monotone",
]
