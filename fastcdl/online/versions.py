"""Declared algorithm versions: what a stored trial's numbers depend on.

A rate experiment's trial is keyed by the versions of its forecaster, its adversary, the
simulate engine (loop, generator, seeds, bucket table) and the metrics it records; for the
built-ins never by a hash of the source files. So a refactor that changes no result reuses
every stored trial, and a change that moves any result must bump the version of what
changed, by hand: the ``version`` of the forecaster's or adversary's spec (its module's
FORECASTER or ADVERSARY), ENGINE here, or a metric's entry in fastcdl.trial_measures.
tests/test_versions.py replays trials of the committed results folders and compares them bit
for bit with the stored numbers, so a behaviour change cannot slip in unbumped. A user's
plug-in has no such test: its version carries a hash of its code as well
(fastcdl.online.plugins.code_hash), so its trials are recomputed whenever its code changes.

>>> algorithm_version("cdl", "greedy")
'forecaster=cdl/3 adversary=greedy/2 engine/1 metrics=cdl/1,ece/1,k2/1,ucal/1,vcdl/1'
"""

from __future__ import annotations

# The simulate engine: the loop, the generators, seeds and the bucket table.
ENGINE = 1

# Versions a component had before its current one, with what changed. Stored trials keep the
# version they ran under (they are never re-keyed or mixed with newer ones); a preset resumed
# after a bump runs that component's trials again.
_EXACT_SIGNS = (
    "step 1 decided on the signs of float sums of the raw points; the next version decides on "
    "their exact signs (a float residue such as -2.2e-16 where G_b is 0 changed the path)"
)
SUPERSEDED = {
    "cdl": {
        1: "scalar MsMwC oracle (math.exp per copy); version 2 vectorises it, which changes "
        "the rounding of Lam and of the step-1 probability r",
        2: _EXACT_SIGNS,
    },
    "kt": {1: _EXACT_SIGNS},
    "sign": {1: _EXACT_SIGNS},
    "uniform": {1: _EXACT_SIGNS},
    "contrarian": {
        1: "compared the float mean stated prediction with 1/2; version 2 compares exactly (at a mean "
        "of exactly 1/2, such as 1/4 x 1/5 + 3/4 x 3/5, version 1 said 1)"
    },
    "greedy": {
        1: "compared the float expected increases; version 2 compares them exactly (at an exact tie "
        "version 1 could skip its coin)"
    },
    "lookahead": {
        1: "compared the float expectations of CDL_K exactly; version 2 calls them a tie within 16 "
        "units of roundoff (an exact tie rounded apart by two evaluation orders skipped the coin)"
    },
    "klcal": {
        1: "the default grid size was the paper's K as it is (odd at some horizons); version 2 rounds it "
        "up to an even number, which puts 1/2 on the grid (even=0 keeps the paper's K)"
    },
}

# Trials stored before versions were declared carry only the source hash of the code that
# ran them. These hashes were checked to replay bit for bit under version 1 of every
# component (tests/test_versions.py keeps checking it); their rows are re-keyed on opening.
LEGACY_CODE_VERSIONS = {"0.1.0+643f31110933": 1}


def _declared(spec, builtins) -> str:
    """A spec's declared version; a plug-in's (anything not a built-in of the registry) with
    the hash of its code (fastcdl.online.plugins.code_hash): 'running/1+3f2a9c1b7e4d'."""
    if builtins.get(spec.name) is spec:
        return str(spec.version)
    from fastcdl.online.plugins import code_hash

    return f"{spec.version}+{code_hash(spec)}"


def algorithm_version(forecaster, adversary, *, initial: bool = False) -> str:
    """The version string a trial of forecaster x adversary is keyed by.

    Built from the versions declared by the forecaster's and adversary's specs (names,
    specs or "package.module:ATTRIBUTE"), the engine, and every metric a trial records
    whose version is part of the key (fastcdl.trial_measures; the measures added after the
    stores were filled, functions of the stored tables, are not: fastcdl.measures.Measure); a plug-in's version also carries a hash of its code, so
    its trials are recomputed when its code changes even if its ``version`` did not.
    ``initial=True`` gives the string of version 1 of every component (what the legacy rows
    of LEGACY_CODE_VERSIONS were verified against).
    """
    from fastcdl.online import registry
    from fastcdl.trial_measures import METRICS

    if initial:
        f, a = str(forecaster), str(adversary)
        vf = va = ve = 1
        vm = {k: 1 for k, m in METRICS.items() if m.in_key}
    else:
        fs, as_ = registry.forecaster(forecaster), registry.adversary(adversary)
        f, a, ve = fs.name, as_.name, ENGINE
        vf, va = _declared(fs, registry.forecasters()), _declared(as_, registry.adversaries())
        vm = {k: m.version for k, m in METRICS.items() if m.in_key}
    metrics = ",".join(f"{k}/{vm[k]}" for k in sorted(vm))
    return f"forecaster={f}/{vf} adversary={a}/{va} engine/{ve} metrics={metrics}"
