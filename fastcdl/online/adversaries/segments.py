"""segments(k = 4, random = 0, low = 0, high = 1): piecewise i.i.d. outcomes, K segments of
rounds, y ~ Bernoulli(mu_j) in segment j (the piecewise-stationary environment of Liu, Luo
and Ratliff 2026; docs/nonstationary.md).

- K: ``k`` segments, or ``k_exponent = a`` for K = floor(span^a) (a in [0, 1]), so that K
  grows with the horizon in a preset; 1 <= K <= span.
- Boundaries over rounds 1..span (span = the run's horizon unless given): ``random = 0``,
  equal lengths, round t in segment floor((t - 1) K / span); ``random = 1``, K - 1 distinct
  cut points c in 1..span-1 drawn one at a time as c = 1 + floor(u (span - 1)) (at most
  span - 1), a repeat drawn again; segment j is rounds c_j + 1 .. c_{j+1} (c_0 = 0,
  c_K = span). Rounds after span stay in the last segment.
- Means: drawn from the adversary's own generator before round 1, mu_j = low + (high -
  low) u_j for j = 0..K-1 (these K uniforms first, then the cuts), or given as ``means =
  "0.2,0.9,..."`` (K numbers in [0, 1]; K is then their count unless k says the same).

Then one uniform per round: y = 1 iff u < mu_j. ``prob`` states mu_j of the round (O(log K)).
The environment is drawn by ``prepare`` when the adversary is made, so the trial's seed fixes
it; memory O(K) (O(span) booleans while drawing random cuts).

>>> ADVERSARY.resolve_params({"k_exponent": 0.25}, horizon=2**16)
{'k': 16, 'k_exponent': 0.25, 'random': 0, 'low': 0.0, 'high': 1.0, 'span': 65536}
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int, check_real
from fastcdl.online.adversaries._nonstationary import exponent, floor_power, resolve_span
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec

PARAMS = {"k": 4, "k_exponent": None, "random": 0, "low": 0.0, "high": 1.0, "means": "", "span": None}
NP = len(PARAMS)  # par: the parameters, then K segment ends (last round of each), then K means


@kernel
def prob(view, par):
    """mu_j of the segment holding round view.t: the first j with end_j >= t (the last after span)."""
    K = int(par[0])
    t = view.t
    lo = 0
    hi = K - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if par[NP + mid] >= t:
            hi = mid
        else:
            lo = mid + 1
    return par[NP + K + lo]


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < prob(view, par) else 0


@kernel
def true_mean(hist, par):
    """P(y = 1) of round hist.t + 1: prob of that round (which reads only t and the last outcome)."""
    return prob(next_round(hist), par)


@kernel
def draw_environment(par, rng, given):
    """The means (unless given) and then the segment ends, from the adversary's generator."""
    K = int(par[0])
    span = int(par[6])
    low = par[3]
    high = par[4]
    if not given:
        for j in range(K):
            par[NP + K + j] = low + (high - low) * uniform(rng)
    if par[2] == 0.0:
        for j in range(K):
            par[NP + j] = ((j + 1) * span + K - 1) // K  # ceil((j + 1) span / K)
        return
    taken = np.zeros(span, dtype=np.bool_)
    need = K - 1
    while need > 0:
        c = 1 + min(int(uniform(rng) * (span - 1)), span - 2)
        if not taken[c]:
            taken[c] = True
            need -= 1
    j = 0
    for c in range(1, span):
        if taken[c]:
            par[NP + j] = c
            j += 1
    par[NP + K - 1] = span


def parse_means(text):
    """The given means: comma-separated numbers in [0, 1]."""
    try:
        values = [float(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ValidationError("means", "must be comma-separated numbers in [0, 1]", value=text) from None
    if not values:
        raise ValidationError("means", "must hold at least one number", value=text)
    for i, v in enumerate(values):
        if not (0.0 <= v <= 1.0):
            raise ValidationError("means", "must lie in [0, 1]", index=i, value=v)
    return values


def resolve(params, horizon):
    span = resolve_span(params, horizon, "segments")
    random = check_int(params.get("random", 0), "random")
    if random not in (0, 1):
        raise ValidationError("random", "must be 0 (equal lengths) or 1 (random cut points)", value=random)
    low = check_real(params.get("low", 0.0), "low", 0.0, 1.0)
    high = check_real(params.get("high", 1.0), "high", 0.0, 1.0)
    if high < low:
        raise ValidationError("high", f"must be >= low ({low})", value=high)
    given = params.get("means") or ""
    means = parse_means(given) if given else None
    a = exponent(params, "k_exponent")
    k = params.get("k")
    if k is not None:
        k = check_int(k, "k", low=1)
    if a is not None:
        K = floor_power(span, a)
        if k is not None and k != K:
            raise ValidationError("k", f"disagrees with k_exponent: floor(span^{a}) = {K}", value=k)
    elif k is not None:
        K = k
    else:
        K = len(means) if means else PARAMS["k"]
    if K > span:
        raise ValidationError("k", f"must be at most span = {span} (a segment per round at most)", value=K)
    if means is not None and len(means) != K:
        raise ValidationError("means", f"must hold K = {K} numbers, one per segment", value=given)
    out = {"k": K}
    if a is not None:
        out["k_exponent"] = a
    out.update(random=random, low=low, high=high)
    if means is not None:
        out["means"] = ",".join(repr(v) for v in means)
    out["span"] = span
    return out


def scratch(resolved):
    return 2 * int(resolved["k"])


def prepare(resolved, par, rng):
    K = int(resolved["k"])
    given = resolved.get("means")
    if given:
        par[NP + K : NP + 2 * K] = parse_means(given)
    draw_environment(par, rng, bool(given))


ADVERSARY = AdversarySpec(
    "segments",
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
