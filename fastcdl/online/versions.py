"""Declared algorithm versions: what a stored trial's numbers depend on.

A rate experiment's trial is keyed by the versions of its forecaster, its adversary, the
simulate engine (loop, generator, seeds, bucket table) and the metrics it records, never
by a hash of the source files. So a refactor that changes no result reuses every stored
trial, and a change that moves any result must bump the version of what changed (by hand,
here). tests/test_versions.py replays trials of the committed results folders and
compares them bit for bit with the stored numbers, so a behaviour change cannot slip in
unbumped.

>>> algorithm_version("cdl", "greedy")
'forecaster=cdl/1 adversary=greedy/1 engine/1 metrics=cdl/1,ece/1,k2/1,ucal/1,vcdl/1'
"""

from __future__ import annotations

FORECASTERS = {"cdl": 1, "foster": 1, "kt": 1, "truthful": 1, "frequency": 1}
ADVERSARIES = {"bernoulli": 1, "drift": 1, "markov": 1, "contrarian": 1, "greedy": 1}
# cdl covers the certificate's kinks (kink1, kink2) stored next to it.
METRICS = {"cdl": 1, "vcdl": 1, "ece": 1, "k2": 1, "ucal": 1}
ENGINE = 1

# Trials stored before versions were declared carry only the source hash of the code that
# ran them. These hashes were checked to replay bit for bit under version 1 of every
# component (tests/test_versions.py keeps checking it); their rows are re-keyed on opening.
LEGACY_CODE_VERSIONS = {"0.1.0+643f31110933": 1}


def algorithm_version(forecaster: str, adversary: str, *, initial: bool = False) -> str:
    """The version string a trial of forecaster x adversary is keyed by.

    ``initial=True`` gives the string of version 1 of every component (what the legacy
    rows of LEGACY_CODE_VERSIONS were verified against).
    """
    def v(table, name):
        if initial:
            return 1
        try:
            return table[name]
        except KeyError:
            raise ValueError(f"no declared algorithm version for {name!r}") from None

    metrics = ",".join(f"{k}/{1 if initial else METRICS[k]}" for k in sorted(METRICS))
    return (f"forecaster={forecaster}/{v(FORECASTERS, forecaster)} "
            f"adversary={adversary}/{v(ADVERSARIES, adversary)} "
            f"engine/{1 if initial else ENGINE} metrics={metrics}")
