"""Worst-case search: the adversary, from parametric families, that maximises a forecaster's
mean CDL at a horizon T (docs/worst-case.md).

For one forecaster and T, every family of :data:`FAMILIES` is
searched in the forecaster's own units (its grid j/m, declared in its registry entry):

1. coverage: a 1-D family is swept densely (8 points per grid cell over the whole range);
   a multi-parameter family gets a scrambled Sobol design (scipy.stats.qmc), thinned by
   successive halving over seeds (every point on 1 seed, the best quarter on 2, the best
   16 on all the search seeds); a family without parameters is run once;
2. refinement: around the best points of a 1-D sweep, scipy's bounded scalar minimiser
   inside one sweep step; for a multi-parameter family, scipy's differential evolution,
   seeded, its first population the 16 survivors of the halving, then Nelder-Mead from its
   two best points;
3. choice: the best candidates overall and the best of every family are scored again on
   16 search seeds (the final rung of the halving), the best 4 of them on 64 (the deepest
   rung), and the best there is the winner;
4. report: the winner is run on *fresh seeds* (another master seed, never used for
   choosing), so its reported mean is not inflated by the selection.

Every candidate is scored on the same seeds (common random numbers), so comparisons are
paired and the objective is a deterministic function of the parameters.

A full search also scores the best few candidates of every family at the horizon below,
carried in grid units. Above the horizons with a full search, :func:`transfer` carries the
best few candidates of every family to the next horizon in grid units (fastcdl.experiments.families.carry), searches
locally around each, and chooses and reports as above.

Every trial goes through the rate experiments' store (:class:`fastcdl.experiments.TrialStore`), keyed by its
forecaster, adversary, parameters, T, seed and algorithm version: a search stopped at any
point and run again recomputes only the trials in flight and repeats the same choices.

The search is in worst_search.py, the folder of a grid of searches (WorstPlan, run_plan, its
CSV rows) in worst_folder.py, the figure and README tables in worst_report.py; every name stays
importable from here.

>>> sorted(FAMILIES)[:3]
['bernoulli', 'cdlahead', 'contrarian']
"""

from __future__ import annotations

from fastcdl.experiments.families import FAMILIES, Dim, Family
from fastcdl.experiments.worst_folder import CANDIDATE_COLUMNS as CANDIDATE_COLUMNS
from fastcdl.experiments.worst_folder import CROSS_COLUMNS as CROSS_COLUMNS
from fastcdl.experiments.worst_folder import FAMILY_COLUMNS as FAMILY_COLUMNS
from fastcdl.experiments.worst_folder import WORST_COLUMNS as WORST_COLUMNS
from fastcdl.experiments.worst_folder import WorstPlan as WorstPlan
from fastcdl.experiments.worst_folder import family_rows as family_rows
from fastcdl.experiments.worst_folder import interval as interval
from fastcdl.experiments.worst_folder import pack_folder as pack_folder
from fastcdl.experiments.worst_folder import run_plan as run_plan
from fastcdl.experiments.worst_folder import worst_rows as worst_rows
from fastcdl.experiments.worst_folder import worst_slopes as worst_slopes
from fastcdl.experiments.worst_report import readme_tables as readme_tables
from fastcdl.experiments.worst_report import worst_figure as worst_figure
from fastcdl.experiments.worst_search import FRESH_MASTER as FRESH_MASTER
from fastcdl.experiments.worst_search import SEARCH_MASTER as SEARCH_MASTER
from fastcdl.experiments.worst_search import Budget as Budget
from fastcdl.experiments.worst_search import Candidate, SearchResult, search, transfer
from fastcdl.experiments.worst_search import axis_points as axis_points
from fastcdl.experiments.worst_search import registry_m as registry_m

__all__ = ["FAMILIES", "Candidate", "Dim", "Family", "SearchResult", "search", "transfer"]
