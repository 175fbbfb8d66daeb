"""scikit-learn scorers of the binned calibration error: ``neg_l1_calibration_error``,
``neg_l2_calibration_error`` and ``neg_max_calibration_error``.

Each is ``sklearn.metrics.make_scorer(fastcdl.calibration_error, greater_is_better=False,
response_method="predict_proba", norm=...)``: a binary classifier's probability of its
positive class (``classes_[1]``) is scored, and the value is negated so that greater is
better, as scikit-learn's ``neg_*`` scorers are. Pass one as ``scoring=`` to
``cross_val_score``, ``GridSearchCV`` and the like. Labels other than 0 and 1 need the
positive class: :func:`make_calibration_scorer` with ``pos_label=``. scikit-learn is imported
when a scorer is first asked for (it is not a dependency of fastcdl's core).

>>> from sklearn.linear_model import LogisticRegression
>>> from sklearn.model_selection import cross_val_score
>>> import numpy as np
>>> from fastcdl.scorers import neg_l2_calibration_error
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(400, 2)); y = (rng.random(400) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
>>> scores = cross_val_score(LogisticRegression(), X, y, cv=2, scoring=neg_l2_calibration_error)
>>> bool((scores <= 0).all())
True
"""

from __future__ import annotations

# the three scorers are made when first asked for (module __getattr__): sklearn is imported then
__all__ = ["make_calibration_scorer", "SCORER_NAMES"]

#: Scorer name -> norm of :func:`fastcdl.calibration_error`.
SCORER_NAMES = {
    "neg_l1_calibration_error": "l1",
    "neg_l2_calibration_error": "l2",
    "neg_max_calibration_error": "max",
}


def make_calibration_scorer(norm="l2", **kwargs):
    """A scikit-learn scorer of :func:`fastcdl.calibration_error` with the given norm and
    options (``squared``, ``n_bins``, ``strategy``, ``pos_label``), negated (greater is better).

    Parameters
    ----------
    norm : {"l1", "l2", "max"}, default "l2"
    **kwargs
        Passed to :func:`fastcdl.calibration_error` (and ``pos_label`` to scikit-learn, which
        then scores the probability of that class).

    Returns
    -------
    sklearn.metrics._scorer._Scorer
        As ``sklearn.metrics.make_scorer`` returns.

    Raises
    ------
    ValidationError
        (a ValueError) for a norm other than the three, or an option calibration_error refuses.

    Examples
    --------
    >>> make_calibration_scorer("max", n_bins=15)
    make_scorer(calibration_error, greater_is_better=False, response_method='predict_proba', norm=max, n_bins=15)
    """
    from sklearn.metrics import make_scorer

    from fastcdl._validate import check_name
    from fastcdl.binned_calibration_error import NORMS, calibration_error

    check_name(norm, NORMS, "norm")
    calibration_error([0, 1], [0.5, 0.5], norm=norm, **{k: v for k, v in kwargs.items() if k != "pos_label"})
    return make_scorer(calibration_error, greater_is_better=False, response_method="predict_proba", norm=norm, **kwargs)


def __getattr__(name):
    if name in SCORER_NAMES:
        scorer = make_calibration_scorer(SCORER_NAMES[name])
        globals()[name] = scorer
        return scorer
    raise AttributeError(f"module 'fastcdl.scorers' has no attribute {name!r}")
