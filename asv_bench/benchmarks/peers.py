"""fastcdl.ece next to the binned ECE of the libraries users would pick instead, with each one's
bin convention written from its source: the definitions scripts/compare_peers.py times too
(results/benchmarks/peers.md). Peers are optional (`pip install -e ".[peers]"`); a peer that
is not installed is skipped in setup().
"""

import importlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

import fastcdl as fc

BINS = 15


def ece_fastcdl(y, p):
    return fc.ece(y, p, bins=BINS)


def ece_fastcdl_1thread(y, p):
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return fc.ece(y, p, bins=BINS)
    finally:
        numba.set_num_threads(before)


def ece_sklearn(y, p):
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, p, n_bins=BINS, strategy="uniform")
    counts = np.bincount(bins_sklearn(p), minlength=BINS)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(prob_true - prob_pred)) / p.shape[0])


def ece_relplot(y, p):
    from relplot.metrics import binnedECE

    return float(binnedECE(p, y.astype(np.float64), nbins=BINS))


def ece_netcal(y, p):
    from netcal.metrics import ECE

    return float(ECE(bins=BINS).measure(p, y))


def ece_torchmetrics(y, p):
    import torch
    from torchmetrics.functional.classification import binary_calibration_error

    return float(binary_calibration_error(torch.from_numpy(p), torch.from_numpy(y), n_bins=BINS, norm="l1"))


# Each peer's bin of p, written from its source; ece_by_bin of these reproduces the peer.


def bins_fastcdl(p):
    return np.searchsorted(np.arange(1, BINS) / BINS, p, side="left")


def bins_sklearn(p):
    return np.searchsorted(np.linspace(0.0, 1.0, BINS + 1)[1:-1], p, side="left")


def bins_relplot(p):
    return (p / (1.0 / BINS)).astype(np.int64)


def bins_netcal(p):
    eps = np.finfo(np.float64).eps
    return np.searchsorted(np.linspace(0.0, 1.0, BINS + 1)[1:-1], np.clip(p, eps, 1 - eps), side="right")


def bins_torchmetrics(p):
    import torch

    edges = torch.linspace(0, 1, BINS + 1, dtype=torch.float64).numpy()
    return np.searchsorted(edges, p, side="right") - 1


def ece_by_bin(y, p, j):
    """(1/T) sum over bins of |sum of (p - y)| for the bin index j of every round."""
    return float(np.abs(np.bincount(j, weights=p - y)).sum() / p.shape[0])


@dataclass(frozen=True)
class Peer:
    name: str
    module: str  # imported to see whether the peer is installed
    dist: str  # distribution name, for the version
    ece: Callable
    bins: Callable
    convention: str


FASTCDL = Peer(
    "fastcdl.ece",
    "fastcdl",
    "fastcdl",
    ece_fastcdl,
    bins_fastcdl,
    "[0, 1/m], ((k-1)/m, k/m] with edges k/m correctly rounded; mean prediction per bin",
)
ECE_PEERS = [
    Peer(
        "scikit-learn calibration_curve",
        "sklearn",
        "scikit-learn",
        ece_sklearn,
        bins_sklearn,
        "right-closed like fastcdl, but edges from np.linspace (k * fl(1/m), can be an ulp off k/m)",
    ),
    Peer(
        "relplot binnedECE",
        "relplot",
        "relplot",
        ece_relplot,
        bins_relplot,
        "bin int(p / fl(1/m)): left-closed [k/m, (k+1)/m) up to rounding of the division; p = 1 alone in bin m",
    ),
    Peer(
        "netcal ECE",
        "netcal",
        "netcal",
        ece_netcal,
        bins_netcal,
        "np.histogramdd on np.linspace edges: left-closed, last bin [14/15, 1]; p clipped to [eps, 1 - eps]",
    ),
    Peer(
        "torchmetrics binary_calibration_error",
        "torchmetrics",
        "torchmetrics",
        ece_torchmetrics,
        bins_torchmetrics,
        "torch.bucketize(right=True) on torch.linspace edges: left-closed; p = 1 alone in a hidden bin m",
    ),
]


def uniform_rounds(T, rng):
    p = rng.random(T)
    return (rng.random(T) < p).astype(np.int64), p


def grid_rounds(T, rng):
    """p in {k/30}: every other grid point is an interior edge k/15 of the 15 bins."""
    p = rng.integers(0, 31, T) / 30
    return (rng.random(T) < p).astype(np.int64), p


class ECEPeersSuite:
    """Binned ECE (15 equal-width bins) of T uniform rounds: fastcdl.ece (all threads and one)
    next to every installed peer."""

    params = ([10**4, 10**6], [FASTCDL.name, "fastcdl.ece, 1 numba thread", *(peer.name for peer in ECE_PEERS)])
    param_names = ["T", "implementation"]

    def setup(self, T, name):
        peers = {
            FASTCDL.name: FASTCDL.ece,
            "fastcdl.ece, 1 numba thread": ece_fastcdl_1thread,
            **{peer.name: peer.ece for peer in ECE_PEERS},
        }
        module = next((peer.module for peer in ECE_PEERS if peer.name == name), "fastcdl")
        try:
            importlib.import_module(module)
        except ImportError:
            raise NotImplementedError(f"{module} is not installed") from None
        self.y, self.p = uniform_rounds(T, np.random.default_rng(0))
        self.f = peers[name]
        self.f(self.y, self.p)  # imports and first-call setup off the clock

    def time_ece(self, T, name):
        self.f(self.y, self.p)
