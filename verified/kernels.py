"""Small Numba kernels shared by the verified manifolds, mechanisms and trainers (one place each).

- :func:`all_finite_kernel`: are all entries of an array finite (the fused loops and the SPD kernels
  raise their own ``ValueError`` when not);
- :func:`sym_part_kernel`: the symmetric part (A + A^T) / 2, as ``reference.manifolds.spd.sym``;
- :func:`matmul_kernel`: a @ b by loops (small matrices: no BLAS call overhead, and it compiles much
  faster than Numba's BLAS binding), summed in the order of ``numpy.matmul``'s definition, k ascending.

Mirrors no single reference module: the reference writes ``np.all(np.isfinite(a))``,
``0.5 * (a + a.T)`` and ``a @ b`` inline. Tested in ``tests/verified/test_trainer_layout.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["all_finite_kernel", "sym_part_kernel", "matmul_kernel"]


@njit(cache=True)
def all_finite_kernel(a):
    """True iff every entry of ``a`` (any shape) is finite (no NaN, no +-inf)."""
    for t in a.ravel():
        if not np.isfinite(t):
            return False
    return True


@njit(cache=True)
def sym_part_kernel(a):
    """(a + a^T) / 2 for a square matrix ``a``."""
    return 0.5 * (a + a.T)


@njit(cache=True)
def matmul_kernel(a, b):
    """a @ b by loops: out[i, j] = sum_k a[i, k] b[k, j], k ascending (a NaN or inf anywhere in a row
    of ``a`` or a column of ``b`` propagates, as in numpy)."""
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    out = np.zeros((n, p))
    for i in range(n):
        for k in range(m):
            aik = a[i, k]
            for j in range(p):
                out[i, j] += aik * b[k, j]
    return out
