"""Synthetic data of the papers' experiments (see proofs_notes/data_generators.md).

- :func:`eigengap_data` — the sphere-PCA samples of Han et al. (2024) §5.1 and Huang et al. (2024) §6.1 (after Shamir 2015),
  in two named variants: ``"paper"`` (the printed Σ, the default) and ``"authors_code"`` (the Σ
  of DP-RiemOpt ``pca_sphere.m``; see the errata page).
- :func:`wishart_identity` and :func:`bounded_wishart` — SPD samples ``W(I_r/r, r)`` kept only
  inside the affine-invariant ball ``dist(I, X) < D_W`` (Han et al. (2024) §5.2, Huang et al. (2024) §6.2, after Reimherr,
  Bharath & Soto 2021).
- :func:`kpca_gaussian_data` — the Gaussian kPCA data of Li and Ma (2023) §5.2 (``X_i`` with i.i.d. N(0, 1)
  entries, ``A_i = X_i X_iᵀ``).

All randomness comes from the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "EIGENGAP_VARIANTS",
    "eigengap_singular_values",
    "random_column_orthonormal",
    "EigengapData",
    "eigengap_data",
    "federated_eigengap_data",
    "wishart_identity",
    "spd_dist_to_identity",
    "BoundedWishart",
    "bounded_wishart",
    "KPCAData",
    "kpca_gaussian_data",
]

#: The fixed (non-random) leading singular values of Σ, as multiples of ν subtracted from 1.
#: "paper": ``Σ = diag(1, 1 − 1.1ν, …, 1 − 1.4ν, |y_1|/(d+1), …)`` (Han et al. (2024) §5.1, Huang et al. (2024) §6.1 as printed)
#: "authors_code": ``Σ = diag(1, 1 − ν, 1 − 1.1ν, …, 1 − 1.4ν, |y_1|/(d+1), …)`` (the authors' pca_sphere.m)
EIGENGAP_VARIANTS = {
    "paper": (0.0, 1.1, 1.2, 1.3, 1.4),
    "authors_code": (0.0, 1.0, 1.1, 1.2, 1.3, 1.4),
}


def _check_rng(where: str, rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")


def _int_at_least(where: str, name: str, v, low: int) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{where}: {name} must be an integer (got {v!r})")
    if int(v) < low:
        raise ValueError(f"{where}: {name} must be >= {low} (got {int(v)})")
    return int(v)


def _variant(where: str, variant: str) -> tuple[float, ...]:
    if variant not in EIGENGAP_VARIANTS:
        raise ValueError(f"{where}: unknown variant {variant!r} (choose one of {sorted(EIGENGAP_VARIANTS)})")
    return EIGENGAP_VARIANTS[variant]


def eigengap_singular_values(d: int, nu: float, rng: np.random.Generator, variant: str = "paper") -> np.ndarray:
    """Diagonal of Σ ∈ R^{(d+1)×(d+1)} of Han et al. (2024) §5.1 / Huang et al. (2024) §6.1, in the order written.

    ``variant="paper"``: ``(1, 1 − 1.1ν, 1 − 1.2ν, 1 − 1.3ν, 1 − 1.4ν, |y_1|/(d+1), …, |y_{d−4}|/(d+1))``;
    ``variant="authors_code"``: ``(1, 1 − ν, 1 − 1.1ν, …, 1 − 1.4ν, |y_1|/(d+1), …, |y_{d−5}|/(d+1))``,
    with ``y_k ~ N(0, 1)`` i.i.d. (the code's ``d`` is the ambient size, our ``d + 1``).

    Parameters
    ----------
    d : int
        Sphere dimension; ``d + 1`` values are returned (at least the number of fixed values).
    nu : float
        Eigengap parameter, ``0 < ν < 1/1.4`` (all fixed values positive).
    rng : numpy.random.Generator
        Source of the ``y_k``.
    variant : str, optional
        ``"paper"`` (default) or ``"authors_code"`` (:data:`EIGENGAP_VARIANTS`).

    Returns
    -------
    numpy.ndarray
        The ``d + 1`` singular values.

    Raises
    ------
    ValueError
        If ``variant`` is unknown, ``d`` is not an integer large enough for the fixed values, ``nu``
        is not in (0, 1/1.4), or ``rng`` is not a Generator.
    """
    where = "eigengap_singular_values"
    fixed = _variant(where, variant)
    d = _int_at_least(where, "d", d, len(fixed) - 1)
    nu = float(nu)
    if not (np.isfinite(nu) and 0.0 < nu < 1.0 / 1.4):
        raise ValueError(f"{where}: the eigengap nu must lie in (0, 1/1.4) so that 1 - 1.4*nu > 0 (got nu={nu})")
    _check_rng(where, rng)
    head = np.array([1.0 - c * nu for c in fixed])
    y = rng.standard_normal(d + 1 - len(fixed))
    return np.concatenate([head, np.abs(y) / (d + 1)])


def random_column_orthonormal(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """Haar-distributed ``rows × cols`` matrix with orthonormal columns (QR of a Gaussian, signs fixed by diag(R) > 0).

    Parameters
    ----------
    rows, cols : int
        Shape, ``1 <= cols <= rows``.
    rng : numpy.random.Generator
        Source of the Gaussian matrix.

    Returns
    -------
    numpy.ndarray
        ``(rows, cols)`` with orthonormal columns.

    Raises
    ------
    ValueError
        If a size is not an integer >= 1, ``cols > rows``, or ``rng`` is not a Generator.
    """
    where = "random_column_orthonormal"
    rows = _int_at_least(where, "rows", rows, 1)
    cols = _int_at_least(where, "cols", cols, 1)
    if cols > rows:
        raise ValueError(f"{where}: cannot have {cols} orthonormal columns in R^{rows} (cols > rows by {cols - rows})")
    _check_rng(where, rng)
    G = rng.standard_normal((rows, cols))
    Q, R = np.linalg.qr(G)
    s = np.sign(np.diag(R))
    s[s == 0] = 1.0
    return Q * s


@dataclass(frozen=True)
class EigengapData:
    """``Z = U Σ V`` (rows ``z_jᵀ``), with the factors that make its spectrum a known answer.

    ``A = ZᵀZ / n = Vᵀ diag(σ²/n) V`` (the matrix of (2) in Han et al. (2024) and of f_i in (6.1) of
    Huang et al. (2024)), so the eigenvalues of ``A`` are ``σ_k² / n`` and, when ``σ_1 = 1`` is the
    strict maximum, the leading eigenvector is the first row of ``V`` (up to sign).

    Parameters
    ----------
    Z : numpy.ndarray
        ``(n, d+1)`` samples.
    sigma : numpy.ndarray
        The singular values.
    U : numpy.ndarray
        ``(n, d+1)`` left factor, orthonormal columns.
    V : numpy.ndarray
        ``(d+1, d+1)`` orthogonal right factor.
    variant : str
        The variant of :func:`eigengap_singular_values`.
    nu : float
        The eigengap parameter.
    """

    Z: np.ndarray
    sigma: np.ndarray
    U: np.ndarray
    V: np.ndarray
    variant: str
    nu: float

    @property
    def A(self) -> np.ndarray:
        """``A = (1/n) Σ_j z_j z_jᵀ = ZᵀZ / n`` (Theorem 6 of Han et al. (2024))."""
        return self.Z.T @ self.Z / self.Z.shape[0]

    @property
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of ``A``, descending: ``sort(σ²)/n`` (exact, from the construction)."""
        return np.sort(self.sigma**2)[::-1] / self.Z.shape[0]

    @property
    def leading_eigenvector(self) -> np.ndarray:
        """Row of ``V`` that belongs to the largest ``σ_k`` (the minimiser of (2) of Han et al. (2024), up to sign)."""
        return self.V[int(np.argmax(self.sigma))].copy()

    @property
    def eigengap(self) -> float:
        """``λ_1 − λ_2`` of ``A`` (the ν of Theorem 6 of Han et al. (2024) is this number; see the note)."""
        ev = self.eigenvalues
        return float(ev[0] - ev[1])


def eigengap_data(n: int, d: int, nu: float, rng: np.random.Generator, variant: str = "paper") -> EigengapData:
    """Samples ``Z = U Σ V ∈ R^{n×(d+1)}`` of Han et al. (2024) §5.1 (and of one agent in Huang et al. (2024) §6.1).

    ``U`` is ``n × (d+1)`` and ``V`` is ``(d+1) × (d+1)``, both Haar random with orthonormal
    columns; ``Σ`` from :func:`eigengap_singular_values`. So ``Z`` has singular values ``Σ`` ("Z has
    the same spectrum as Σ", Han et al. (2024)). Draw order: Σ's Gaussians, U, V.

    Parameters
    ----------
    n : int
        Number of samples, ``n >= d + 1``.
    d : int
        Sphere dimension.
    nu : float
        Eigengap parameter in (0, 1/1.4).
    rng : numpy.random.Generator
        Source of all draws.
    variant : str, optional
        ``"paper"`` (default) or ``"authors_code"``.

    Returns
    -------
    EigengapData
        The samples and their factors.

    Raises
    ------
    ValueError
        If ``n < d + 1`` or not an integer >= 1, or as :func:`eigengap_singular_values`.
    """
    where = "eigengap_data"
    n = _int_at_least(where, "n", n, 1)
    sigma = eigengap_singular_values(d, nu, rng, variant)
    if n < d + 1:
        raise ValueError(f"{where}: need n >= d + 1 samples for column-orthonormal U (n={n}, d+1={d + 1})")
    U = random_column_orthonormal(n, d + 1, rng)
    V = random_column_orthonormal(d + 1, d + 1, rng)
    Z = (U * sigma) @ V
    return EigengapData(Z=Z, sigma=sigma, U=U, V=V, variant=variant, nu=float(nu))


def federated_eigengap_data(sizes, d: int, nu: float, rng: np.random.Generator, variant: str = "paper") -> list[EigengapData]:
    r"""One independent :func:`eigengap_data` per agent: ``Z_i = U_i Σ_i V_i`` (Huang et al. (2024) §6.1, as printed).

    Huang et al. (2024) draw ``Σ_i, U_i, V_i`` per agent, so agents have different leading
    eigenvectors (heterogeneous data); the global ``A = Σ_i p_i Z_iᵀZ_i / N_i`` has no closed-form
    spectrum.

    Parameters
    ----------
    sizes : sequence of int
        The agents' sample counts :math:`N_i \ge d + 1`.
    d : int
        Sphere dimension.
    nu : float
        Eigengap parameter in (0, 1/1.4).
    rng : numpy.random.Generator
        Source of all draws, agent after agent.
    variant : str, optional
        ``"paper"`` (default) or ``"authors_code"``.

    Returns
    -------
    list of EigengapData
        One per agent.

    Raises
    ------
    ValueError
        If ``sizes`` is empty, or as :func:`eigengap_data`.
    """
    where = "federated_eigengap_data"
    sizes = list(sizes)
    if not sizes:
        raise ValueError(f"{where}: sizes is empty (need at least one agent)")
    return [eigengap_data(_int_at_least(where, f"sizes[{i}]", Ni, 1), d, nu, rng, variant) for i, Ni in enumerate(sizes)]


def wishart_identity(r: int, rng: np.random.Generator) -> np.ndarray:
    """One draw of the Wishart law ``W(I_r / r, r)``: ``X = Σ_{k=1}^r g_k g_kᵀ``, ``g_k ~ N(0, I_r/r)``.

    ``E[X] = r · I_r / r = I_r``; ``Var X_ii = 2/r``, ``Var X_ij = 1/r`` (i ≠ j). With ``r``
    degrees of freedom in dimension ``r`` the draw is SPD with probability one.

    Parameters
    ----------
    r : int
        Dimension and degrees of freedom, >= 1.
    rng : numpy.random.Generator
        Source of the Gaussians.

    Returns
    -------
    numpy.ndarray
        The symmetric ``(r, r)`` draw.

    Raises
    ------
    ValueError
        If ``r`` is not an integer >= 1 or ``rng`` is not a Generator.
    """
    where = "wishart_identity"
    r = _int_at_least(where, "r", r, 1)
    _check_rng(where, rng)
    G = rng.standard_normal((r, r)) / np.sqrt(r)
    X = G @ G.T
    return 0.5 * (X + X.T)


def spd_dist_to_identity(X: np.ndarray) -> float:
    """Affine-invariant distance ``dist(I, X) = ‖log X‖_F = (Σ_k log² λ_k(X))^{1/2}``.

    Parameters
    ----------
    X : numpy.ndarray
        Square matrix (its symmetric part is used).

    Returns
    -------
    float
        The distance.

    Raises
    ------
    ValueError
        If ``X`` is not positive definite.
    """
    lam = np.linalg.eigvalsh(0.5 * (X + X.T))
    if lam[0] <= 0:
        raise ValueError(f"spd_dist_to_identity: X is not positive definite (smallest eigenvalue {lam[0]:.3e})")
    return float(np.sqrt(np.sum(np.log(lam) ** 2)))


@dataclass(frozen=True)
class BoundedWishart:
    """``n`` accepted samples (shape ``(n, r, r)``), the bound and the number of Wishart draws used.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, r, r)`` accepted samples.
    D_W : float
        The radius of the ball around the identity.
    draws : int
        Wishart draws consumed (accepted and rejected).
    """

    X: np.ndarray
    D_W: float
    draws: int

    @property
    def acceptance_rate(self) -> float:
        return self.X.shape[0] / self.draws


def bounded_wishart(n: int, r: int, D_W: float, rng: np.random.Generator, *, max_draws: int | None = None) -> BoundedWishart:
    """``n`` draws of ``W(I_r/r, r)`` conditioned on ``dist(I_r, X) < D_W`` (rejection sampling).

    Han et al. (2024) §5.2 (``r = 2``, ``D_W = 1``) and Huang et al. (2024) §6.2 (``W(I_d/d, d)``,
    ``D_W = 1``) after Reimherr, Bharath and Soto (2021); ``mean_spd.m`` of the authors keeps a draw
    when ``M.dist(eye(r), X) < tol`` with ``tol = D_W``. So ``D_W`` is the *radius* of a ball around
    ``I`` (pairwise distances are at most ``2 D_W``). Draws are consumed in order: the accepted
    samples are the raw :func:`wishart_identity` sequence with the far ones removed.

    Parameters
    ----------
    n : int
        Samples wanted, >= 1.
    r : int
        Dimension, >= 1.
    D_W : float
        Radius, finite and > 0.
    rng : numpy.random.Generator
        Source of the draws.
    max_draws : int or None, optional
        Stop after this many draws (default ``1000 n + 1000``; at least ``n``).

    Returns
    -------
    BoundedWishart
        The accepted samples and the draw count.

    Raises
    ------
    ValueError
        If an argument is out of range, ``rng`` is not a Generator, or fewer than ``n`` draws are
        accepted within ``max_draws``.
    """
    where = "bounded_wishart"
    n = _int_at_least(where, "n", n, 1)
    r = _int_at_least(where, "r", r, 1)
    D_W = float(D_W)
    if not (np.isfinite(D_W) and D_W > 0):
        raise ValueError(f"{where}: D_W must be finite and > 0 (got {D_W})")
    _check_rng(where, rng)
    if max_draws is None:
        max_draws = 1000 * n + 1000
    max_draws = _int_at_least(where, "max_draws", max_draws, n)
    out = np.empty((n, r, r))
    k = 0
    draws = 0
    while k < n:
        if draws >= max_draws:
            raise ValueError(
                f"{where}: only {k} of {n} samples accepted after {draws} draws (D_W={D_W} is too small for r={r}; raise max_draws or D_W)"
            )
        X = wishart_identity(r, rng)
        draws += 1
        if spd_dist_to_identity(X) < D_W:
            out[k] = X
            k += 1
    return BoundedWishart(X=out, D_W=D_W, draws=draws)


@dataclass(frozen=True)
class KPCAData:
    """Agents' data ``X_i ∈ R^{d×p}`` (columns are points) and ``A_i = X_i X_iᵀ`` (Li and Ma (2023) §5.2).

    Parameters
    ----------
    X : list of numpy.ndarray
        The agents' ``(d, p)`` data.
    A : list of numpy.ndarray
        The agents' ``(d, d)`` matrices.
    """

    X: list
    A: list


def kpca_gaussian_data(n: int, p: int, d: int, rng: np.random.Generator) -> KPCAData:
    """Gaussian kPCA data of Li and Ma (2023) §5.2: ``n`` agents, ``X_i ∈ R^{d×p}`` with i.i.d. N(0, 1) entries, ``A_i := X_i X_iᵀ``.

    Li and Ma (2023) use ``d = 100`` (PCA) or ``200`` (kPCA), ``n·p = 10000``; they neither centre
    nor divide by ``p`` (``E[A_i] = p I_d``); the objective (3) is ``f_i(X) = −½ tr(Xᵀ A_i X)``.

    Parameters
    ----------
    n : int
        Number of agents, >= 1.
    p : int
        Points per agent, >= 1.
    d : int
        Dimension, >= 1.
    rng : numpy.random.Generator
        Source of the entries.

    Returns
    -------
    KPCAData
        The agents' data and matrices.

    Raises
    ------
    ValueError
        If a size is not an integer >= 1 or ``rng`` is not a Generator.
    """
    where = "kpca_gaussian_data"
    n = _int_at_least(where, "n", n, 1)
    p = _int_at_least(where, "p", p, 1)
    d = _int_at_least(where, "d", d, 1)
    _check_rng(where, rng)
    Xs = [rng.standard_normal((d, p)) for _ in range(n)]
    As = [0.5 * ((Xi @ Xi.T) + (Xi @ Xi.T).T) for Xi in Xs]
    return KPCAData(X=Xs, A=As)
