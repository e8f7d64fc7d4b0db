"""The random draws of the fused loops other than the tangent noise (which needs the geometry:
:func:`prirfed.verified.trainers.geometry.noise`).

Mirrors ``sample_without_replacement`` of ``reference/trainers/base.py`` draw for draw, which is
what lets every twin test compare the Generator states after a run. Proofs note:
``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["sample_without_replacement_kernel"]


@njit(cache=True)
def sample_without_replacement_kernel(rng, n, k):
    """k distinct indices of range(n) by a partial Fisher-Yates shuffle: one rng.integers(j, n)
    per j = 0..k-1 (reference: trainers.base.sample_without_replacement, the same loop)."""
    perm = np.arange(n)
    for j in range(k):
        r = rng.integers(j, n)
        t = perm[j]
        perm[j] = perm[r]
        perm[r] = t
    return perm[:k].copy()
