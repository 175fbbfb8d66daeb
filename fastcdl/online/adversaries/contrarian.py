"""contrarian: y = 1 when the expected stated prediction is below 1/2, else 0 (deterministic).

>>> ADVERSARY.resolve_params({})
{}
"""

from fastcdl._kernels._jit import kernel
from fastcdl.online.plugins import AdversarySpec


@kernel
def respond(view, table, par, rng):
    mean = view.prob0 * view.stated0 + view.prob1 * view.stated1
    return 1 if mean < 0.5 else 0


ADVERSARY = AdversarySpec("contrarian", respond, {}, version=1, doc=__doc__)
