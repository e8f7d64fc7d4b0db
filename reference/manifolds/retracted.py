"""A manifold seen through its retraction: Exp := retr and Log := inv_retr.

Li and Ma (2023) ran their Stiefel experiments this way ("we adopted the projection-like
retraction and its inverse to approximate the exponential and the logarithm mappings"), because
the Riemannian logarithm of the Stiefel manifold has no closed form. Trainers take
``maps="retraction"`` and wrap the problem's manifold in :class:`Retracted`; every other method
(metric, distance, transport, basis, checks) is the underlying manifold's own.
"""

from __future__ import annotations

from .base import Manifold

__all__ = ["Retracted", "geometry", "check_maps"]


class Retracted(Manifold):
    """``base`` with ``exp``/``log`` replaced by ``base.retr``/``base.inv_retr``, as Li and Ma (2023), Section 5, ran their Stiefel experiments.

    Parameters
    ----------
    base : Manifold
        The manifold whose retraction stands in for the exponential map.

    Raises
    ------
    ValueError
        If ``base`` is not a prirfed manifold.
    """

    def __init__(self, base: Manifold):
        if not isinstance(base, Manifold):
            raise ValueError(f"Retracted: base must be a Manifold (got {type(base).__name__})")
        super().__init__(base.validate)
        self.base = base
        self.dim = base.dim
        self.ambient_shape = base.ambient_shape
        self.curvature_bounds = base.curvature_bounds
        self.exact_transport = False

    @property
    def name(self) -> str:
        return f"Retracted({self.base.name})"

    def __repr__(self) -> str:
        return f"Retracted({self.base!r})"

    def _point_defect(self, x):
        return self.base._point_defect(x)

    def _tangent_defect(self, x, v):
        return self.base._tangent_defect(x, v)

    def inner(self, x, u, v):
        return self.base.inner(x, u, v)

    def norm(self, x, u):
        return self.base.norm(x, u)

    def proj(self, x, w):
        return self.base.proj(x, w)

    def egrad2rgrad(self, x, g):
        return self.base.egrad2rgrad(x, g)

    def exp(self, x, v):
        """The base manifold's retraction R_x(v)."""
        return self.base.retr(x, v)

    def log(self, x, y):
        """The base manifold's inverse retraction R_x^{-1}(y)."""
        return self.base.inv_retr(x, y)

    def dist(self, x, y):
        return self.base.dist(x, y)

    def transp(self, x, y, v):
        return self.base.transp(x, y, v)

    def retr(self, x, v):
        return self.base.retr(x, v)

    def inv_retr(self, x, y):
        return self.base.inv_retr(x, y)

    def tangent_basis(self, x):
        return self.base.tangent_basis(x)

    def random_point(self, rng):
        return self.base.random_point(rng)

    def random_tangent(self, x, rng):
        return self.base.random_tangent(x, rng)


def check_maps(where: str, maps) -> str:
    """``maps`` if it is the string ``"exp"`` or ``"retraction"``, else ``ValueError``.

    An array or any other object is refused, never compared element-wise. Both twins of every
    trainer call it, so they refuse the same values with the same message.

    Parameters
    ----------
    where : str
        The trainer that asked, named in the error message.
    maps : object
        The value to check.

    Returns
    -------
    str
        ``maps``.

    Raises
    ------
    ValueError
        If ``maps`` is not one of the two strings.
    """
    if isinstance(maps, str) and maps in ("exp", "retraction"):
        return maps
    raise ValueError(f"{where}: maps must be 'exp' or 'retraction' (got {maps!r})")


def geometry(M: Manifold, maps: str, where: str = "geometry") -> Manifold:
    """The geometry a trainer moves with: ``M`` itself for ``maps="exp"``, ``Retracted(M)`` for ``maps="retraction"`` (Li and Ma (2023), Section 5).

    Parameters
    ----------
    M : Manifold
        The problem's manifold.
    maps : {"exp", "retraction"}
        Exponential and logarithm, or the retraction and its inverse in their place.
    where : str, optional
        The trainer that asked, named in the error message.

    Returns
    -------
    Manifold
        ``M`` or its :class:`Retracted` view.

    Raises
    ------
    ValueError
        If ``maps`` is neither.
    """
    return M if check_maps(where, maps) == "exp" else Retracted(M)
