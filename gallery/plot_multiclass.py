"""
A multiclass model: class-wise, top-label and the exact CDL over k outcomes
===========================================================================

k-class forecasts (rows of probabilities, as ``predict_proba`` returns them) reduce to binary
ones in two ways: class-wise (each class against the rest, one table per class) and top-label
(the confidence of the predicted class against being right). fastcdl also computes the CDL over
all k outcomes exactly, as a linear program over the distinct rows of forecasts. Here a 3-class
forecaster that is too sure of itself is judged all three ways.
"""

# %%
import numpy as np

import fastcdl as fc

rng = np.random.default_rng(0)
T = 30_000
# the true class probabilities sit on a grid of 10 distinct rows; the forecaster sharpens them
truth = rng.dirichlet([2, 2, 2], size=10)
rows = rng.integers(0, 10, T)
labels = np.array([rng.choice(3, p=truth[r]) for r in rows])
sharp = truth**2 / (truth**2).sum(axis=1, keepdims=True)
P = sharp[rows]

classwise = fc.cdl(labels, P, multiclass="classwise")
print("class-wise CDL:", " ".join(f"{v:.4f}" for v in classwise.per_class), f"mean {float(classwise):.4f}")
print(f"top-label ECE = {fc.ece(labels, P, multiclass='top-label'):.4f}")
print(f"CDL over 3 outcomes = {fc.cdl_multiclass(labels, P):.4f}")

# %%
# It prints::
#
#     class-wise CDL: 0.0815 0.0618 0.0577 mean 0.0670
#     top-label ECE = 0.1703
#     CDL over 3 outcomes = 0.1234
#
# The CDL over the three outcomes is larger than any class's: a decision maker who chooses among
# actions that depend on all three probabilities can exploit more than one who acts on a single
# class against the rest.
#
# One reliability diagram per class, side by side.
import matplotlib.pyplot as plt

from fastcdl.plot import ReliabilityDisplay

fig, axes = plt.subplots(1, 3, figsize=(13, 5.6))
for c, ax in enumerate(axes):
    ReliabilityDisplay.from_predictions(labels == c, P[:, c], ax=ax, band="wilson", name=f"class {c} against the rest")
fig.tight_layout()
