"""
A classifier's reliability diagram and decision-loss curve
==========================================================

Naive Bayes is known for probabilities that are too sure of themselves. Here it is fitted on a
synthetic problem and judged on held-out rows: its scores are continuous, so every score is a
bucket of one round and the exact CDL and ECE of those buckets measure noise. What converges on a
sample is CDL_M, the most any decision maker could gain by a monotone recalibration of the scores
(the isotonic fix), with a debiased estimate and an interval (``fc.interval``).
"""

# %%
# Fit, then score the held-out half.
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB

import fastcdl as fc

X, y = make_classification(n_samples=20_000, n_features=20, n_informative=4, random_state=0)
model = GaussianNB().fit(X[:10_000], y[:10_000])
p = model.predict_proba(X[10_000:])[:, 1]
y_test = y[10_000:]

cdl_m = fc.cdl_monotone(y_test, p)
ci = fc.interval(fc.cdl_monotone, y_test, p, seed=0)
print(f"CDL_M = {cdl_m:.3f}, debiased {ci.estimate:.3f}, 95% interval [{ci.lo:.3f}, {ci.hi:.3f}]")
print(f"ECE over 15 equal-width bins = {fc.ece(y_test, p, bins=15):.3f}")

# %%
# It prints::
#
#     CDL_M = 0.043, debiased 0.040, 95% interval [0.033, 0.045]
#     ECE over 15 equal-width bins = 0.124
#
# The reliability diagram: the 10,000 one-round buckets are drawn as equal-mass bins, each with
# a 90% Wilson band of its frequency. The bins at the ends, where naive Bayes puts most of its
# scores, sit off the diagonal: said 0.99, happened less often.
import matplotlib.pyplot as plt

from fastcdl.plot import DecisionLossDisplay, ReliabilityDisplay

fig, ax = plt.subplots(figsize=(5.6, 6.6), layout="constrained")
ReliabilityDisplay.from_predictions(y_test, p, band="wilson", ax=ax, name="Gaussian naive Bayes, held-out rows")

# %%
# The decision-loss curve of the monotone recalibration: for every threshold mu, what the task
# "act when the chance is at least mu" loses by trusting the scores, as a fraction of what it
# could lose. Its highest point is VCDL_M; CDL_M bounds the loss of every task.
fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
DecisionLossDisplay.from_predictions(y_test, p, monotone=True, ax=ax, name="Gaussian naive Bayes")
