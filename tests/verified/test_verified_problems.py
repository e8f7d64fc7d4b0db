"""Verified problem gradients (prirfed.verified.problems) equal their reference twins.

The reference classes (prirfed.reference.problems) are the oracle: they are checked against
finite differences, closed forms and mpmath in tests/problems/. Here the Numba kernels must agree
with them entry for entry, to a relative tolerance of 1e-12 scaled by the size of the terms
(sphere: c ||z||^2; SPD: c (1 + dist(X, Z)) ||X|| cond(X), the error of one eigh-based log).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import SPD as RefSPD
from prirfed.reference.problems.spd_frechet import SPDFrechetMean as RefSPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA as RefSpherePCA
from prirfed.verified.manifolds.sphere import Sphere as VSphere
from prirfed.verified.manifolds.spd import SPD as VSPD
from prirfed.verified.problems import SPDFrechetMean, SpherePCA

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def sphere_pair(seed, paper):
    rng = np.random.default_rng(seed)
    D = int(rng.integers(2, 7))
    N = 1 if paper == "001" else int(rng.integers(1, 4))
    scale = 10.0 ** rng.uniform(-2, 2)
    Z = [scale * rng.standard_normal((int(rng.integers(1, 6)), D)) for _ in range(N)]
    return RefSpherePCA(Z, paper), SpherePCA(Z, paper), rng


def spd_pair(seed, c):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5))
    M = RefSPD(n)
    N = int(rng.integers(1, 4))
    Z = [np.stack([M.random_point(rng) for _ in range(int(rng.integers(1, 5)))]) for _ in range(N)]
    return RefSPDFrechetMean(Z, c=c), SPDFrechetMean(Z, c=c), rng


@given(seed=seeds, paper=st.sampled_from(["000", "001", "002"]))
def test_sphere_pca_gradients_equal_reference(seed, paper):
    """rgrad_ij, rgrad_batch, rgrad_i, grad_sample and rgrad agree to 1e-12 c ||z||^2."""
    ref, ver, rng = sphere_pair(seed, paper)
    assert isinstance(ver.manifold, VSphere)
    x = ref.manifold.random_point(rng)
    for i in range(ref.N):
        zmax = float(np.max(np.sum(ref.Z[i] ** 2, axis=1)))
        atol = 1e-12 * ref.c[i] * zmax
        for j in range(ref.N_i[i]):
            np.testing.assert_allclose(ver.rgrad_ij(x, i, j), ref.rgrad_ij(x, i, j), rtol=0, atol=atol)
            np.testing.assert_allclose(ver.grad_sample(x, i, j), ref.grad_sample(x, i, j), rtol=0, atol=atol)
        J = rng.permutation(ref.N_i[i])[: int(rng.integers(1, ref.N_i[i] + 1))]
        np.testing.assert_allclose(ver.rgrad_batch(x, i, J), ref.rgrad_batch(x, i, J), rtol=0, atol=atol)
        np.testing.assert_allclose(ver.rgrad_i(x, i), ref.rgrad_i(x, i), rtol=0, atol=atol)
    zall = max(float(np.max(np.sum(z**2, axis=1))) * c for z, c in zip(ref.Z, ref.c))
    np.testing.assert_allclose(ver.rgrad(x), ref.rgrad(x), rtol=0, atol=1e-12 * zall)


@given(seed=seeds, c=st.sampled_from([1.0, 0.5]))
def test_spd_frechet_gradients_equal_reference(seed, c):
    """rgrad_ij, rgrad_batch, rgrad_i and rgrad agree to 1e-12 c (1 + dist) ||X|| cond(X) (entrywise)."""
    ref, ver, rng = spd_pair(seed, c)
    assert isinstance(ver.manifold, VSPD)
    X = ref.manifold.random_point(rng)
    lam = np.linalg.eigvalsh(X)
    base = 1e-12 * c * lam[-1] * (lam[-1] / lam[0])
    for i in range(ref.N):
        dmax = max(ref.manifold.dist(X, ref.Z[i][j]) for j in range(ref.N_i[i]))
        atol = base * (1.0 + dmax)
        for j in range(ref.N_i[i]):
            G = ver.rgrad_ij(X, i, j)
            np.testing.assert_array_equal(G, G.T)
            np.testing.assert_allclose(G, ref.rgrad_ij(X, i, j), rtol=0, atol=atol)
        J = rng.permutation(ref.N_i[i])[: int(rng.integers(1, ref.N_i[i] + 1))]
        np.testing.assert_allclose(ver.rgrad_batch(X, i, J), ref.rgrad_batch(X, i, J), rtol=0, atol=atol)
        np.testing.assert_allclose(ver.rgrad_i(X, i), ref.rgrad_i(X, i), rtol=0, atol=atol)


def test_spd_gradient_is_minus_2c_log_at_a_closed_form():
    """Commuting case: X = diag(a), Z = diag(b): grad = -2 c diag(a log(b/a)) (closed form)."""
    a, b = np.array([2.0, 0.5]), np.array([3.0, 0.25])
    P = SPDFrechetMean([np.diag(b)[None]], c=0.5)
    np.testing.assert_allclose(P.rgrad_ij(np.diag(a), 0, 0), np.diag(-a * np.log(b / a)), rtol=1e-14, atol=1e-15)


def test_sphere_gradient_closed_form():
    """x = e_0, z = (1, 1): a = 1, grad = -2 (z - x) = (0, -2) (closed form)."""
    P = SpherePCA([np.array([[1.0, 1.0]])])
    np.testing.assert_array_equal(P.rgrad_ij(np.array([1.0, 0.0]), 0, 0), np.array([-0.0, -2.0]))


def test_bad_input_raises_naming_the_method():
    P = SpherePCA([np.ones((2, 3))])
    with pytest.raises(ValueError, match="SpherePCA.rgrad_ij"):
        P.rgrad_ij(np.array([1.0, 1.0, 0.0]), 0, 0)
    with pytest.raises(ValueError, match="SpherePCA.rgrad_batch"):
        P.rgrad_batch(np.array([1.0, 0.0, 0.0]), 0, [5])
    Q = SPDFrechetMean([np.eye(2)[None]])
    with pytest.raises(ValueError, match="SPDFrechetMean.rgrad_i"):
        Q.rgrad_i(np.array([[1.0, 2.0], [2.0, 1.0]]), 0)


# ---------------------------------------------------------------------------- Stiefel kPCA (002 (3))
def kpca_pair(seed, weights):
    from prirfed.reference.problems.stiefel_kpca import StiefelKPCA as RefStiefelKPCA
    from prirfed.verified.problems import StiefelKPCA

    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    r = int(rng.integers(1, d))
    scale = 10.0 ** rng.uniform(-2, 2)
    Z = [scale * rng.standard_normal((int(rng.integers(1, 6)), d)) for _ in range(int(rng.integers(1, 4)))]
    return RefStiefelKPCA(Z, r, weights), StiefelKPCA(Z, r, weights), rng


@given(seed=seeds, weights=st.sampled_from(["uniform", "samples"]))
def test_stiefel_kpca_gradients_equal_reference(seed, weights):
    """rgrad_ij, rgrad_batch, rgrad_i (the A_i form) and rgrad agree to 1e-12 c ||z||^2 (entrywise);
    the verified class carries the verified Stiefel manifold."""
    from prirfed.verified.manifolds.stiefel import Stiefel as VStiefel

    ref, ver, rng = kpca_pair(seed, weights)
    assert isinstance(ver.manifold, VStiefel)
    X = ref.manifold.random_point(rng)
    for i in range(ref.N):
        zmax = float(np.max(np.sum(ref.Z[i] ** 2, axis=1)))
        atol = 1e-12 * ref.c[i] * zmax * ref.d
        for j in range(ref.N_i[i]):
            np.testing.assert_allclose(ver.rgrad_ij(X, i, j), ref.rgrad_ij(X, i, j), rtol=0, atol=atol)
        J = rng.permutation(ref.N_i[i])[: int(rng.integers(1, ref.N_i[i] + 1))]
        np.testing.assert_allclose(ver.rgrad_batch(X, i, J), ref.rgrad_batch(X, i, J), rtol=0, atol=atol)
        np.testing.assert_allclose(ver.rgrad_i(X, i), ref.rgrad_i(X, i), rtol=0, atol=atol)
    zall = max(float(np.max(np.sum(z**2, axis=1))) * c for z, c in zip(ref.Z, ref.c)) * ref.d
    np.testing.assert_allclose(ver.rgrad(X), ref.rgrad(X), rtol=0, atol=1e-12 * zall)


def test_stiefel_kpca_gradient_closed_form():
    """St(3, 2), X = [e_0, e_1], z = (1, 1, 1), N_i = 1 (c = 1/2): b = X^T z = (1, 1),
    grad = -2c (I - X X^T) z b^T = -e_2 (1, 1) (closed form: 002 (3) with A = z z^T)."""
    from prirfed.verified.problems import StiefelKPCA

    P = StiefelKPCA([np.array([[1.0, 1.0, 1.0]])], 2)
    X = np.eye(3)[:, :2]
    want = np.array([[0.0, 0.0], [0.0, 0.0], [-1.0, -1.0]])
    np.testing.assert_allclose(P.rgrad_ij(X, 0, 0), want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(P.rgrad_i(X, 0), want, rtol=0, atol=1e-15)
