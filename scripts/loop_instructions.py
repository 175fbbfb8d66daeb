"""Machine instructions per round of a compiled simulate loop, counted by valgrind's callgrind.

    .venv/bin/python scripts/loop_instructions.py FORECASTER ADVERSARY [T] [--no-pseudo]

Runs ``simulate(FORECASTER, ADVERSARY, horizon=N, seed=0)`` under ``valgrind --tool=callgrind``
in two processes, N = T and N = 2T (default T = 2^16; forecasters with a grid get a fixed
m = 64, so nothing but the number of rounds differs), counts the instructions executed in
numba's compiled code (callgrind's object "???": the code loaded from numba's cache, which has
no symbols; Python, numpy and the libraries are left out, as their counts move with hash seeds
and threads) and prints the difference between the two runs divided by T: the instructions of
one round (forecaster and adversary), with the set-up cancelled. The counts repeat exactly
from run to run on a busy machine, where wall-clock times of a 10 ns round do not; they are
not cycles (a cache miss or a mispredicted branch costs more than one instruction), so compare
two versions of one loop with them, not two loops. valgrind reports a CPU of its own to the
programs it runs, so numba compiles (and caches) the kernels for that CPU: a first run under
valgrind, not counted, compiles them; the two counted runs load them from the cache.
``--no-pseudo`` runs ``simulate(..., pseudo=False)`` (no expected-count table; a source tree
from before that option cannot take it).
"""

import os
import re
import subprocess
import sys
import tempfile

_RUN = """
import sys
from fastcdl.online import registry, simulate
f, a, T, kw = sys.argv[1], sys.argv[2], int(sys.argv[3]), ({"pseudo": False} if sys.argv[4] == "1" else {})
params = {"m": 64} if registry.forecaster(f).grid is not None else {}
simulate(f, a, horizon=T, seed=0, forecaster_params=params, **kw)
"""

# one line of callgrind_annotate per function: "  8,585,254 ( 0.25%)  ???:0x000000000c85e000 [???]"
_COMPILED = re.compile(r"^\s*([\d,]+) \(.*\)\s+\S+ \[\?\?\?\]$", re.MULTILINE)
_ENV = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def instructions(f, a, T, no_pseudo=False) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                _RUN,
                f,
                a,
                str(T),
                "1" if no_pseudo else "0",
            ],
            capture_output=True,
            text=True,
            env=_ENV,
        )
        if run.returncode != 0:
            sys.exit(run.stderr)
        table = subprocess.run(
            ["callgrind_annotate", "--inclusive=no", "--threshold=100", out], capture_output=True, text=True, check=True
        ).stdout
        return sum(int(m.group(1).replace(",", "")) for m in _COMPILED.finditer(table))


def main():
    args = [x for x in sys.argv[1:] if x != "--no-pseudo"]
    no_pseudo = "--no-pseudo" in sys.argv
    f, a = args[0], args[1]
    T = int(args[2]) if len(args) > 2 else 2**16
    instructions(f, a, 1024, no_pseudo)  # compiles for valgrind's CPU, into the cache
    one, two = instructions(f, a, T, no_pseudo), instructions(f, a, 2 * T, no_pseudo)
    print(
        f"{f} {a}: {(two - one) / T:.2f} instructions per round "
        f"(compiled code: {one} instructions at T = {T}, {two} at T = {2 * T})"
    )


if __name__ == "__main__":
    main()
