"""The CPU's vector extensions, recorded with every asv run.

asv's machine.json names the CPU model only; the same numba kernels compile to different code
with and without AVX-512 (results/benchmarks/oracle.md), so a run's timings are read with these.
One `track_` per extension: 1 if /proc/cpuinfo lists it, 0 if not.
"""

from pathlib import Path

VECTOR_FLAGS = [
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512ifma",
    "avx512_vnni",
]


def _flags():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


class MachineSuite:
    params = [VECTOR_FLAGS]
    param_names = ["extension"]

    def track_cpu_has(self, extension):
        return int(extension in _flags())

    track_cpu_has.unit = "present (1) or not (0)"
