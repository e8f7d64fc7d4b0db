"""Reference manifolds (plain NumPy/SciPy): Euclidean, Sphere, SPD, Lorentz, Stiefel.

Each class follows the contract of :class:`prirfed.reference.manifolds.base.Manifold`.
Classes are imported on first use (PEP 562) so that importing one manifold does not import
the others.
"""

from prirfed.reference.lazy import lazy_exports

from .base import Manifold, as_float_array, zeta

_CLASSES = {
    "Euclidean": ".euclidean",
    "Sphere": ".sphere",
    "SPD": ".spd",
    "Lorentz": ".lorentz",
    "Stiefel": ".stiefel",
}

__all__ = ["Manifold", "zeta", "as_float_array", *_CLASSES]


__getattr__, __dir__ = lazy_exports(__name__, _CLASSES, ["Manifold", "zeta", "as_float_array"])
