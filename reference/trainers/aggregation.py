"""Server aggregation: the tangent mean (3.2) of Huang et al. (2024) / (8) of Li and Ma (2023), and the Karcher mean (3.1) / (7).

The means are geometry and live in :mod:`prirfed.reference.manifolds.means`; this module is the
trainers' name for them (the server step of PriRFed and of RFedSVRG / RFedAvg / RFedProx).
"""

from __future__ import annotations

from prirfed.reference.manifolds.means import karcher_mean, tangent_mean

__all__ = ["tangent_mean", "karcher_mean", "server_step"]


def server_step(M, x, uploads, weights, aggregation: str):
    """x^(t+1) from x^(t) and the uploads: the tangent mean (3.2) of Huang et al. (2024) / (8) of Li and Ma (2023)
    (``aggregation="tangent"``) or the Karcher mean (3.1) / (7) started at x^(t) ("karcher")."""
    if aggregation == "tangent":
        return tangent_mean(M, x, uploads, weights)
    return karcher_mean(M, uploads, weights, x0=x)[0]
