"""The optimization problems of the three papers (sphere PCA, SPD Frechet mean, HSP, Stiefel kPCA).

Each problem is a :class:`~prirfed.reference.problems.base.FederatedProblem`: the finite sum (2.1)
of Huang et al. (2024) with per-sample losses ``f_ij``, agent losses ``f_i``, the global ``f``, their Euclidean and
Riemannian gradients, batched per-sample gradients, the papers' constants (``paper_*``) next to
the derived ones, and the true optimum. Classes are imported on first use (PEP 562) so that
importing one problem does not import every manifold.
"""

from prirfed.reference.lazy import lazy_exports

from .base import FederatedProblem, agent_weights

_CLASSES = {
    "SpherePCA": ".sphere_pca",
    "SPDFrechetMean": ".spd_frechet",
    "HyperbolicStructuredPrediction": ".hsp",
    "StiefelKPCA": ".stiefel_kpca",
    "FrechetMean": ".frechet_mean",
    "principal_angles": ".stiefel_kpca",
}

__all__ = ["FederatedProblem", "agent_weights", *_CLASSES]


__getattr__, __dir__ = lazy_exports(__name__, _CLASSES, ["FederatedProblem", "agent_weights"])
