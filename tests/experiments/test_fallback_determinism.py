"""The HSP data are machine-reproducible: the Laplacian eigenmap features of the graphs the
experiments use (the synthetic uneven-tree fallback of prirfed-fig5/6 in quick/full and tiny mode,
and the WordNet mammal closure when the shared data are present) come from SIMPLE eigenvalues, so no
eigen-solver chooses a basis among equal eigenvalues, and each feature column's sign rule (its
largest-magnitude entry positive) picks one entry without a tie.

The truth is independent of the code under test: every eigenvalue of the symmetric normalised
Laplacian by a dense LAPACK ``eigvalsh`` (the code uses ARPACK's Lanczos above 64 nodes). Checked:
the relative gaps (lambda_{k+1} - lambda_k) / lambda_{r+1} between the r + 2 smallest eigenvalues
(lambda_0 = 0, the r used, and the next one, which must be separated from the last used) exceed
1e-8; and in each returned column the largest magnitude exceeds every magnitude of an entry of the
opposite sign by more than 1e-8 relative. Perturbs nothing.
Proofs note: proofs_notes/data_hsp.md.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from prirfed.experiments import hsp_common
from prirfed.reference.data import wordnet as wn
from prirfed.reference.data.real import shared_data_dir

GAP = 1e-8


def _graphs():
    out = []
    for mode in ("quick", "tiny"):
        c = hsp_common.make_config(mode, 0, "reference")
        out.append((f"tree {mode}", lambda c=c: hsp_common.tree_closure(c["tree_branching"], c["tree_depth"]), c["r"]))
    out.append(("wordnet", None, 3))
    return out


@pytest.mark.parametrize("name, build, r", _graphs(), ids=lambda x: x if isinstance(x, str) else "")
def test_eigenmap_eigenvalues_used_are_simple_and_signs_untied(name, build, r):
    if build is None:
        root = shared_data_dir()
        if root is None or not (root / wn.MAMMAL_CLOSURE).is_file():
            pytest.skip("the shared WordNet closure is absent ($PRIRFED_DATA or ../shared/data)")
        closure = wn.load_mammal_closure(root / wn.MAMMAL_CLOSURE)
    else:
        closure = build()
    W = wn.adjacency(closure)
    deg = W.sum(axis=1)
    s = 1.0 / np.sqrt(deg)
    lam_all = scipy.linalg.eigvalsh(np.eye(W.shape[0]) - (s[:, None] * W) * s[None, :])
    lam = np.sort(lam_all)[: r + 2]
    gaps = np.diff(lam) / lam[-1]
    assert np.all(gaps > GAP), f"{name}: relative gaps of the {r + 2} smallest eigenvalues {gaps} (some <= {GAP})"
    F, lam_used = wn.laplacian_eigenmap(W, r)
    assert lam_used == pytest.approx(lam[1: r + 1], rel=1e-9, abs=1e-12)
    for k in range(r):
        f = F[:, k]
        top = np.max(np.abs(f))
        assert f[np.argmax(np.abs(f))] > 0  # the sign rule
        rival = np.max(np.abs(f[f < 0])) if np.any(f < 0) else 0.0
        assert top - rival > GAP * top, f"{name}: column {k}: sign rule tied (|max| {top:.17g} vs opposite {rival:.17g})"
