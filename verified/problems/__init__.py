"""Numba twins of prirfed.reference.problems.

``SpherePCA``, ``SPDFrechetMean``, ``HyperbolicStructuredPrediction`` and ``StiefelKPCA`` subclass the reference classes and compute the per-sample
Riemannian gradients in ``@njit(cache=True)`` kernels (also used by the fused trainer loops).
"""

from .hsp import HyperbolicStructuredPrediction
from .spd_frechet import SPDFrechetMean
from .sphere_pca import SpherePCA
from .stiefel_kpca import StiefelKPCA

__all__ = ["SpherePCA", "SPDFrechetMean", "HyperbolicStructuredPrediction", "StiefelKPCA"]
