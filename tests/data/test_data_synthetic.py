"""Synthetic generators: spectra from the construction, Wishart bound and mean, 002's Gaussian kPCA data."""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds.spd import SPD
from prirfed.reference.data.synthetic import (
    EIGENGAP_VARIANTS,
    bounded_wishart,
    eigengap_data,
    eigengap_singular_values,
    federated_eigengap_data,
    kpca_gaussian_data,
    random_column_orthonormal,
    wishart_identity,
)


# ---------------------------------------------------------------- eigengap (001 §5.1, 000 §6.1)


def test_singular_values_as_printed_paper():
    """Known answer: Σ = diag(1, 1-1.1ν, 1-1.2ν, 1-1.3ν, 1-1.4ν, |y|/(d+1)) with y the rng's normals."""
    nu, d = 1e-3, 24
    s = eigengap_singular_values(d, nu, np.random.default_rng(5), "paper")
    y = np.random.default_rng(5).standard_normal(d + 1 - 5)
    assert s.shape == (d + 1,)
    assert np.array_equal(s[:5], [1.0, 1 - 1.1 * nu, 1 - 1.2 * nu, 1 - 1.3 * nu, 1 - 1.4 * nu])
    assert np.array_equal(s[5:], np.abs(y) / (d + 1))


def test_singular_values_authors_code():
    """Known answer: pca_sphere.m's D = [1, 1-ν, 1-1.1ν, …, 1-1.4ν, |g|/d_amb] (ERRATA lead 13)."""
    nu, d = 1e-3, 49
    s = eigengap_singular_values(d, nu, np.random.default_rng(5), "authors_code")
    y = np.random.default_rng(5).standard_normal(d + 1 - 6)
    assert np.array_equal(s[:6], [1.0, 1 - nu, 1 - 1.1 * nu, 1 - 1.2 * nu, 1 - 1.3 * nu, 1 - 1.4 * nu])
    assert np.array_equal(s[6:], np.abs(y) / (d + 1))


@given(
    variant=st.sampled_from(sorted(EIGENGAP_VARIANTS)),
    d=st.integers(5, 30),
    extra=st.integers(0, 40),
    nu=st.floats(1e-4, 0.5),
    seed=st.integers(0, 2**32 - 1),
)
def test_spectrum_of_Z_and_A_is_the_construction(variant, d, extra, nu, seed):
    """Singular values of Z are Σ; eigenvalues of A = ZᵀZ/n are σ²/n; V's first row is the top eigenvector."""
    n = d + 1 + extra
    data = eigengap_data(n, d, nu, np.random.default_rng(seed), variant)
    assert data.Z.shape == (n, d + 1)
    sv = np.linalg.svd(data.Z, compute_uv=False)
    assert np.allclose(sv, np.sort(data.sigma)[::-1], rtol=0, atol=1e-12)
    ev = scipy.linalg.eigh(data.A, eigvals_only=True)[::-1]
    assert np.allclose(ev, np.sort(data.sigma) [::-1] ** 2 / n, rtol=0, atol=1e-13)
    assert np.allclose(ev, data.eigenvalues, rtol=0, atol=1e-13)
    # U and V orthonormal
    assert np.allclose(data.U.T @ data.U, np.eye(d + 1), atol=1e-12)
    assert np.allclose(data.V @ data.V.T, np.eye(d + 1), atol=1e-12)
    if np.argmax(data.sigma) == 0 and data.sigma[0] - np.sort(data.sigma)[-2] > 1e-6:
        v = data.leading_eigenvector
        assert np.allclose(data.A @ v, data.eigenvalues[0] * v, atol=1e-12)


def test_eigengap_of_A_per_variant():
    """λ1 − λ2 of A: paper (1 − (1 − 1.1ν)²)/n, code (1 − (1 − ν)²)/n — neither is ν (see data_generators.md)."""
    nu, d, n = 1e-3, 24, 500
    for variant, c in (("paper", 1.1), ("authors_code", 1.0)):
        data = eigengap_data(n, d, nu, np.random.default_rng(11), variant)
        assert data.eigengap == pytest.approx((1 - (1 - c * nu) ** 2) / n, rel=1e-12, abs=0)
        ev = np.linalg.eigvalsh(data.A)[::-1]
        assert ev[0] - ev[1] == pytest.approx((1 - (1 - c * nu) ** 2) / n, rel=1e-6, abs=0)


def test_federated_agents_have_their_own_factors():
    agents = federated_eigengap_data([30, 40, 50], 9, 1e-2, np.random.default_rng(3))
    assert [a.Z.shape for a in agents] == [(30, 10), (40, 10), (50, 10)]
    assert np.max(np.abs(agents[0].V - agents[1].V)) > 0.1  # independent random factors, not a copy


def test_column_orthonormal_is_haar_sign_fixed():
    """The first column of a Haar 3x3 orthogonal matrix is uniform on S^2: E[q_1] = 0, E[q_1 q_1ᵀ] = I/3.

    2000 draws; each entry of the sample second moment has sd ≤ 0.02, threshold 0.1 (5 sd), false alarm < 1e-5.
    """
    rng = np.random.default_rng(2)
    Q = np.array([random_column_orthonormal(3, 3, rng)[:, 0] for _ in range(2000)])
    assert np.allclose(Q.mean(0), 0, atol=0.1)
    assert np.allclose(Q.T @ Q / len(Q), np.eye(3) / 3, atol=0.1)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda r: eigengap_data(10, 24, 1e-3, r), "n >= d \\+ 1"),
        (lambda r: eigengap_data(100, 24, 0.9, r), "nu must lie"),
        (lambda r: eigengap_data(100, 24, 1e-3, r, "shamir"), "unknown variant"),
        (lambda r: eigengap_data(100, 3, 1e-3, r), "d must be >= 4"),
        (lambda r: eigengap_data(100, 4, 1e-3, r, "authors_code"), "d must be >= 5"),
        (lambda r: random_column_orthonormal(2, 3, r), "cols > rows by 1"),
        (lambda r: eigengap_data(100, 24, 1e-3, np.random), "numpy.random.Generator"),
    ],
)
def test_eigengap_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call(np.random.default_rng(0))


# ---------------------------------------------------------------- Wishart (001 §5.2, 000 §6.2)


def _airm_dist(X, Y):
    """Affine-invariant distance from the generalised eigenvalues of (Y, X): independent of the code."""
    lam = scipy.linalg.eigh(Y, X, eigvals_only=True)
    return float(np.sqrt(np.sum(np.log(lam) ** 2)))


@pytest.mark.parametrize("r, D_W", [(2, 1.0), (2, 0.5), (3, 1.5)])
def test_bounded_wishart_within_the_bound(r, D_W):
    out = bounded_wishart(300, r, D_W, np.random.default_rng(r))
    M = SPD(r)
    assert out.X.shape == (300, r, r)
    for X in out.X:
        assert np.allclose(X, X.T, atol=0)
        assert np.linalg.eigvalsh(X)[0] > 0
        assert _airm_dist(np.eye(r), X) < D_W
        assert M.dist(np.eye(r), X) < D_W * (1 + 1e-12)  # the project's SPD manifold agrees
    assert out.draws >= 300


def test_bounded_wishart_is_the_filtered_raw_stream():
    """Known answer from the construction: accepted = raw draws with dist ≥ D_W removed, in order."""
    out = bounded_wishart(50, 2, 1.0, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    raw = [wishart_identity(2, rng) for _ in range(out.draws)]
    kept = [X for X in raw if _airm_dist(np.eye(2), X) < 1.0]
    assert len(kept) == 50
    assert np.array_equal(np.array(kept), out.X)


@pytest.mark.parametrize("r", [2, 3, 9])
def test_unrejected_wishart_mean_is_identity(r):
    """E[W(I/r, r)] = I. Each entry's sample mean over m = 20000 draws has sd sqrt(2/(r m)) (diagonal)
    or sqrt(1/(r m)); the 5-sd threshold has two-sided false-alarm ≤ 5.8e-7 per entry, ≤ 3e-5 for all 45."""
    m = 20000
    rng = np.random.default_rng(100 + r)
    S = np.zeros((r, r))
    for _ in range(m):
        S += wishart_identity(r, rng)
    mean = S / m
    sd = np.sqrt(np.where(np.eye(r) == 1, 2.0, 1.0) / (r * m))
    assert np.all(np.abs(mean - np.eye(r)) < 5 * sd)


def test_wishart_bad_input():
    with pytest.raises(ValueError, match="D_W must be finite and > 0"):
        bounded_wishart(10, 2, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="only 0 of 5 samples accepted after 5 draws"):
        bounded_wishart(5, 5, 0.01, np.random.default_rng(0), max_draws=5)
    with pytest.raises(ValueError, match="r must be >= 1"):
        wishart_identity(0, np.random.default_rng(0))


# ---------------------------------------------------------------- Gaussian kPCA (002 §5.2)


def test_kpca_gaussian_data_known_construction():
    """A_i = X_i X_iᵀ and X_i are the rng's standard normals in order (d×p each)."""
    data = kpca_gaussian_data(3, 7, 5, np.random.default_rng(4))
    rng = np.random.default_rng(4)
    for Xi, Ai in zip(data.X, data.A):
        assert np.array_equal(Xi, rng.standard_normal((5, 7)))
        assert np.allclose(Ai, Xi @ Xi.T, rtol=1e-15, atol=0)
        assert np.array_equal(Ai, Ai.T)


def test_kpca_gaussian_mean():
    """E[A_i] = p I (002 does not divide by p). 200 agents with p = 50, d = 4: entries of the average of
    A_i/p have sd ≤ sqrt(2/(p·200)) = 0.014; threshold 0.08 (> 5.6 sd): false alarm < 1e-6."""
    data = kpca_gaussian_data(200, 50, 4, np.random.default_rng(8))
    M = sum(data.A) / (200 * 50)
    assert np.allclose(M, np.eye(4), atol=0.08)


def test_kpca_bad_input():
    with pytest.raises(ValueError, match="p must be >= 1"):
        kpca_gaussian_data(2, 0, 3, np.random.default_rng(0))
