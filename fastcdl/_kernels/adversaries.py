"""Adversaries of the online game (docs/algorithm1.md): one round's outcome y in {0, 1}.

An adversary sees the round's distribution (stated predictions ``preds`` with
probabilities ``probs``, always two slots, the second with probability 0 for a point
mass) and the public history: the round number t (1-based), the previous outcome
prev_y (-1 before the first round), and for each slot the number of past rounds n_at
with that stated prediction and how many of them had y = 1 (s_at). Never the draw.

Adversary codes and their parameter vectors ``apar``:
    BERNOULLI  [p]                 i.i.d. Bernoulli(p)
    DRIFT      [amplitude, period] Bernoulli(1/2 + amplitude sin(2 pi t / period))
    MARKOV     [p01, p10]          two-state chain; the first outcome from its stationary law
    CONTRARIAN []                  y = 1 when the expected stated prediction is below 1/2
    GREEDY     []                  the y with the larger expected increase of sum_v |bias_v|
"""

import math

from fastcdl._kernels._jit import kernel

from fastcdl._kernels.rng import uniform

BERNOULLI = 0
DRIFT = 1
MARKOV = 2
CONTRARIAN = 3
GREEDY = 4


@kernel
def adversary_prob(code, apar, t, prev_y):
    """P(y_t = 1) of a stochastic adversary (BERNOULLI, DRIFT, MARKOV) given the public history."""
    if code == BERNOULLI:
        return apar[0]
    if code == DRIFT:
        return 0.5 + apar[0] * math.sin(2.0 * math.pi * t / apar[1])
    if prev_y < 0:  # MARKOV, first round: the stationary probability of state 1
        rate = apar[0] + apar[1]
        return 0.5 if rate == 0.0 else apar[0] / rate
    if prev_y == 0:
        return apar[0]
    return 1.0 - apar[1]


@kernel
def greedy_gain(y, preds, probs, n_at, s_at):
    """Expected increase of sum_v |bias_v| if the outcome is y; bias_v = v n_v - s_v."""
    total = 0.0
    for j in range(2):
        bias = preds[j] * n_at[j] - s_at[j]
        total += probs[j] * (abs(bias + preds[j] - y) - abs(bias))
    return total


@kernel
def adversary_outcome(code, apar, rng, t, prev_y, preds, probs, n_at, s_at):
    """The outcome y_t in {0, 1} chosen by adversary ``code``; draws from ``rng`` when it randomises."""
    if code == CONTRARIAN:
        mean = probs[0] * preds[0] + probs[1] * preds[1]
        return 1 if mean < 0.5 else 0
    if code == GREEDY:
        up = greedy_gain(1, preds, probs, n_at, s_at)
        down = greedy_gain(0, preds, probs, n_at, s_at)
        if up > down:
            return 1
        if down > up:
            return 0
        return 1 if uniform(rng) < 0.5 else 0
    return 1 if uniform(rng) < adversary_prob(code, apar, t, prev_y) else 0
