"""Private numba kernels: plain loops over arrays, no validation, no Python objects.

buckets   rounds -> bucket table (binning, exact grouping, merging)
errors    ECE and K2 of a bucket table
envelope  the V-kink curve f, its upper concave envelope, CDL, VCDL, UCal
decisions exact best responses, CFDL of a payoff matrix, swap regret
"""
