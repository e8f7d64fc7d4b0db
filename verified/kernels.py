"""Small Numba kernels shared by the verified manifolds, mechanisms and trainers (one place each).

- :func:`all_finite_kernel`: are all entries of an array finite (the fused loops and the SPD kernels
  raise their own ``ValueError`` when not);
- :func:`sym_part_kernel`: the symmetric part (A + A^T) / 2, as ``reference.manifolds.spd.sym``;
- :func:`matmul_kernel`: a @ b by loops (small matrices: no BLAS call overhead, and it compiles much
  faster than Numba's BLAS binding), summed in the order of ``numpy.matmul``'s definition, k ascending;
- :func:`dot_kernel`, :func:`dot_and_square_kernel`, :func:`axpy_kernel`: the per-sample passes of the
  fused loops (four partial sums, so that the adds of one pass are independent: without fastmath
  LLVM may not reorder a single running sum, and one sum waits ~4 cycles per element; measured 2.7x
  faster at length 784). The rounding differs from a single running sum by a few ulps of the sum
  of ``|terms|`` (the reference's BLAS ``@`` sums in its own blocked order too).

Mirrors no single reference module: the reference writes ``np.all(np.isfinite(a))``,
``0.5 * (a + a.T)`` and ``a @ b`` inline. Tested in ``tests/verified/test_trainer_layout.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["all_finite_kernel", "sym_part_kernel", "matmul_kernel", "dot_kernel", "dot_and_square_kernel", "axpy_kernel"]


@njit(cache=True)
def all_finite_kernel(a):
    """True iff every entry of ``a`` (any shape) is finite (no NaN, no +-inf).

    Parameters
    ----------
    a : numpy.ndarray
        Float array of any shape.

    Returns
    -------
    bool
        ``np.all(np.isfinite(a))``.
    """
    for t in a.ravel():
        if not np.isfinite(t):
            return False
    return True


@njit(cache=True)
def sym_part_kernel(a):
    """(a + a^T) / 2 for a square matrix ``a``.

    Parameters
    ----------
    a : numpy.ndarray
        Square matrix.

    Returns
    -------
    numpy.ndarray
        Its symmetric part.
    """
    return 0.5 * (a + a.T)


@njit(cache=True)
def matmul_kernel(a, b):
    """a @ b by loops: out[i, j] = sum_k a[i, k] b[k, j], k ascending (a NaN or inf anywhere in a row
    of ``a`` or a column of ``b`` propagates, as in numpy).

    Parameters
    ----------
    a : numpy.ndarray
        ``(n, m)`` matrix.
    b : numpy.ndarray
        ``(m, p)`` matrix.

    Returns
    -------
    numpy.ndarray
        ``(n, p)`` product.
    """
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    out = np.zeros((n, p))
    for i in range(n):
        for k in range(m):
            aik = a[i, k]
            for j in range(p):
                out[i, j] += aik * b[k, j]
    return out


@njit(cache=True, inline="always")
def dot_kernel(a, b):
    """sum_k a[k] b[k] (1-D, same length) in four interleaved partial sums ((s0 + s1) + (s2 + s3)).

    Parameters
    ----------
    a, b : numpy.ndarray
        1-D arrays of the same length.

    Returns
    -------
    float
        The inner product.
    """
    n = a.shape[0]
    s0 = s1 = s2 = s3 = 0.0
    k = 0
    while k + 4 <= n:
        s0 += a[k] * b[k]
        s1 += a[k + 1] * b[k + 1]
        s2 += a[k + 2] * b[k + 2]
        s3 += a[k + 3] * b[k + 3]
        k += 4
    while k < n:
        s0 += a[k] * b[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, inline="always")
def dot_and_square_kernel(z, x):
    """(z^T x, z^T z) in one pass over z (four partial sums each, as :func:`dot_kernel`).

    Parameters
    ----------
    z, x : numpy.ndarray
        1-D arrays of the same length.

    Returns
    -------
    zx : float
        :math:`z^T x`.
    zz : float
        :math:`z^T z`.
    """
    n = z.shape[0]
    a0 = a1 = a2 = a3 = 0.0
    q0 = q1 = q2 = q3 = 0.0
    k = 0
    while k + 4 <= n:
        z0 = z[k]
        z1 = z[k + 1]
        z2 = z[k + 2]
        z3 = z[k + 3]
        a0 += z0 * x[k]
        a1 += z1 * x[k + 1]
        a2 += z2 * x[k + 2]
        a3 += z3 * x[k + 3]
        q0 += z0 * z0
        q1 += z1 * z1
        q2 += z2 * z2
        q3 += z3 * z3
        k += 4
    while k < n:
        a0 += z[k] * x[k]
        q0 += z[k] * z[k]
        k += 1
    return (a0 + a1) + (a2 + a3), (q0 + q1) + (q2 + q3)


@njit(cache=True, inline="always")
def axpy_kernel(alpha, x, y):
    """y += alpha x, in place.

    Parameters
    ----------
    alpha : float
        The scale.
    x : numpy.ndarray
        1-D input.
    y : numpy.ndarray
        1-D output of the same length, updated in place.
    """
    for k in range(x.shape[0]):
        y[k] += alpha * x[k]
