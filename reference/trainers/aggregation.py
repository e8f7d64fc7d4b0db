"""Server aggregation: the tangent mean (3.2) of Huang et al. (2024) / (8) of Li and Ma (2023), and the Karcher mean (3.1) / (7).

The means are geometry and live in :mod:`prirfed.reference.manifolds.means`; this module is the
trainers' name for them (the server step of PriRFed and of RFedSVRG / RFedAvg / RFedProx).
"""

from __future__ import annotations

from prirfed.reference.manifolds.means import karcher_mean, tangent_mean

__all__ = ["tangent_mean", "karcher_mean", "server_step"]


def server_step(M, x, uploads, weights, aggregation: str):
    """x^(t+1) from x^(t) and the uploads: the tangent mean (3.2) of Huang et al. (2024) / (8) of Li and Ma (2023)
    (``aggregation="tangent"``) or the Karcher mean (3.1) / (7) started at x^(t) ("karcher").

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : numpy.ndarray
        The server point :math:`x^{(t)}`.
    uploads : sequence of numpy.ndarray
        The agents' points.
    weights : array_like
        Their weights (normalised by the mean functions).
    aggregation : str
        ``"tangent"`` (tangent mean, default) or ``"karcher"`` (Karcher mean).

    Returns
    -------
    numpy.ndarray
        :math:`x^{(t+1)}`.

    Raises
    ------
    ValueError
        If the Karcher iteration does not converge, or as the mean functions.
    """
    if aggregation == "tangent":
        return tangent_mean(M, x, uploads, weights)
    return karcher_mean(M, uploads, weights, x0=x)[0]
