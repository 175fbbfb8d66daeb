"""budget(c_exponent = 0.5, center = 1/2, cycles = 4): a drifting mean with l1 budget C,
y_t ~ Bernoulli(mu_t) (the drifting environment of Liu, Luo and Ratliff 2026;
docs/nonstationary.md).

The path, over rounds t = 1..span (span = the run's horizon unless given):

    mu_t = center + A sin(2 pi cycles (t - 1/2) / span),   A = C / S,
    S = sum_{t=1..span} |sin(2 pi cycles (t - 1/2) / span)|,

``cycles`` whole periods of a sine. Its budget min_mu sum_t |mu_t - mu| is C: the phases
x_t and x_{span+1-t} add up to 2 pi cycles, so the values sin(x_t) come in pairs of opposite
sign, center is a median of the path, and the least l1 deviation from a constant is
sum_t |mu_t - center| = A S = C. C is ``c``, or ``c_exponent = b`` for C = span^b
(b in [0, 1]), so that the budget grows with the horizon in a preset. A must keep mu_t in
[0, 1] (A <= min(center, 1 - center)); a larger budget is refused, naming c. Rounds after
span continue the sine.

One uniform per round: y = 1 iff u < mu_t. ``prob`` states mu_t. S is an O(span) compiled
sum, computed when the adversary is made (``prepare`` stores A after the parameters).

>>> ADVERSARY.resolve_params({}, horizon=1024)
{'c': 32.0, 'c_exponent': 0.5, 'center': 0.5, 'cycles': 4, 'span': 1024}
"""

import math

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int, check_real
from fastcdl.online.adversaries._nonstationary import exponent, resolve_span
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec

PARAMS = {"c": None, "c_exponent": None, "center": 0.5, "cycles": 4, "span": None}
NP = len(PARAMS)  # par: the parameters, then A


@kernel
def phase(t, cycles, span):
    """x_t = 2 pi cycles (t - 1/2) / span."""
    return 2.0 * math.pi * cycles * (t - 0.5) / span


@kernel
def prob(view, par):
    return par[2] + par[NP] * math.sin(phase(view.t, par[3], par[4]))


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < prob(view, par) else 0


@kernel
def true_mean(hist, par):
    """P(y = 1) of round hist.t + 1: prob of that round (which reads only t and the last outcome)."""
    return prob(next_round(hist), par)


@kernel
def abs_sine_sum(cycles, span):
    """S = sum_{t=1..span} |sin x_t|, with Neumaier's compensated summation."""
    total = 0.0
    comp = 0.0
    for t in range(1, span + 1):
        v = abs(math.sin(phase(t, cycles, span)))
        s = total + v
        if abs(total) >= v:
            comp += (total - s) + v
        else:
            comp += (v - s) + total
        total = s
    return total + comp


def resolve(params, horizon):
    span = resolve_span(params, horizon, "budget")
    center = check_real(params.get("center", 0.5), "center", 0.0, 1.0)
    cycles = check_int(params.get("cycles", 4), "cycles", low=1)
    b = exponent(params, "c_exponent")
    c = params.get("c")
    if c is not None:
        c = check_real(c, "c", 0.0)
    if b is None and c is None:
        b = 0.5
    if b is not None:
        C = float(span) ** b
        if c is not None and c != C:
            raise ValidationError("c", f"disagrees with c_exponent: span^{b} = {C}", value=c)
    else:
        C = c
    room = min(center, 1.0 - center) * abs_sine_sum(float(cycles), span)
    if C > room:
        raise ValidationError(
            "c",
            f"must be at most {room:.6g}, the largest budget whose path stays in [0, 1] "
            f"for center = {center}, cycles = {cycles} and span = {span}",
            value=C,
        )
    out = {"c": C}
    if b is not None:
        out["c_exponent"] = b
    out.update(center=center, cycles=cycles, span=span)
    return out


def scratch(resolved):
    return 1


def prepare(resolved, par, rng):
    C = float(resolved["c"])
    par[NP] = 0.0 if C == 0.0 else C / abs_sine_sum(float(resolved["cycles"]), int(resolved["span"]))


ADVERSARY = AdversarySpec(
    "budget",
    respond,
    dict(PARAMS),
    version=1,
    prob=prob,
    resolve=resolve,
    doc=__doc__,
    scratch=scratch,
    prepare=prepare,
    k_points=True,
    true_mean=true_mean,
)  # respond never reads the distribution
