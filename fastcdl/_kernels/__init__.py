"""Private numba kernels: plain loops over arrays, no validation, no Python objects.

buckets   rounds -> bucket table (binning, exact grouping, merging)
errors    ECE and K2 of a bucket table
envelope  the V-kink curve f, its upper concave envelope, CDL, VCDL, UCal
decisions exact best responses, CFDL of a payoff matrix, swap regret
msmwc     the MsMwC oracle of Algorithm 1 in closed form (sparse O(K_eta) and dense O(m K_eta))
forecasters  one round of each online forecaster: step 1, draw, update
adversaries  one round of each adversary
simulate  the compiled simulate loops (one per forecaster family)
minimax   the discretised 2 x K minimax solver
rng       xoshiro256**, the per-object generator
"""
