"""Large work arrays on huge pages, as numpy allocates its own.

numpy asks Linux for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every array of
4 MiB or more; numba's ``np.empty`` inside a kernel does not, so a kernel's work arrays sit on
4 KiB pages. A kernel that reads or scatters at random over a few MiB (a radix pass writes to
2048 places at once; the table CDL gathers each bucket through the frequencies' argsort) then
misses the TLB on most accesses. :func:`empty_huge` allocates as ``np.empty`` does and gives
the kernel's array the same advice numpy gives its own. Measured on the exact CDL of 10^6
buckets (docs/metrics.md): about a quarter of the time.

The advice is a hint: with transparent huge pages off (``never``), or off Linux, nothing
changes. Values are never affected, only where the pages come from.

>>> import numpy as np
>>> a = empty_huge(8, np.float64)
>>> a.shape, a.dtype
((8,), dtype('float64'))
"""

import sys

import numpy as np
from numba import types

from fastcdl._compiled._jit import kernel

HUGE_MIN = 1 << 22  # numpy's threshold for the advice: 4 MiB
_PAGE = 4096
_MADV_HUGEPAGE = 14  # <sys/mman.h> on Linux

if sys.platform.startswith("linux"):
    _madvise = types.ExternalFunction("madvise", types.int32(types.uintp, types.uintp, types.int32))

    @kernel
    def advise_huge(address, nbytes):
        """Ask for huge pages under the whole 4 KiB pages of the ``nbytes`` bytes from
        ``address`` (an array's ``a.ctypes.data`` and ``a.nbytes``, contiguous) when they are at
        least 4 MiB. Returns madvise's status (0: accepted), or 1 when too small to ask. It takes
        the address, not the array, so that one compilation serves arrays of every dtype."""
        if nbytes < HUGE_MIN:
            return 1
        start = (address + _PAGE - 1) // _PAGE * _PAGE
        end = (address + nbytes) // _PAGE * _PAGE
        return _madvise(start, end - start, _MADV_HUGEPAGE)

else:  # pragma: no cover - only Linux has transparent huge pages

    @kernel
    def advise_huge(address, nbytes):
        """No huge pages to ask for off Linux: returns 1, as for a small array."""
        return 1


@kernel
def empty_huge(n, dtype):
    """``np.empty(n, dtype)`` on huge pages when it holds 4 MiB or more (see the module). O(1)."""
    a = np.empty(n, dtype)
    advise_huge(a.ctypes.data, a.nbytes)
    return a
