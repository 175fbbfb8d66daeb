"""fastcdl.ece next to the peer libraries' binned ECE (pytest-benchmark). Disabled in
`make test`; run with

    make bench            # peers that are not installed are skipped; `make peers` installs them

The peer calls and their bin conventions come from scripts/compare_peers.py (ECE_PEERS), so
this file and results/benchmarks/peers.md time the same code.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import fastcdl as fc

T = 10**6
BINS = 15

_spec = importlib.util.spec_from_file_location(
    "compare_peers", Path(__file__).resolve().parents[2] / "scripts" / "compare_peers.py"
)
compare_peers = sys.modules.setdefault("compare_peers", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(compare_peers)


@pytest.fixture(scope="module")
def rounds():
    y, p = compare_peers.uniform_rounds(T, np.random.default_rng(0))
    fc.ece(y[:10], p[:10], bins=BINS)
    return y, p


@pytest.mark.benchmark(group="binned ECE vs peers, T=1e6, 15 bins")
def test_ece_fastcdl(benchmark, rounds):
    y, p = rounds
    benchmark(fc.ece, y, p, bins=BINS)


@pytest.mark.benchmark(group="binned ECE vs peers, T=1e6, 15 bins")
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("peer", compare_peers.ECE_PEERS, ids=lambda peer: peer.dist)
def test_ece_peer(benchmark, rounds, peer):
    pytest.importorskip(peer.module)
    y, p = rounds
    peer.ece(y, p)  # imports and first-call setup off the clock
    value = benchmark(peer.ece, y, p)
    # uniform p puts no round on an interior edge, where the conventions would differ
    assert value == pytest.approx(fc.ece(y, p, bins=BINS), abs=1e-12)
