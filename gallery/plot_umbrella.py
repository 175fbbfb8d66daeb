"""
The umbrella: ECE is 0.2, the umbrella loses nothing, CDL does not vanish
==========================================================================

A forecaster says 70% on the days when it rains 90% of the time, and 30% on the days when it
rains 10% of the time. Its expected calibration error is 0.2: every stated probability is 0.2
away from the frequency it stands for.

Whether that matters depends on the decision. Someone who takes an umbrella when the chance of
rain is at least one half acts the same on 70% as on 90%, and the same on 30% as on 10%: the
umbrella task loses nothing to the miscalibration. The calibration decision loss (CDL) asks the
question for every decision task with payoffs in [0, 1] at once: how much could the best-placed
decision maker gain by recalibrating the forecasts? Someone who cancels a picnic only when rain
is 80% likely or more keeps the picnic on the "70%" days, when it rains 90% of the time.
"""

# %%
# The forecasts as a bucket table: two stated values, each with its rounds and rainy days.
import numpy as np

import fastcdl as fc

q = np.array([0.3, 0.7])  # the stated probabilities
n = np.array([500, 500])  # days each was said
s = np.array([50, 450])  # rainy days among them: frequencies 0.1 and 0.9
st = fc.BucketStats.from_table(q, n, s)
print(f"ECE = {fc.ece(st):.4f}")
print(f"CDL = {fc.cdl(st):.4f}")

# %%
# It prints::
#
#     ECE = 0.2000
#     CDL = 0.2000
#
# Some task with payoffs in [0, 1] loses 0.2 per day to these forecasts (``fc.cdl_report(st)``
# names it). The decision-loss curve gives the loss of
# each V-shaped task (act when the chance is at least mu) as a fraction of the most that task can
# lose: zero at the umbrella's threshold 1/2 (and wherever the forecasts and the frequencies
# fall on the same side of mu), largest at the thresholds between a stated value and its
# frequency.
kinks = np.linspace(0.0, 1.0, 401)
_, loss = fc.decision_loss_curve(st, kinks=kinks)
umbrella = fc.cfdl(st, kink=0.5)
picnic = fc.cfdl(st, kink=0.8)
print(f"umbrella task (act at 0.5): loss {umbrella:.4f}")
print(f"picnic task (act at 0.8): loss {picnic:.4f}")

# %%
# It prints::
#
#     umbrella task (act at 0.5): loss 0.0000
#     picnic task (act at 0.8): loss 0.0625
#
# The umbrella is safe, the picnic is not, and ECE alone cannot tell the two apart.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6.4, 3.8))
ax.plot(kinks, loss, color="C0", label="loss of the task 'act when P(rain) >= mu'")
ax.scatter([0.5, 0.8], [umbrella, picnic], color=["C2", "C3"], zorder=3)
ax.annotate("umbrella: nothing lost", (0.5, umbrella), xytext=(0.18, 0.12), arrowprops=dict(arrowstyle="->"))
ax.annotate("picnic", (0.8, picnic), xytext=(0.86, 0.2), arrowprops=dict(arrowstyle="->"))
for v in (0.1, 0.3, 0.7, 0.9):
    ax.axvline(v, color="0.85", linewidth=0.8, zorder=0)
ax.set_xlabel("threshold mu of the decision")
ax.set_ylabel("decision loss (fraction of the task's range)")
ax.set_title(f"ECE = {fc.ece(st):.2f} everywhere; the loss depends on the task")
ax.legend(loc="upper left", fontsize="small")
fig.tight_layout()
