"""Private numba code: plain loops over arrays, no validation, no Python objects.

Everything here is compiled (through ``_jit.kernel``, the one cache policy); the public face
for users' own compiled code is :mod:`fastcdl.kernels`, the Python API is fastcdl.exact and
its neighbours.

_jit        how every kernel compiles: the decorator, its cache and the cache's invalidation
buckets     rounds -> bucket table (binning, exact grouping, merging)
stream      bucket tables that grow one round at a time
sort        sorting and pairwise sums, bit for bit as numpy
errors      ECE and K2 of a bucket table
envelope    the V-kink curve f, its upper concave envelope, CDL, VCDL, UCal
tablecdl    CDL and VCDL of a table in one call (sorts, sweep and hull fused)
estimators  the sample estimators: monotone CDL (PAV), cutoff CE, ATB, smCE, Brier, MCE
resample    replicate tables for the bootstrap and consistency resampling
decisions   exact best responses of a binary task, CFDL of a payoff matrix, swap regret
tasks       best responses of a task over k outcomes, per-action tallies
exact       exact signs of small sums of products
msmwc       the MsMwC oracle of Algorithm 1 in closed form (sparse O(K_eta) and dense O(m K_eta))
lane_exp    exp and expm1 as plain arithmetic, so loops over lanes vectorise
step1       step 1 of Algorithm 1: the forecaster's distribution for one round
minimax     the discretised 2 x K minimax solver
rng         xoshiro256**, the per-object generator
"""
