"""Server aggregation: the tangent mean (3.2) of 000 / (8) of 002, and the Karcher mean (3.1) / (7).

The means are geometry and live in :mod:`prirfed.reference.manifolds.means`; this module is the
trainers' name for them (the server step of PriRFed and of RFedSVRG / RFedAvg / RFedProx).
"""

from __future__ import annotations

from prirfed.reference.manifolds.means import karcher_mean, tangent_mean

__all__ = ["tangent_mean", "karcher_mean"]
