"""spbisect(steer = 0, depth = D(T), span = T): a hidden probability that bisects the unit
interval level by level, each level held for a block of rounds four times longer than the
one before (docs/ece-lower-bound-adversary.md).

The sign-preservation mechanism of the ECE lower bounds (Qiao and Valiant 2021; Dagan et al.
2024) as far as their public text could be read: not their published schedules, which could
not be read. Level k = 0..D-1 holds p_k, the midpoint of a dyadic cell of width 2^-k (p_0 =
1/2); level k + 1 moves into one half of that cell, p_{k+1} = p_k + d_{k+1} 2^-(k+2) with d =
-1 (lower half) or +1 (upper half). Every later p stays on the side d_{k+1} of p_k, so a
value stated while p was p_k keeps the sign of its bias v n_v - s_v in expectation: stating
it again only adds to it. In each round of level k, y ~ Bernoulli(p_k).

- Schedule over rounds 1..span: level k is rounds E_{k-1} + 1 .. E_k, E_k = floor(span (4^(k+1)
  - 1) / (4^D - 1)) (E_{-1} = 0, E_{D-1} = span): lengths proportional to 4^k, the rounds it
  takes the outcomes to tell p_k from its parent (a difference of 2^-(k+1)). Rounds after
  span stay in the last level.
- depth D: at most floor(log4(3 span + 1)), the default, the deepest schedule in which level
  k lasts at least 4^k rounds; the last level's step is then about (3 span)^-1/2, the
  resolution of span outcomes.
- steer = 0 (oblivious, the class of Dagan et al.'s adversary): d_1..d_{D-1} are fair coins
  drawn before round 1 from the adversary's generator, d = -1 iff u < 1/2. ``prob`` and
  ``true_mean`` state p of each round.
- steer = 1 (adaptive, the class of Qiao and Valiant's): at the last round E_k of level k <
  D - 1, from the table as it stands (rounds 1..E_k - 1), the half whose midpoint c leaves the
  forecaster less bias to cancel, F(c) = sum over stated v < c of max(bias_v, 0) + sum over v
  > c of max(-bias_v, 0) (signpreserve's flippable bias); within REL_TIE (1 + sum |bias|) of
  a tie, the coin d_{k+1} drawn as for steer = 0. The bisecting pointer of the
  sign-preservation game, which keeps the sign of every pointed cell.

Then one uniform per round: y = 1 iff u < p_t. Memory: 3 D + 3 float64 (the level ends, the
path, the coins; D <= 32). Cost per round: O(log D) to find the level; steer = 1 adds O(m)
(m stated values) once per level.

>>> ADVERSARY.resolve_params({}, horizon=2**20)
{'steer': 0, 'depth': 10, 'span': 1048576}
>>> level_ends(1000, 5)
[2, 14, 61, 249, 1000]
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int
from fastcdl.online.adversaries._nonstationary import resolve_span
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec

PARAMS = {"steer": 0, "depth": None, "span": None}
STEER, DEPTH, SPAN = 0, 1, 2
# par: the parameters, then the scratch: D level ends E_k from NP, the path p_k from NP + D and
# the coins d_k from NP + 2 D (d_0 = 0: level 0 has no step)
NP = len(PARAMS)
REL_TIE = 1e-9  # flippable biases within REL_TIE (1 + sum |bias|) of each other: a tie


@kernel
def level_of(par, t):
    """The level k of round t: the first k with E_k >= t (the last level after span)."""
    D = int(par[DEPTH])
    lo = 0
    hi = D - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if par[NP + mid] >= t:
            hi = mid
        else:
            lo = mid + 1
    return lo


@kernel
def prob(view, par):
    """p_k of the level holding round view.t."""
    return par[NP + int(par[DEPTH]) + level_of(par, view.t)]


@kernel
def flippable(q, n, s, c):
    """F(c): the bias the forecaster could cancel if the outcomes had mean c, and sum |bias|."""
    f = 0.0
    total = 0.0
    for i in range(q.shape[0]):
        b = q[i] * n[i] - s[i]
        total += abs(b)
        if q[i] < c and b > 0.0:
            f += b
        elif q[i] > c and b < 0.0:
            f -= b
    return f, total


@kernel
def steer_next(table, par, k):
    """Level k + 1's p after level k under steer = 1: the half with the smaller F."""
    D = int(par[DEPTH])
    p = par[NP + D + k]
    half = 0.5 ** (k + 2)
    f_lo, total = flippable(table.q, table.n, table.s, p - half)
    f_hi, total = flippable(table.q, table.n, table.s, p + half)
    tol = REL_TIE * (1.0 + total)
    if f_lo < f_hi - tol:
        return p - half
    if f_hi < f_lo - tol:
        return p + half
    return p + par[NP + 2 * D + k + 1] * half


@kernel
def respond(view, table, par, rng):
    p = prob(view, par)
    if par[STEER] == 1.0:
        D = int(par[DEPTH])
        k = level_of(par, view.t)
        if k < D - 1 and view.t == par[NP + k]:  # the last round of level k: choose level k + 1's half
            par[NP + D + k + 1] = steer_next(table, par, k)
    return 1 if uniform(rng) < p else 0


@kernel
def true_mean(hist, par):
    """P(y = 1) of round hist.t + 1: prob of that round (under steer = 1, its level's p is
    written by respond at the end of the level before, ahead of this call)."""
    return prob(next_round(hist), par)


@kernel
def draw_path(par, rng):
    """The coins d_1..d_{D-1} (one uniform each, d = -1 iff u < 1/2) and the path they give."""
    D = int(par[DEPTH])
    par[NP + D] = 0.5
    par[NP + 2 * D] = 0.0  # level 0 has no step
    for k in range(1, D):
        d = -1.0 if uniform(rng) < 0.5 else 1.0
        par[NP + 2 * D + k] = d
        par[NP + D + k] = par[NP + D + k - 1] + d * 0.5 ** (k + 1)


def max_depth(span):
    """floor(log4(3 span + 1)): the largest D with 4^D - 1 <= 3 span (exact integers)."""
    D = 1
    while 4 ** (D + 1) - 1 <= 3 * span:
        D += 1
    return D


def level_ends(span, depth):
    """E_0..E_{D-1}: E_k = floor(span (4^(k+1) - 1) / (4^D - 1)), exact integers."""
    M = 4**depth - 1
    return [span * (4 ** (k + 1) - 1) // M for k in range(depth)]


def resolve(params, horizon):
    span = resolve_span(params, horizon, "spbisect")
    steer = check_int(params.get("steer", 0), "steer")
    if steer not in (0, 1):
        raise ValidationError("steer", "must be 0 (oblivious coins) or 1 (steered by the table)", value=steer)
    most = max_depth(span)
    depth = params.get("depth")
    depth = most if depth is None else check_int(depth, "depth", low=1)
    if depth > most:
        raise ValidationError(
            "depth", f"must be at most floor(log4(3 span + 1)) = {most} (span = {span}: a round per level)", value=depth
        )
    return {"steer": steer, "depth": depth, "span": span}


def scratch(resolved):
    return 3 * int(resolved["depth"])


def prepare(resolved, par, rng):
    D = int(resolved["depth"])
    par[NP : NP + D] = level_ends(int(resolved["span"]), D)
    draw_path(par, rng)


ADVERSARY = AdversarySpec(
    "spbisect",
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
