"""Euclidean space R^d as a Riemannian manifold (the flat reference case).

Every formula is the identity of flat geometry: Exp_x(v) = x + v, Log_x(y) = y - x,
dist = ||x - y||, parallel transport is the identity, sectional curvature is 0.
See ``proofs_notes/manifold_euclidean.md``.

Domain: every finite real vector of length d is a point and a tangent vector. A result that
overflows float64 (x + v, y - x, ||x - y|| or <u, v> beyond about 1.8e308) raises
``ValueError`` naming the method; norms are evaluated without overflow of the squares
(:func:`~prirfed.reference.manifolds.base.norm2`), so ||v|| is returned whenever it is itself a
float64.

Examples
--------
>>> import numpy as np
>>> from prirfed.reference.manifolds.euclidean import Euclidean
>>> M = Euclidean(2)
>>> x, y = np.array([1.0, 1.0]), np.array([4.0, 5.0])
>>> float(M.dist(x, y))                     # a 3-4-5 triangle
5.0
>>> M.log(x, y), M.exp(x, M.log(x, y))
(array([3., 4.]), array([4., 5.]))
>>> M.curvature_bounds
(0.0, 0.0)
"""

from __future__ import annotations

import math

import numpy as np

from .base import Manifold, norm2, positive_int

__all__ = ["Euclidean"]


class Euclidean(Manifold):
    r""":math:`\mathbb R^d` with the standard inner product (the flat reference case; Absil, Mahony and Sepulchre (2008), Section 3.6).

    :math:`\operatorname{Exp}_x(v) = x + v`, :math:`\operatorname{Log}_x(y) = y - x`,
    :math:`\operatorname{dist}(x, y) = \lVert x - y\rVert`, transport is the identity, curvature 0.

    Parameters
    ----------
    d : int
        Dimension, at least 1.
    validate : bool, optional
        Check every input (default True).

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer.
    """

    exact_transport = True

    def __init__(self, d: int, validate: bool = True):
        super().__init__(validate)
        self.d = positive_int("Euclidean", "dimension d", d)
        self.dim = self.d
        self.ambient_shape = (self.d,)
        self.curvature_bounds = (0.0, 0.0)

    def __repr__(self) -> str:
        return f"Euclidean({self.d})"

    def _point_defect(self, x):
        return None  # every finite vector of the right shape is a point

    def _tangent_defect(self, x, v):
        return None

    def inner(self, x, u, v):
        x = self._pt("inner", x)
        u = self._tv("inner", x, u, "u")
        v = self._tv("inner", x, v, "v")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("inner", float(u @ v))

    def norm(self, x, u):
        x = self._pt("norm", x)
        u = self._tv("norm", x, u, "u")
        return self._out("norm", norm2(u))

    def proj(self, x, w):
        self._pt("proj", x)
        return self._amb("proj", w).copy()

    def egrad2rgrad(self, x, g):
        self._pt("egrad2rgrad", x)
        return self._amb("egrad2rgrad", g, "g").copy()

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        with np.errstate(over="ignore"):
            return self._out("exp", x + v)

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        with np.errstate(over="ignore"):
            return self._out("log", y - x)

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("dist", norm2(x - y))

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        self._pt("transp", y, "y")
        return self._tv("transp", x, v).copy()

    def retr(self, x, v):
        return self.exp(x, v)

    def inv_retr(self, x, y):
        return self.log(x, y)

    def tangent_basis(self, x):
        self._pt("tangent_basis", x)
        return np.eye(self.d)

    def random_point(self, rng):
        return rng.standard_normal(self.d)

    def random_tangent(self, x, rng):
        self._pt("random_tangent", x)
        return rng.standard_normal(self.d)

    def injectivity_radius(self, x=None) -> float:
        return math.inf
