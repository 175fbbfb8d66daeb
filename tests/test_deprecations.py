"""Names that moved keep working for one release and warn once with their replacement: the
modules fastcdl.metrics, fastcdl.stats and fastcdl.trial_metrics (now fastcdl.exact,
fastcdl.bucket_table, fastcdl.trial_measures) and the metrics of fastcdl.kernels named as the
front end's functions (now <name>_of_table). Each check runs in a fresh process, where the
warning has not been given yet."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MODULES = {
    "fastcdl.metrics": "fastcdl.exact",
    "fastcdl.stats": "fastcdl.bucket_table",
    "fastcdl.trial_metrics": "fastcdl.trial_measures",
}
KERNELS = [
    "cdl",
    "vcdl",
    "ece",
    "k2",
    "ucal",
    "decision_loss_curve",
    "cdl_monotone",
    "vcdl_monotone",
    "cutoff_ce",
    "atb",
    "smce",
]


def _run(code: str) -> dict:
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("old, new", sorted(MODULES.items()))
def test_a_moved_module_warns_once_and_gives_the_same_objects(old, new):
    got = _run(
        "import importlib, json, warnings\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        f"    a = importlib.import_module({old!r})\n"
        f"    b = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({new!r})\n"
        "names = list(getattr(new, '__all__', [n for n in vars(new) if not n.startswith('_')]))\n"
        "print(json.dumps({'messages': [str(x.message) for x in w], 'kinds': [x.category.__name__ for x in w],\n"
        "    'same': all(getattr(a, n) is getattr(new, n) for n in names), 'n': len(names)}))\n"
    )
    assert got["messages"] == [f"{old} is deprecated: use {new} (the same object)"]
    assert got["kinds"] == ["DeprecationWarning"] and got["same"] and got["n"] > 0


def test_the_old_kernel_names_warn_once_and_are_the_new_dispatchers():
    got = _run(
        "import json, warnings\n"
        "import numpy as np\n"
        "import fastcdl.kernels as K\n"
        f"names = {KERNELS!r}\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    same = [getattr(K, n) is getattr(K, n + '_of_table') for n in names]\n"
        "    again = getattr(K, 'cdl')\n"
        "print(json.dumps({'same': same, 'messages': [str(x.message) for x in w], 'all': K.__all__}))\n"
    )
    assert all(got["same"]) and len(got["messages"]) == len(KERNELS)
    assert got["messages"][0] == "fastcdl.kernels.cdl is deprecated: use fastcdl.kernels.cdl_of_table (the same object)"
    assert not set(KERNELS) & set(got["all"]) and {n + "_of_table" for n in KERNELS} <= set(got["all"])


def test_an_old_kernel_name_works_inside_njit_code():
    got = _run(
        "import json, warnings\n"
        "import numpy as np\n"
        "from numba import njit\n"
        "import fastcdl.kernels as K\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always', DeprecationWarning)\n"
        "    @njit\n"
        "    def f(q, n, s):\n"
        "        return K.ece(q, n, s)\n"
        "    q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])\n"
        "    value = f(q, n, s)\n"
        "print(json.dumps({'value': value, 'new': K.ece_of_table(q, n, s),\n"
        "    'warned': any('fastcdl.kernels.ece is deprecated' in str(x.message) for x in w)}))\n"
    )
    assert got["value"] == got["new"] == 0.25 and got["warned"]


def test_an_unknown_kernel_name_is_an_attribute_error():
    import fastcdl.kernels as K

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        K.nope


def test_a_moved_module_is_still_an_attribute_of_the_package():
    got = _run(
        "import json, warnings\n"
        "import fastcdl as fc\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    share = fc.metrics.one_round_share\n"
        "print(json.dumps({'same': share is fc.exact.one_round_share, 'messages': [str(x.message) for x in w]}))\n"
    )
    assert got["same"] and got["messages"] == ["fastcdl.metrics is deprecated: use fastcdl.exact (the same object)"]


def test_names_that_moved_within_experiments_still_import():
    from fastcdl.experiments import workers
    from fastcdl.experiments.forms import FITTED_METRICS
    from fastcdl.experiments.runner import SCHEDULER_TIMEOUT, WorkerDied
    from fastcdl.measures import MEASURES

    assert SCHEDULER_TIMEOUT == workers.SCHEDULER_TIMEOUT and WorkerDied is workers.WorkerDied
    assert FITTED_METRICS == tuple(k for k, m in MEASURES.items() if m.fitted) == ("cdl", "vcdl", "ece", "ucal")
