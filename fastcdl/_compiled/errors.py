"""ECE and K2 of a bucket table (docs/metrics.md)."""

from fastcdl._compiled._jit import kernel


@kernel
def ece_kernel(q, n, s):
    """(1/T) sum_i n_i |q_i - qhat_i| = (1/T) sum_i |n_i q_i - s_i|. O(m)."""
    T = 0.0
    total = 0.0
    for i in range(q.shape[0]):
        T += n[i]
        total += abs(n[i] * q[i] - s[i])
    return total / T


@kernel
def k2_kernel(q, n, s):
    """(1/T) sum_i n_i (q_i - qhat_i)^2. O(m)."""
    T = 0.0
    total = 0.0
    for i in range(q.shape[0]):
        T += n[i]
        d = q[i] - s[i] / n[i]
        total += n[i] * d * d
    return total / T
