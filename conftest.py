"""pytest, from the repository's root: the deprecated module names (fastcdl.metrics, .stats,
.trial_metrics) warn when imported, so the doctest collection of fastcdl/ leaves them out (they
hold no examples; tests/test_deprecations.py checks them in fresh processes)."""

collect_ignore = ["fastcdl/metrics.py", "fastcdl/stats.py", "fastcdl/trial_metrics.py"]
