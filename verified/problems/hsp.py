"""Verified twin of :mod:`prirfed.reference.problems.hsp` (Numba per-sample gradients, HSP on H^d).

Mirrors ``reference/problems/hsp.py``: same constructor, data, kernel-ridge weights alpha_ij(w),
agent weights, optimum and validation (the class subclasses the reference one); the Riemannian
gradients go through ``@njit(cache=True)`` kernels (no fastmath) built on the verified Lorentz
``log_kernel``, which the fused trainer loops (:mod:`prirfed.verified.trainers`) call directly:

- ``hsp_rgrad_kernel(x, y, a)``: grad f_ij(x) = -2 a Log_x(y), a = alpha_ij(w), y = y_ij
  (Huang et al. (2024) section 6.3 with the sign corrected: ``proofs_notes/problem_hsp.md``);
- ``hsp_rgrad_batch_kernel(x, Y, J, A)``: the rows Y[J[k]] with scales A[J[k]], stacked.

Equivalence tests: ``tests/verified/test_verified_problems_hsp.py``; note ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.problems.base import public

from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction as _ReferenceHSP
from prirfed.verified.manifolds.lorentz import Lorentz, log_kernel

__all__ = ["HyperbolicStructuredPrediction", "hsp_rgrad_kernel", "hsp_rgrad_batch_kernel"]


@njit(cache=True)
def hsp_rgrad_kernel(x, y, a):
    """Verified twin of :meth:`prirfed.reference.problems.hsp.HyperbolicStructuredPrediction.rgrad_ij`: Takes the
    sample's data directly (no validation). grad f_ij(x) = -2 alpha_ij Log_x(y_ij) (the reference expression, same
    order: (-2 a) * Log)."""
    s = -2.0 * a
    L = log_kernel(x, y)
    out = np.empty(x.shape[0])
    for k in range(x.shape[0]):
        out[k] = s * L[k]
    return out


@njit(cache=True)
def hsp_rgrad_batch_kernel(x, Y, J, A):
    """Verified twin of :meth:`prirfed.reference.problems.hsp.HyperbolicStructuredPrediction.rgrad_batch`: Takes the
    agent's data and the index array ``J`` directly (no validation). Row k = hsp_rgrad_kernel(x, Y[J[k]], A[J[k]])."""
    out = np.empty((J.shape[0], x.shape[0]))
    for k in range(J.shape[0]):
        out[k] = hsp_rgrad_kernel(x, Y[J[k]], A[J[k]])
    return out


def _c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


class HyperbolicStructuredPrediction(_ReferenceHSP):
    """Verified twin of :class:`prirfed.reference.problems.hsp.HyperbolicStructuredPrediction`, with Numba gradients
    and the verified :class:`~prirfed.verified.manifolds.lorentz.Lorentz` as manifold."""

    def __init__(self, W, Y, w, gamma: float, v_bar: float, kernel: str = "gaussian"):
        super().__init__(W, Y, w, gamma, v_bar, kernel)
        self.manifold = Lorentz(self.d)
        self.Y = [_c(y) for y in self.Y]
        self.alpha = [_c(a) for a in self.alpha]

    def _rgrad_ij(self, x, i, j):
        return hsp_rgrad_kernel(_c(x), self.Y[i][j], float(self.alpha[i][j]))

    @public("rgrad_batch")
    def rgrad_batch(self, x, i, J):
        x, i, J = self._batch("rgrad_batch", x, i, J)
        return hsp_rgrad_batch_kernel(_c(x), self.Y[i], J, self.alpha[i])
