"""Compare the machine code of simulate's compiled loops (and adversary kernels) under two
source trees: whether a change left the two-point loops instruction for instruction as they were.

Each tree runs in a fresh process with the on-disk cache off (FASTCDL_CACHE=0, so numba
compiles and can show the assembly). Symbol names, labels, comments and the names of pickled
constants (exception messages, which carry source locations) are dropped; what is left is
compared line by line, and function by function: the functions of a compiled module (the
kernel itself, the kernels it calls and numba's helpers) in the order of their instructions,
so that a module that only lists the same functions in another order counts as the same
(the order is where the linker places them, not what runs). ``--dump DIR`` writes both
trees' cleaned instructions there for a diff.

    python scripts/compare_loop_asm.py BEFORE_TREE AFTER_TREE --forecasters truthful kt cdl ftpl \
        --adversaries bernoulli contrarian
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = r"""
import json, re, sys
import numpy as np
from fastcdl.online import make_adversary, make_forecaster, registry
from fastcdl.online.plugins import ADVERSARY_SIGNATURE
from fastcdl.online.simulate import _entry

def clean(asm):
    funcs, cur = [], []
    for l in asm.splitlines():
        if re.match(r"^[A-Za-z_$][\w.$]*:", l) and cur:  # a function's label (local labels start with .L)
            funcs.append(cur)
            cur = []
        l = re.sub(r"_Z\S+|\.LBB\S+|\.L\S+|#.*|\.const\.pickle(data|buf)\.[0-9a-f]+", "", l).strip()
        if l and not l.startswith(".") and not l.endswith(":"):
            cur.append(l)
    funcs.append(cur)
    return [l for f in sorted(funcs) for l in f]

out = {}
for name in sys.argv[1].split(","):
    extra = {"adversary": ("bernoulli", {})} if name == "truthful" else {}
    f = make_forecaster(name, horizon=1000, seed=1, **extra)
    a = make_adversary("bernoulli", seed=1)
    args = (5, f.state, f.table, f.out, f._rng, a.spec.compiled(), a._par, a._rng, f.hist,
            np.zeros(0), np.zeros(0, dtype=np.int8))
    _entry(f.spec.loop, args, 5)
    out["loop " + name] = clean(f.spec.loop.inspect_asm(f.spec.loop.signatures[-1]))
for name in sys.argv[2].split(","):
    r = registry.adversary(name).respond
    r.compile(ADVERSARY_SIGNATURE)
    out["adversary " + name] = clean(r.inspect_asm(ADVERSARY_SIGNATURE.args))
print(json.dumps(out))
"""


def _asm(tree, forecasters, adversaries):
    env = dict(os.environ, PYTHONPATH=tree, FASTCDL_CACHE="0")
    r = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _CHILD, ",".join(forecasters), ",".join(adversaries)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--forecasters", nargs="+", default=["truthful", "kt", "cdl", "ftpl"])
    ap.add_argument("--adversaries", nargs="+", default=["bernoulli", "contrarian"])
    ap.add_argument("--dump", help="a folder for both trees' cleaned instructions (one file per tree and code)")
    a = ap.parse_args(argv)
    before = _asm(a.before, a.forecasters, a.adversaries)
    after = _asm(a.after, a.forecasters, a.adversaries)
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        for which, asm in (("before", before), ("after", after)):
            for k, lines in asm.items():
                with open(os.path.join(a.dump, f"{k.replace(' ', '-')}.{which}"), "w") as fh:
                    fh.write("\n".join(lines) + "\n")
    for k in before:
        diff = sum(x != y for x, y in zip(before[k], after[k])) + abs(len(before[k]) - len(after[k]))
        print(f"{k:24s} {len(before[k]):6d} instructions before, {len(after[k]):6d} after, {diff} differing")


if __name__ == "__main__":
    main()
