"""Draw docs/_static/landing.png, the picture on the documentation's first page: what fastcdl
computes and why CDL differs from ECE, on the forecaster of the gallery's umbrella example
(it says 0.3 where it rains 10% of the time and 0.7 where it rains 90%).

    .venv/bin/python scripts/draw_landing.py

Left: the reliability diagram, every stated value 0.2 from its frequency (ECE = 0.2). Right:
the loss of each threshold task "act when P(rain) >= mu", and CDL, the most any task with
payoffs in [0, 1] loses. The numbers in the picture are computed by fastcdl when it is drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "_static" / "landing.png"


def draw(out=OUT) -> Path:
    """Write the figure; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    import fastcdl as fc

    st = fc.BucketStats.from_table(np.array([0.3, 0.7]), np.array([500, 500]), np.array([50, 450]))
    ece, cdl = fc.ece(st), fc.cdl(st)
    kinks = np.linspace(0.0, 1.0, 401)
    _, loss = fc.decision_loss_curve(st, kinks=kinks)
    fig = Figure(figsize=(10.5, 4.2))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.35]})
    left.plot([0, 1], [0, 1], "--", color="0.5", linewidth=1)
    left.scatter(st.values, st.frequencies, s=220, color="C0", alpha=0.7, zorder=3)
    for q, f in zip(st.values, st.frequencies):
        left.annotate("", (q, f), (q, q), arrowprops=dict(arrowstyle="<->", color="C3"))
        left.text(q + 0.03, (q + f) / 2, "0.2", color="C3", va="center")
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    left.set_aspect("equal")
    left.set_xlabel("stated chance of rain")
    left.set_ylabel("how often it rained")
    left.set_title(f"ECE = {ece:.2f}: every forecast is 0.2 off", fontsize="medium")
    right.plot(kinks, loss, color="C0", label='loss of "act when P(rain) >= mu"')
    right.axhline(cdl, color="C3", linestyle=":", label=f"CDL = {cdl:.2f}: the most any task loses")
    right.scatter([0.5], [fc.cfdl(st, kink=0.5)], color="C2", zorder=3)
    right.annotate("umbrella at 1/2: loses nothing", (0.5, 0.0), xytext=(0.22, 0.08), arrowprops=dict(arrowstyle="->"))
    right.set_xlabel("threshold mu of the decision")
    right.set_ylabel("decision loss")
    right.set_ylim(0, max(cdl, float(loss.max())) * 1.35)
    right.set_title("CDL: the loss of the worst decision task, over all tasks", fontsize="medium")
    right.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


if __name__ == "__main__":
    print(draw())
