"""The federated Frechet mean on any manifold: f_{i,j}(x) = (1/2) dist^2(x, a_{i,j}).

grad f_{i,j}(x) = -Log_x(a_{i,j}) inside the injectivity radius (the gradient of
(1/2) dist^2(., a) is -Log). On Euclidean space this is least squares, whose optimum is the
weighted mean of the data; on SPD it is Huang et al. (2024) (6.2) with the 1/2 convention (see
:class:`~prirfed.reference.problems.spd_frechet.SPDFrechetMean` for the papers' own scaling).
Used by the trainers' identity tests, where a closed-form optimum is needed on flat space.
"""

from __future__ import annotations


from prirfed.reference.manifolds.means import karcher_mean

from .base import FederatedProblem, agent_arrays, agent_weights

__all__ = ["FrechetMean"]


class FrechetMean(FederatedProblem):
    r"""The federated Fréchet mean :math:`\min_x \sum_i p_i \frac1{N_i}\sum_j \tfrac12\operatorname{dist}^2(x, a_{i,j})`, :math:`p_i = N_i/\sum_k N_k` (Huang et al. (2024), eq. (6.2), with the 1/2 convention).

    Parameters
    ----------
    manifold : Manifold
        The manifold the data lie on.
    agents_data : sequence of array_like
        One array of points per agent, shape ``(N_i, *manifold.ambient_shape)``.
    x_star : array_like, optional
        The optimum when it is known in closed form (flat space: the weighted mean); otherwise
        :meth:`optimum` computes the Karcher mean.

    Raises
    ------
    ValueError
        If a data point is not on the manifold or the data are malformed.
    """

    def __init__(self, manifold, agents_data, x_star=None):
        self.manifold = manifold
        data = agent_arrays("FrechetMean", "agents_data", agents_data, manifold.ambient_shape)
        for i, A in enumerate(data):
            for j in range(A.shape[0]):
                manifold.check_point(A[j], where=f"FrechetMean (agent {i}, sample {j})")
        self.data = data
        self.N_i = [a.shape[0] for a in data]
        self.p = agent_weights(self.N_i, "samples")
        self._x_star = None if x_star is None else manifold.check_point(x_star, where="FrechetMean")

    def _f_ij(self, x, i, j):
        return 0.5 * self.manifold.dist(x, self.data[i][j]) ** 2

    def _rgrad_ij(self, x, i, j):
        return -self.manifold.log(x, self.data[i][j])

    def optimum(self):
        pts = [a for A in self.data for a in A]
        w = [self.p[i] / self.N_i[i] for i in range(self.N) for _ in range(self.N_i[i])]
        return karcher_mean(self.manifold, pts, w, tol=1e-12)[0]
